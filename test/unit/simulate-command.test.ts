/**
 * `amendsctl simulate` run in-process through the real dispatcher (flags, exit codes,
 * diagnostics), over the fixtures of domain.md §7 and over bad input.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CommandIo } from '../../src/cli/command.js';
import { simulateCommand } from '../../src/cli/commands/simulate.js';
import { runExecutable } from '../../src/cli/dispatch.js';
import { demoConfig, workedExampleInput, workedExampleLines } from './worked-example-kit.js';

class Captured extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function simulate(args: string[]) {
  const stdout = new Captured();
  const stderr = new Captured();
  const io: CommandIo = { stdout, stderr, env: {} };
  const code = await runExecutable(
    { program: 'amendsctl', description: 'test', commands: [simulateCommand as never] },
    ['simulate', ...args],
    io,
  );
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const dir = mkdtempSync(join(tmpdir(), 'amends-simulate-'));
const write = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const manifest = write('manifest.json', JSON.stringify({ source_topic: 'amends-demo-source', config: demoConfig }));

describe('amendsctl simulate', () => {
  it('prints the worked example: 10 decisions, then 10 output versions, exit 0', async () => {
    const result = await simulate(['--manifest', manifest, '--file', write('example.jsonl', workedExampleInput)]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${workedExampleLines.join('\n')}\n`);
  });

  it('accepts raw records mixed with fixture lines', async () => {
    const raw = (offset: number, key: string | null, value: string | null) =>
      JSON.stringify({
        partition: 0,
        offset,
        key_b64: key === null ? null : Buffer.from(key).toString('base64'),
        value_b64: value === null ? null : Buffer.from(value).toString('base64'),
      });
    const lines = workedExampleInput.trimEnd().split('\n');
    const input = [
      ...lines.slice(0, 2),
      raw(4, null, '{"schema":1}'),
      raw(6, '{"item":"widget","location":"berlin"}', null),
      lines[2],
    ].join('\n');
    const result = await simulate(['--manifest', manifest, '--file', write('mixed.jsonl', input)]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 5)).toEqual([
      workedExampleLines[0],
      workedExampleLines[1],
      '{"type":"decision","partition":0,"offset":4,"outcome":"SCHEMA","item":null,"location":null,"txn":null,"rev":null}',
      '{"type":"decision","partition":0,"offset":6,"outcome":"MALFORMED","item":null,"location":null,"txn":null,"rev":null}',
      workedExampleLines[2]?.replace('"offset":2', '"offset":7'),
    ]);
  });

  it('prints nothing for an empty file', async () => {
    const result = await simulate(['--manifest', manifest, '--file', write('empty.jsonl', '')]);
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('names a missing file in one line, exit 1', async () => {
    const missing = join(dir, 'nope.jsonl');
    const result = await simulate(['--manifest', manifest, '--file', missing]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`amendsctl simulate: file ${missing}: no such file\n`);
    const noManifest = await simulate(['--manifest', join(dir, 'gone.json'), '--file', missing]);
    expect(noManifest.stderr).toBe(`amendsctl simulate: manifest ${join(dir, 'gone.json')}: no such file\n`);
  });

  it('reports the first bad line with its number, exit 1, printing no results', async () => {
    const lines = workedExampleInput.trimEnd().split('\n');
    const bad = [lines[0], lines[1], '{"key":{"item":"ghost","location":"berlin"},"value":{}}', lines[2]].join('\n');
    const result = await simulate(['--manifest', manifest, '--file', write('bad.jsonl', bad)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('amendsctl simulate: line 3: key ("ghost", "berlin") is not a configured stock key\n');
  });

  it('rejects a file that is not UTF-8 and a manifest that is not valid', async () => {
    const binary = await simulate([
      '--manifest',
      manifest,
      '--file',
      write('binary.jsonl', new Uint8Array([0xff, 0x0a])),
    ]);
    expect(binary.code).toBe(1);
    expect(binary.stderr).toMatch(/^amendsctl simulate: file .*binary\.jsonl: not valid UTF-8\n$/);
    const badManifest = await simulate([
      '--manifest',
      write('bad-manifest.json', '{"source_topic":"t"}'),
      '--file',
      manifest,
    ]);
    expect(badManifest.code).toBe(1);
    expect(badManifest.stderr.split('\n')).toHaveLength(2);
    expect(badManifest.stderr).toMatch(
      /^amendsctl simulate: manifest .*bad-manifest\.json: config: must be a JSON object\n$/,
    );
  });
});
