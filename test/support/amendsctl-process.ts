/**
 * Runs the built `amendsctl` (bin/amendsctl → dist/) as a child process, the way a user
 * does, and returns its exit code and output. It runs what `npm run build` last built.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageBin, packageRoot, runToEnd } from '../../src/io/process/child-process.js';

export const repoRoot = packageRoot;
const binary = packageBin('amendsctl');
const builtEntry = join(repoRoot, 'dist/cli/amendsctl.js');
/** The guard against a hung amendsctl child (SIGKILL past it), not a bound any test asserts. */
export const runTimeoutMs = 45_000;

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Fails (never skips) when the build is missing. Freshness is not checked here: tsc's
 * incremental build leaves unchanged outputs with old timestamps, so mtimes prove nothing;
 * npm test builds first (scripts/bootstrap.sh), and locally `npm run build` does.
 */
export function requireBuild(): void {
  if (!existsSync(builtEntry)) throw new Error(`${relative(repoRoot, builtEntry)} is missing: run npm run build`);
}

/**
 * `env` replaces the inherited environment entirely (plus PATH), so a test states exactly
 * which AMENDS_* variables the command sees.
 */
export function runAmendsctl(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = runTimeoutMs,
): Promise<ProcessResult> {
  return runChild(process.execPath, [binary, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    timeoutMs,
    label: `amendsctl ${args.join(' ')}`,
  });
}

/** Runs a command from the repository root to its end, collecting its output; SIGKILL past `timeoutMs`. */
export async function runChild(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; timeoutMs: number; label: string },
): Promise<ProcessResult> {
  const { code, stdout, stderr } = await runToEnd(command, args, { ...options, cwd: repoRoot });
  return { code, stdout, stderr };
}

/** The diagnostic contract (cli.md): exactly one line, no stack trace. */
export function isOneLineDiagnostic(stderr: string): boolean {
  const lines = stderr.split('\n').filter((l) => l !== '');
  return lines.length === 1 && !/^\s+at /m.test(stderr);
}

/** Runs `amendsctl ARGS | READER` in bash with pipefail; returns the pipeline's statuses and stderr. */
export function pipeInto(args: string[], reader: string, env: Record<string, string> = {}) {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const result = spawnSync(
    'bash',
    ['--norc', '--noprofile', '-c', `./bin/amendsctl ${quoted} | ${reader}; echo "status \${PIPESTATUS[*]}" >&2`],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
      // stdin not a socket: Debian's bash reads ~/.bashrc when it is (as under rshd).
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: runTimeoutMs,
    },
  );
  const lines = result.stderr.trimEnd().split('\n');
  const status = lines.pop() ?? '';
  return { status, stderr: lines.join('\n'), stdout: result.stdout };
}
