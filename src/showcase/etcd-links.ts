/**
 * The links between each Patroni of a chaos run's HA database and etcd (issue 33): a TCP relay
 * per node on the port stack-ha.sh gives it with AMENDS_STACK_HA_ETCD_LINKS=1 (P+10N+2), which
 * the nemesis can cut. Started before the stack (Patroni needs etcd to bootstrap), closed
 * after it.
 *
 * A cut is a partition as TCP sees it, not a refusal: bytes stop flowing both ways on the open
 * connections, and a new connection is accepted by the kernel but gets nowhere, so Patroni's
 * etcd calls time out as they would across a dead network rather than fail at once. At the
 * heal every connection held through the cut is closed (what its peer would have seen once
 * its timeouts ran out; nothing of what was sent meanwhile is delivered late), and new
 * connections reach etcd again.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** One node's link: a relay from a port of its own to etcd's client port. */
class EtcdLink {
  private readonly sockets = new Set<Socket>();
  private cutSince: number | null = null;

  private constructor(
    private readonly server: Server,
    private readonly etcdPort: number,
  ) {}

  static async start(port: number, etcdPort: number): Promise<EtcdLink> {
    const server = createServer();
    const link = new EtcdLink(server, etcdPort);
    server.on('connection', (socket) => link.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return link;
  }

  cut(): void {
    this.cutSince = Date.now();
  }

  heal(): void {
    if (this.cutSince === null) return;
    this.cutSince = null;
    // Every connection open now lived through the cut (its stream lost bytes): closed.
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.cutSince !== null) {
      // Accepted, and then nothing: the heal closes it.
      client.on('data', () => {});
      return;
    }
    const upstream = createConnection(this.etcdPort, '127.0.0.1');
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    // While cut, what either side sends is dropped, as a dead network drops it.
    client.on('data', (chunk: Buffer) => {
      if (this.cutSince === null) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (this.cutSince === null) client.write(chunk);
    });
  }
}

/** The links of every node, by node number (1-based, as stack-ha.sh numbers them). */
export class EtcdLinks {
  private constructor(private readonly links: Map<number, EtcdLink>) {}

  /** Relays node N's port P+10N+2 to etcd's client port P+2 (stack-ha.sh's layout). */
  static async start(pgPort: number, nodes: readonly number[]): Promise<EtcdLinks> {
    const links = new Map<number, EtcdLink>();
    try {
      for (const n of nodes) links.set(n, await EtcdLink.start(etcdLinkPort(pgPort, n), pgPort + 2));
    } catch (error) {
      for (const link of links.values()) await link.close();
      throw error;
    }
    return new EtcdLinks(links);
  }

  cut(node: number): void {
    this.link(node).cut();
  }

  heal(node: number): void {
    this.link(node).heal();
  }

  async close(): Promise<void> {
    for (const link of this.links.values()) await link.close();
  }

  private link(node: number): EtcdLink {
    const link = this.links.get(node);
    if (link === undefined) throw new Error(`the HA database has no node ${node}`);
    return link;
  }
}

/** Where stack-ha.sh's node N reaches etcd with AMENDS_STACK_HA_ETCD_LINKS=1. */
export function etcdLinkPort(pgPort: number, node: number): number {
  return pgPort + 10 * node + 2;
}
