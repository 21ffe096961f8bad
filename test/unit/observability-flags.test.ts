import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jsonLog, logLevelFrom } from '../../src/io/process/json-log.js';
import { metricsAddressFrom } from '../../src/io/process/metrics-server.js';

describe('--metrics-addr', () => {
  it('is off when unset, the flag winning over AMENDS_METRICS_ADDR', () => {
    expect(metricsAddressFrom(undefined, {})).toBeUndefined();
    expect(metricsAddressFrom('127.0.0.1:9464', { AMENDS_METRICS_ADDR: '0.0.0.0:1' })).toEqual({
      host: '127.0.0.1',
      port: 9464,
    });
    expect(metricsAddressFrom(undefined, { AMENDS_METRICS_ADDR: '[::1]:0' })).toEqual({ host: '::1', port: 0 });
  });

  it('refuses what is not HOST:PORT as a usage error', () => {
    for (const bad of ['9464', 'localhost:', 'localhost:70000', 'a:b:1', ':9464']) {
      expect(() => metricsAddressFrom(bad, {}), bad).toThrow(/expected HOST:PORT/);
    }
  });
});

describe('--log-level', () => {
  it('defaults to info, the flag winning over AMENDS_LOG_LEVEL, and refuses other words', () => {
    expect(logLevelFrom(undefined, {})).toBe('info');
    expect(logLevelFrom('warn', { AMENDS_LOG_LEVEL: 'debug' })).toBe('warn');
    expect(logLevelFrom(undefined, { AMENDS_LOG_LEVEL: 'DEBUG' })).toBe('debug');
    expect(() => logLevelFrom('verbose', {})).toThrow(/expected one of debug, info, warn, error/);
  });
});

describe('JSON log lines', () => {
  it('keep msg, the id field, the fields and an ISO time, one write per line, and drop lines below the level', () => {
    const writes: string[] = [];
    const capture = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = jsonLog(capture, { worker: 'w-1' }, 'warn');
    log.write('process_attempt', { partition: 0 });
    log.write('kafka_client', { detail: 'down' }, 'warn');
    expect(writes).toHaveLength(1);
    const line = JSON.parse(writes[0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'kafka_client', worker: 'w-1', detail: 'down', level: 'warn' });
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
    expect(writes[0]?.endsWith('}\n')).toBe(true);
  });
});
