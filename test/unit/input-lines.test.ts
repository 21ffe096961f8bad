/** Fixture lines (source-load and simulate), raw record lines and simulation input (cli.md). */
import { describe, expect, it } from 'vitest';
import { encodeFixtureFile, encodeFixtureLine } from '../../src/domain/fixture-line.js';
import { parseRawRecordLine } from '../../src/domain/raw-record-line.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import { AmendsError } from '../../src/kernel/amends-error.js';
import { keyText, postText, testConfig } from './ledger-test-kit.js';

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const fixture = (value = postText(), key = keyText()) => `{"key":${key},"value":${value}}`;

function invalid(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AmendsError);
    expect((error as AmendsError).code).toBe('invalid_input');
    return (error as AmendsError).message;
  }
  throw new Error('expected an invalid-input error');
}

describe('encodeFixtureLine', () => {
  it('encodes key and value as canonical JSON and routes by the mapping', () => {
    const encoded = encodeFixtureLine(
      ' { "value" : {"qty":-30, "day":"2026-03-02","txn":"T1","item":"w\\u0069dget"} , "key":{"location":"paris","item":"gadget"} } ',
      3,
      testConfig,
    );
    expect(encoded.line).toBe(3);
    expect(encoded.partition).toBe(1);
    expect(text(encoded.key)).toBe('{"item":"gadget","location":"paris"}');
    expect(text(encoded.value)).toBe('{"day":"2026-03-02","item":"widget","qty":-30,"txn":"T1"}');
  });

  it('does not judge the value as an envelope, but writes numbers canonically', () => {
    const encoded = encodeFixtureLine(
      fixture('{"rev":1.0,"qty":1e2,"schema":-0,"x":[1E0,0.5],"y":null}'),
      1,
      testConfig,
    );
    expect(text(encoded.value)).toBe('{"qty":100,"rev":1,"schema":0,"x":[1,0.5],"y":null}');
  });

  it('rejects what source-load must not publish, naming the line', () => {
    const cases: [string, RegExp][] = [
      ['not json', /^line 7: not strict JSON: /],
      [fixture(postText({}, ['"qty":1'])), /^line 7: not strict JSON: duplicate member "qty" at byte \d+$/],
      ['[1]', /^line 7: a fixture line must be a JSON object, got an array$/],
      [`{"key":${keyText()}}`, /^line 7: missing member "value"$/],
      [`{"value":${postText()}}`, /^line 7: missing member "key"$/],
      [`{"key":${keyText()},"value":${postText()},"partition":0}`, /^line 7: unknown member "partition"/],
      [fixture(postText(), '"widget"'), /^line 7: key must be an object, got a string$/],
      [fixture(postText(), '{"item":"widget","location":"berlin","x":1}'), /^line 7: key has unknown member "x"/],
      [fixture(postText(), '{"item":"widget"}'), /^line 7: key.location must be a string$/],
      [fixture(postText(), '{"item":1,"location":"berlin"}'), /^line 7: key.item must be a string$/],
      [
        fixture(postText(), keyText('ghost', 'berlin')),
        /^line 7: key \("ghost", "berlin"\) is not a configured stock key$/,
      ],
      [fixture('[]'), /^line 7: value must be an object, got an array$/],
      [fixture('null'), /^line 7: value must be an object, got null$/],
      [fixture('{"qty":1e400}'), /^line 7: number 1e400 is outside the range of a JSON double$/],
      [`\ufeff${fixture()}`, /^line 7: not strict JSON: starts with a byte-order mark$/],
    ];
    for (const [line, message] of cases) expect(invalid(() => encodeFixtureLine(line, 7, testConfig))).toMatch(message);
  });

  it('lets a value nest as deep as an envelope may (64 levels)', () => {
    const deep = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    expect(encodeFixtureLine(fixture(deep(64)), 1, testConfig).value.length).toBeGreaterThan(0);
    expect(invalid(() => encodeFixtureLine(fixture(deep(65)), 1, testConfig))).toMatch(/more than 65 nested/);
  });
});

