/**
 * A TCP proxy between a PostgreSQL client and the server that drops a connection at one
 * exact protocol point, to make "the COMMIT reply was lost" happen for real on the wire
 * (docs/design.md#test-suites; the showcase's owned COMMIT-reply fault, docs/design.md#verification).
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
 * And, for the outage tests (docs/design.md#outages), `outage(ms)`: every open
 * connection is cut at once and new ones are refused until it ends, which is what clients
 * see of a database restart or a network partition.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

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
    await sleep(ms);
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
    const connection = new ProxiedConnection(
      client,
      server,
      (message) => this.takeFault(message),
      () => {
        this.fired += 1;
      },
    );
    server.on('data', (chunk: Buffer) => connection.fromServer(chunk));
    client.on('data', (chunk: Buffer) => connection.fromClient(chunk));
  }

  /** The first armed fault `message` matches, disarmed (each fault is one-shot). */
  private takeFault(message: FrontendMessage): Fault | undefined {
    const index = this.faults.findIndex((f) => f.when(message));
    return index < 0 ? undefined : this.faults.splice(index, 1)[0];
  }
}

/** Startup packet codes after which the client sends another untyped startup packet. */
const sslRequestCode = 80877103;
const gssEncRequestCode = 80877104;

/** One client connection and its upstream one: the frontend stream parsed, an armed fault held and acted on. */
class ProxiedConnection {
  /** Server bytes reach the client until a fault acts. */
  private replying = true;
  /** `drop_reply`: the swallowed reply so far, until its ReadyForQuery. */
  private swallowed: Buffer | undefined;
  /** Client bytes not yet a whole packet or message. */
  private buffered = Buffer.alloc(0);
  private startup = true;
  /** Messages of an armed request, held until its end. */
  private held: Buffer[] | undefined;
  private armed: Fault | undefined;
  /** The fault acted: this connection forwards nothing more. */
  private acted = false;

  constructor(
    private readonly client: Socket,
    private readonly server: Socket,
    private readonly takeFault: (message: FrontendMessage) => Fault | undefined,
    private readonly onAct: () => void,
  ) {}

  fromServer(chunk: Buffer): void {
    if (this.replying) {
      this.client.write(chunk);
      return;
    }
    if (this.swallowed === undefined) return;
    this.swallowed = Buffer.concat([this.swallowed, chunk]);
    // Backend messages: 1 type byte, int32 length. The reply starts at a message boundary:
    // the client sent this request only after the previous one's ReadyForQuery.
    while (this.swallowed.length >= 5) {
      const length = this.swallowed.readInt32BE(1);
      if (this.swallowed.length < length + 1) return;
      const type = String.fromCharCode(this.swallowed[0] ?? 0);
      this.swallowed = this.swallowed.subarray(length + 1);
      if (type === 'Z') {
        this.swallowed = undefined;
        this.server.destroy();
        this.client.destroy();
        return;
      }
    }
  }

  fromClient(chunk: Buffer): void {
    if (this.acted) return;
    this.buffered = Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.startup) {
        if (!this.forwardStartupPacket()) return;
        continue;
      }
      const raw = this.nextMessage();
      if (raw === undefined) return;
      this.forwardOrHold(raw);
      if (this.acted) return;
    }
  }

  /** Forwards one whole untyped startup packet; false while it has not all arrived. */
  private forwardStartupPacket(): boolean {
    if (this.buffered.length < 8) return false;
    const length = this.buffered.readInt32BE(0);
    if (this.buffered.length < length) return false;
    const code = this.buffered.readInt32BE(4);
    this.server.write(this.buffered.subarray(0, length));
    this.buffered = this.buffered.subarray(length);
    if (code !== sslRequestCode && code !== gssEncRequestCode) this.startup = false;
    return true;
  }

  /** The next whole typed message (1 type byte, int32 length), if it has all arrived. */
  private nextMessage(): Buffer | undefined {
    if (this.buffered.length < 5) return undefined;
    const length = this.buffered.readInt32BE(1);
    if (this.buffered.length < length + 1) return undefined;
    const raw = this.buffered.subarray(0, length + 1);
    this.buffered = this.buffered.subarray(length + 1);
    return raw;
  }

  /** Forwards a message, or holds it when it starts or continues an armed request. */
  private forwardOrHold(raw: Buffer): void {
    const message = { type: String.fromCharCode(raw[0] ?? 0), body: raw.subarray(5) };
    if (this.held === undefined) {
      this.armed = this.takeFault(message);
      if (this.armed !== undefined) this.held = [];
    }
    if (this.held === undefined) {
      this.server.write(raw);
      return;
    }
    this.held.push(raw);
    // The end of the armed request (Sync, or a simple Query): act once.
    if (message.type === 'S' || message.type === 'Q') this.act(Buffer.concat(this.held));
  }

  private act(request: Buffer): void {
    this.onAct();
    this.replying = false;
    this.acted = true;
    this.armed?.onFire?.();
    const action = this.armed?.action;
    if (action === 'drop_reply') {
      this.swallowed = Buffer.alloc(0);
      this.server.write(request);
      return;
    }
    if (action === 'drop_after_forward') {
      // FIN after the data (never RST), so the server reads and executes every byte.
      this.server.end(request);
    } else {
      this.server.destroy();
    }
    this.client.destroy();
  }
}
