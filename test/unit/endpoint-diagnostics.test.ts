/**
 * The words of issue 35's diagnostics, where they are decided without a broker or database:
 * advice that fits the address (the local stack's or an operator's), what librdkafka's log
 * lines tell about a connection (the lines as librdkafka 2.x in @confluentinc/kafka-javascript
 * 1.10.1 wrote them in runs against the local stack), which configuration fields differ, and a
 * failed write to stdout. The integration suites (diagnostics, secured-connectivity,
 * closed-pipe) check the same against the real services.
 */
import { describe, expect, it } from 'vitest';
import { writeFailure } from '../../src/cli/closed-pipe.js';
import { describeConfigDifferences } from '../../src/domain/config-differences.js';
import { BrokerReach } from '../../src/io/kafka/broker-reach.js';
import { brokerReachAdvice } from '../../src/io/kafka/kafka-connection.js';

const localAdvice = ': is the broker running (npm run up) and are --brokers / AMENDS_BROKERS right?';

describe('brokerReachAdvice', () => {
  it('starts the local stack only for its own addresses', () => {
    expect(brokerReachAdvice('127.0.0.1:19092')).toBe(localAdvice);
    expect(brokerReachAdvice('localhost:19094, 127.0.0.1:19092')).toBe(localAdvice);
  });

  it('tells an operator to check their address, network and credentials otherwise', () => {
    for (const brokers of ['kafka-1.prod:9092', '127.0.0.1:9092', '127.0.0.1:19092,kafka-1.prod:9092']) {
      const advice = brokerReachAdvice(brokers);
      expect(advice).not.toMatch(/npm run up/);
      expect(advice).toMatch(/check the bootstrap address .* that this host can reach it, and the security settings/);
    }
  });
});

/** A librdkafka log line of the broker thread for `address`. */
const fail = (address: string, text: string) => ({
  fac: 'FAIL',
  message: `[thrd:${address}/bootstrap]: ${address}/bootstrap: ${text}`,
});
const allDown = { message: 'all broker connections are down', code: -1 };
const timedOut = Object.assign(new Error('Local: Timed out'), { code: -185 });

/** What a request that timed out while `lines` were logged and no broker was up reports. */
async function causeAfter(brokers: string, lines: { message: string }[]): Promise<{ cause: string; none: boolean }> {
  const reach = new BrokerReach(brokers);
  const request = reach.within(Promise.reject(timedOut));
  for (const line of lines) reach.handlers['event.log'](line);
  reach.handlers['event.error'](allDown);
  const error = await request.catch((e: unknown) => e);
  return { cause: reach.cause(error), none: reach.noneWillAnswer() };
}

