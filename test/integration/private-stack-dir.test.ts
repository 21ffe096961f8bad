/**
 * A private stack's directory is made fresh without harming a stack that runs
 * (src/showcase/private-stack.ts, `PrivateStack.freshDir`). Worktrees share one `.stack`, so two
 * checkouts' chaos runs share `.stack/chaos`: a run that removed the directory before it
 * checked its ports destroyed another checkout's live run. Now a live run's directory is
 * refused, a port in use is refused before anything is removed, and a directory whose run is
 * gone is stopped (stack.sh down with its recorded ports, nothing running here) and emptied.
 * No broker or database is started: the ports are this file's own.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PrivateStack, type PrivateStackOptions } from '../../src/showcase/private-stack.js';

const basePort = Number(process.env.AMENDS_TEST_STACK_DIR_PORT ?? 21092);
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stack directory with a record (as PrivateStack.start writes it) and a file standing for its data. */
function stackDir(ownerPid: number | null): PrivateStackOptions {
  const parent = mkdtempSync(join(tmpdir(), 'amends-test-stack-dir-'));
  cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
  const o = { stackDir: join(parent, '.stack'), basePort, pgPort: basePort + 340 };
  mkdirSync(o.stackDir);
  writeFileSync(join(o.stackDir, 'data-of-a-run'), 'x');
  if (ownerPid !== null) {
    writeFileSync(join(o.stackDir, 'private-stack.json'), JSON.stringify({ ...o, owner_pid: ownerPid }));
  }
  return o;
}

async function listen(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

/** A process that runs until the test ends, and one that has ended: their pids. */
async function livePid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  return child.pid as number;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('a private stack directory made fresh', () => {
  it("refuses a live run's directory in one line, and leaves it as it is", async () => {
    const owner = await livePid();
    const o = stackDir(owner);
    await expect(PrivateStack.freshDir(o)).rejects.toThrow(
      `${o.stackDir} is the stack of a run that is still going (pid ${owner}): wait for it to end, or stop it (kill ${owner}), then start again`,
    );
    expect(existsSync(join(o.stackDir, 'data-of-a-run'))).toBe(true);
  });

  it('refuses a port in use before it removes anything (a run that recorded nothing)', async () => {
    const o = stackDir(null);
    await listen(basePort);
    await expect(PrivateStack.freshDir(o)).rejects.toThrow(`port ${basePort} is in use`);
    expect(existsSync(join(o.stackDir, 'data-of-a-run'))).toBe(true);
  });

  it('stops and empties the directory of a run that is gone', async () => {
    const o = stackDir(await deadPid());
    await PrivateStack.freshDir(o);
    expect(readdirSync(o.stackDir)).toEqual([]);
  }, 60_000);
});