describe('encodeFixtureFile', () => {
  it('encodes every line; a final newline is optional', () => {
    const body = `${fixture()}\n${fixture(postText(), keyText('gadget', 'paris'))}`;
    expect(encodeFixtureFile(body, testConfig).map((l) => [l.line, l.partition])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(encodeFixtureFile(`${body}\n`, testConfig)).toHaveLength(2);
    expect(encodeFixtureFile(`${fixture()}\r\n${fixture()}\r\n`, testConfig)).toHaveLength(2);
    expect(encodeFixtureFile('', testConfig)).toEqual([]);
  });

  it('throws on the first invalid line with its number; blank lines are errors', () => {
    expect(invalid(() => encodeFixtureFile(`${fixture()}\n\n${fixture()}\n`, testConfig))).toBe('line 2: blank line');
    expect(invalid(() => encodeFixtureFile(`${fixture()}\n${fixture()}\n\n`, testConfig))).toBe('line 3: blank line');
    expect(invalid(() => encodeFixtureFile(`${fixture()}\n \n`, testConfig))).toBe('line 2: blank line');
    expect(invalid(() => encodeFixtureFile(`${fixture()}\n{}\nnot json\n`, testConfig))).toBe(
      'line 2: missing member "key"',
    );
  });
});

describe('raw record lines', () => {
  it('decodes strict base64 and null', () => {
    const r = parseRawRecordLine('{"partition":1,"offset":42,"key_b64":"","value_b64":"+/8="}', 4, testConfig);
    expect(r).toEqual({
      line: 4,
      partition: 1,
      offset: 42,
      key: new Uint8Array([]),
      value: new Uint8Array([0xfb, 0xff]),
    });
    const n = parseRawRecordLine('{"value_b64":null,"key_b64":null,"offset":0,"partition":0}', 1, testConfig);
    expect([n.key, n.value]).toEqual([null, null]);
  });

  it('rejects bad members, ranges and non-strict base64', () => {
    const line = (members: string) => () => parseRawRecordLine(`{${members}}`, 9, testConfig);
    const ok = '"key_b64":null,"value_b64":null';
    expect(invalid(line(`"partition":2,"offset":0,${ok}`))).toBe('line 9: partition must be an integer within [0, 1]');
    expect(invalid(line(`"partition":-1,"offset":0,${ok}`))).toMatch(/^line 9: partition must be/);
    expect(invalid(line(`"partition":0,"offset":1.0,${ok}`))).toMatch(/^line 9: offset must be an integer/);
    expect(invalid(line(`"partition":0,"offset":-1,${ok}`))).toMatch(/^line 9: offset must be an integer/);
    expect(invalid(line(`"partition":0,${ok}`))).toBe('line 9: missing member "offset"');
    expect(invalid(line(`"partition":0,"offset":0,${ok},"x":1`))).toBe('line 9: unknown member "x"');
    for (const b64 of ['YQ', 'YR==', 'Y Q==', 'YQ==\\n', '-_8=', 'YQ=']) {
      expect(invalid(line(`"partition":0,"offset":0,"key_b64":"${b64}","value_b64":null`))).toBe(
        'line 9: key_b64 is not strict standard base64',
      );
    }
    expect(invalid(line(`"partition":0,"offset":0,"key_b64":null,"value_b64":5`))).toBe(
      'line 9: value_b64 must be a base64 string or null',
    );
  });
});

describe('simulation input', () => {
  const raw = (partition: number, offset: number) =>
    `{"partition":${partition},"offset":${offset},"key_b64":null,"value_b64":null}`;

  it('counts fixture offsets per partition from 0, after any earlier record of that partition', () => {
    const gadget = fixture(postText(), keyText('gadget', 'paris'));
    const input = [fixture(), gadget, raw(0, 5), fixture(), gadget, raw(1, 9), gadget].join('\n');
    expect(parseSimulationInput(input, testConfig).map((r) => `${r.line}:${r.partition}:${r.offset}`)).toEqual([
      '1:0:0',
      '2:1:0',
      '3:0:5',
      '4:0:6',
      '5:1:1',
      '6:1:9',
      '7:1:10',
    ]);
  });

  it('requires raw offsets to increase per partition', () => {
    expect(invalid(() => parseSimulationInput([raw(0, 3), raw(1, 0), raw(0, 3)].join('\n'), testConfig))).toBe(
      'line 3: offset 3 on partition 0 must be greater than the previous 3',
    );
    expect(invalid(() => parseSimulationInput([fixture(), raw(0, 0)].join('\n'), testConfig))).toMatch(
      /^line 2: offset 0/,
    );
  });

  it('rejects lines that are neither kind', () => {
    expect(invalid(() => parseSimulationInput('{"offset":1}', testConfig))).toMatch(/^line 1: neither a fixture line/);
    expect(invalid(() => parseSimulationInput('[]', testConfig))).toMatch(/^line 1: neither a fixture line/);
    expect(invalid(() => parseSimulationInput(`{"key":${keyText()},"partition":0}`, testConfig))).toMatch(
      /^line 1: neither/,
    );
  });
});
