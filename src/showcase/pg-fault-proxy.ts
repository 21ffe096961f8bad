/**
 * A TCP proxy between a PostgreSQL client and the server that drops a connection at one
 * exact protocol point, to make "the COMMIT reply was lost" happen for real on the wire
 * (quality.md, Integration; the showcase's owned COMMIT-reply fault, verification.md).
 *
 * It reads the frontend (client → server) message stream: the untyped startup packet, then
 * typed messages (1 type byte, int32 length). A fault is armed by a message predicate, e.g.
 * a Bind of a named prepared statement, and acts at the end of that request: the next Sync
 * (extended protocol) or the message itself when it is a simple Query. Then, once:
 * - `drop_after_forward`: the request reaches the server (which executes and commits it),
 *   the client's socket is destroyed and no reply reaches the client;
 * - `drop_before_forward`: the request never reaches the server; both sides are dropped;
 * - `drop_reply`: the request reaches the server, the proxy waits for the server's whole
 *   reply (its ReadyForQuery), swallows it and drops both sides: the statement has certainly
 *   finished (committed, for a committing one) and the client never hears of it. Unlike
 *   `drop_after_forward`, the client cannot race the server: a client that reacts to the
 *   lost connection (amends' store cancels the session's statement, store-connection.ts)
 *   could otherwise cancel the statement before it commits.
 * And, for the outage tests (worker.md §6 "Transient outages"), `outage(ms)`: every open
 * connection is cut at once and new ones are refused until it ends, which is what clients
 * see of a database restart or a network partition.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface FrontendMessage {
  type: string;
  body: Buffer;
}

export type FaultAction = 'drop_after_forward' | 'drop_before_forward' | 'drop_reply';

export interface Fault {
  when: (message: FrontendMessage) => boolean;
  action: FaultAction;
  /** Told when the fault acts (the armed request is complete and the connection is cut). */
  onFire?: () => void;
}

/** The prepared statement name a Bind message refers to. */
export function bindStatementName(message: FrontendMessage): string | undefined {
  if (message.type !== 'B') return undefined;
  const portalEnd = message.body.indexOf(0);
  const nameEnd = message.body.indexOf(0, portalEnd + 1);
  return message.body.subarray(portalEnd + 1, nameEnd).toString('utf8');
}

export class PgFaultProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** Armed faults, each one-shot, matched in arming order. */
  private faults: Fault[] = [];
  /** How many faults fired, for assertions. */
  fired = 0;
  /** Until this time (ms since the epoch) every connection is refused. */
  private downUntil = 0;

  private constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {
    this.server = createServer((client) => this.accept(client));
  }

  static async start(upstreamUrl: string): Promise<{ proxy: PgFaultProxy; url: string }> {
    const upstream = new URL(upstreamUrl);
    const proxy = new PgFaultProxy(upstream.hostname, Number(upstream.port || '5432'));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const address = proxy.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
    const url = new URL(upstreamUrl);
    url.hostname = '127.0.0.1';
    url.port = String(address.port);
    return { proxy, url: url.toString() };
  }

  /** Arms a one-shot fault for the next matching request on any connection (in addition to any armed one). */
  arm(fault: Fault): void {
    this.faults.push(fault);
  }

  /** Cuts every connection now and refuses new ones for `ms`; resolves when the outage ends. */
  async outage(ms: number): Promise<void> {
    this.downUntil = Date.now() + ms;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => setTimeout(resolve, ms));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (Date.now() < this.downUntil) {
      client.destroy();
      return;
    }
    const server = createConnection(this.upstreamPort, this.upstreamHost);
    this.sockets.add(client);
    this.sockets.add(server);
    client.on('close', () => this.sockets.delete(client));
    server.on('close', () => this.sockets.delete(server));
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
    client.on('close', () => server.end());
    server.on('close', () => client.destroy());

    let replying = true;
    /** `drop_reply`: the swallowed reply so far, until its ReadyForQuery. */
    let swallowed: Buffer | undefined;
    server.on('data', (chunk: Buffer) => {
      if (replying) {
        client.write(chunk);
        return;
      }
      if (swallowed === undefined) return;
      swallowed = Buffer.concat([swallowed, chunk]);
      // Backend messages: 1 type byte, int32 length. The reply starts at a message boundary:
      // the client sent this request only after the previous one's ReadyForQuery.
      while (swallowed.length >= 5) {
        const length = swallowed.readInt32BE(1);
        if (swallowed.length < length + 1) return;
        const type = String.fromCharCode(swallowed[0] ?? 0);
        swallowed = swallowed.subarray(length + 1);
        if (type === 'Z') {
          swallowed = undefined;
          server.destroy();
          client.destroy();
          return;
        }
      }
    });

    let buffered = Buffer.alloc(0);
    let startup = true;
    /** Messages of an armed request, held until its end. */
    let held: Buffer[] | undefined;
    let armed: Fault | undefined;
    /** The fault acted: this connection forwards nothing more. */
    let acted = false;
    client.on('data', (chunk: Buffer) => {
      if (acted) return;
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (startup) {
          if (buffered.length < 8) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          const code = buffered.readInt32BE(4);
          server.write(buffered.subarray(0, length));
          buffered = buffered.subarray(length);
          // SSLRequest and GSSENCRequest are followed by another untyped startup packet.
          if (code !== 80877103 && code !== 80877104) startup = false;
          continue;
        }
        if (buffered.length < 5) return;
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        const raw = buffered.subarray(0, length + 1);
        buffered = buffered.subarray(length + 1);
        const message = { type: String.fromCharCode(raw[0] ?? 0), body: raw.subarray(5) };
        if (held === undefined) {
          const index = this.faults.findIndex((f) => f.when(message));
          if (index >= 0) {
            armed = this.faults[index];
            this.faults.splice(index, 1);
            held = [];
          }
        }
        if (held === undefined) {
          server.write(raw);
          continue;
        }
        held.push(raw);
        if (message.type !== 'S' && message.type !== 'Q') continue;
        // The end of the armed request: act once.
        this.fired += 1;
        replying = false;
        acted = true;
        armed?.onFire?.();
        const action = armed?.action;
        if (action === 'drop_reply') {
          swallowed = Buffer.alloc(0);
          server.write(Buffer.concat(held));
          return;
        }
        if (action === 'drop_after_forward') {
          // FIN after the data (never RST), so the server reads and executes every byte.
          server.end(Buffer.concat(held));
        } else {
          server.destroy();
        }
        client.destroy();
        return;
      }
    });
  }
}