describe('BrokerReach', () => {
  it('says refused when every bootstrap address refused', async () => {
    const { cause, none } = await causeAfter('127.0.0.1:1', [
      fail('127.0.0.1:1', 'Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)'),
    ]);
    expect(cause).toBe(`connection refused at 127.0.0.1:1${brokerReachAdvice('127.0.0.1:1')}`);
    expect(none).toBe(true);
  });

  it('waits on while another bootstrap address has not failed', async () => {
    const { none } = await causeAfter('127.0.0.1:1,127.0.0.1:2', [
      fail('127.0.0.1:1', 'Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)'),
    ]);
    expect(none).toBe(false);
  });

  it('names a plaintext client at a TLS or SASL listener as a heuristic, with the setting', async () => {
    const { cause, none } = await causeAfter('127.0.0.1:19094', [
      fail(
        '127.0.0.1:19094',
        'Disconnected: connection closed by peer: receive 0 after POLLIN (after 1ms in state APIVERSION_QUERY)',
      ),
    ]);
    expect(cause).toMatch(
      /^the broker at 127\.0\.0\.1:19094 closed the connection during the handshake, as a TLS or SASL listener does to a plaintext client: set security\.protocol/,
    );
    expect(none).toBe(true);
  });

  it('does not take an idle connection closed after minutes for a protocol mismatch', async () => {
    const { cause } = await causeAfter('127.0.0.1:19092', [
      fail(
        '127.0.0.1:19092',
        'Disconnected: connection closed by peer: receive 0 after POLLIN (after 600012ms in state UP)',
      ),
    ]);
    expect(cause).toBe(`Local: Timed out (code -185)${localAdvice}`);
  });

  it('names a TLS client at a PLAINTEXT listener from either of the lines librdkafka alternates', async () => {
    const address = 'sasl_ssl://127.0.0.1:19092';
    const { cause } = await causeAfter('127.0.0.1:19092', [
      fail(
        address,
        'SSL handshake failed: Disconnected: SSL connection closed by peer: connecting to a PLAINTEXT broker listener? (after 0ms in state SSL_HANDSHAKE)',
      ),
      fail(address, 'Disconnected: SSL connection closed by peer (after 1ms in state SSL_HANDSHAKE)'),
    ]);
    expect(cause).toMatch(/^the broker at 127\.0\.0\.1:19092 answered the TLS handshake like a PLAINTEXT listener: /);
  });

  it('names an unresolvable address', async () => {
    const { cause } = await causeAfter('nosuch.invalid:9092', [
      fail(
        'nosuch.invalid:9092',
        "Failed to resolve 'nosuch.invalid:9092': Name or service not known (after 7ms in state CONNECT)",
      ),
    ]);
    expect(cause).toBe(
      "cannot resolve the broker address nosuch.invalid:9092: check its host name and this host's DNS",
    );
  });

  it('forgets a refusal once the address failed otherwise (a silent network now)', async () => {
    const { cause } = await causeAfter('127.0.0.1:1', [
      fail('127.0.0.1:1', 'Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)'),
      fail('127.0.0.1:1', 'Connection setup timed out in state CONNECT (after 5003ms in state CONNECT)'),
    ]);
    expect(cause).toBe(`Local: Timed out (code -185)${brokerReachAdvice('127.0.0.1:1')}`);
  });

  it('keeps the client error and its advice when the connections showed nothing', async () => {
    const reach = new BrokerReach('kafka-1.prod:9092');
    const error = await reach.within(Promise.reject(timedOut)).catch((e: unknown) => e);
    expect(reach.cause(error)).toBe(`Local: Timed out (code -185)${brokerReachAdvice('kafka-1.prod:9092')}`);
  });
});

describe('describeConfigDifferences', () => {
  const registered = { partitions: 2, stock_keys: [{ item: 'widget', opening: 100 }] };

  it('names each differing field with both values', () => {
    const manifest = { partitions: 3, stock_keys: [{ item: 'widget', opening: 90 }] };
    expect(describeConfigDifferences(registered, manifest)).toBe(
      'partitions: 2 registered, 3 in the manifest; stock_keys[0].opening: 100 registered, 90 in the manifest',
    );
  });

  it('counts entries added or removed, and members absent on one side', () => {
    const manifest = { partitions: 2, stock_keys: [{ item: 'widget', opening: 100 }, { item: 'gadget' }], x: 1 };
    expect(describeConfigDifferences(registered, manifest)).toBe(
      'stock_keys (entries): 1 registered, 2 in the manifest; x: absent registered, 1 in the manifest',
    );
  });

  it('names the first three and counts the rest; nothing for equal values', () => {
    const manifest = { a: 1, b: 2, c: 3, d: 4, e: 5 };
    expect(describeConfigDifferences({}, manifest)).toMatch(
      /^a: absent .*; c: absent registered, 3 in the manifest; and 2 more$/,
    );
    expect(describeConfigDifferences(registered, structuredClone(registered))).toBe('');
  });
});

describe('writeFailure', () => {
  it("names Node's code and its description", () => {
    const error = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(writeFailure(error)).toBe('writing to stdout failed: ENOSPC (no space left on device)');
    const eio = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    expect(writeFailure(eio)).toBe('writing to stdout failed: EIO (i/o error)');
  });
});
