/**
 * What the chaos run does to a private HA database (issue 33; scripts/stack-ha.sh): read each
 * node's role and HAProxy's routes, SIGKILL the primary's postmaster, ask Patroni for a
 * switchover (`stack.sh ha-switchover`, which runs patronictl), and cut the primary off from
 * etcd (its link, etcd-links.ts) and from its clients (HAProxy's runtime API takes it out of
 * both listeners and shuts its sessions), then reconnect it.
 *
 * The roles and routes are read as `stack.sh ha-status` reads them (each node's Patroni REST
 * answer to /primary, /sync, /replica, /health; HAProxy's statistics), but in this process:
 * a stack.sh call takes seconds on a loaded machine, and the nemesis reads them often.
 *
 * The cut is what Patroni sees of a partition between the primary's host and the rest: its
 * etcd calls time out. Its REST API and its replication link to the standby stay up (one
 * machine, no network namespaces): Patroni's demotion does not depend on them, and what
 * the standby received from it before the promotion is what the primary committed.
 */
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { operationalError } from '../kernel/amends-error.js';
import type { EtcdLinks } from './etcd-links.js';

export interface HaNode {
  /** `node-N`. */
  name: string;
  /** primary, sync-standby, replica, starting or down (stack.sh ha-status). */
  role: string;
  address: string;
}

export interface HaStatus {
  nodes: HaNode[];
  /** The node HAProxy's primary port leads to ('' when none). */
  primaryRoute: string;
  replicaRoute: string;
}

/** One node primary, the other its synchronous standby, and HAProxy routing each port to the right one alone. */
export function isWhole(s: HaStatus): boolean {
  const primary = s.nodes.find((n) => n.role === 'primary');
  const standby = s.nodes.find((n) => n.role === 'sync-standby');
  return (
    primary !== undefined && standby !== undefined && s.primaryRoute === primary.name && s.replicaRoute === standby.name
  );
}

export function nodeNumber(name: string): number {
  return Number(name.replace('node-', ''));
}

export function portOf(node: HaNode): number {
  return Number(node.address.split(':')[1]);
}

export interface HaControlOptions {
  stackDir: string;
  pgPort: number;
  nodes: readonly number[];
  links: EtcdLinks;
  /** `scripts/stack.sh ARGS` against the private stack: its stdout, or a one-line error. */
  stack: (args: string[]) => Promise<string>;
}

const wholePollMs = 500;
/** stack-ha.sh's http_status waits 2 s for an answer. */
const restTimeoutMs = 2_000;
const listeners = ['amends-primary', 'amends-replica'];
/** What ha_node_role asks each node's Patroni, in its order: the first 200 names the role. */
const roleChecks: [string, string][] = [
  ['/primary', 'primary'],
  ['/sync', 'sync-standby'],
  ['/replica', 'replica'],
];

export class HaControl {
  constructor(private readonly o: HaControlOptions) {}

  /** Each node's role and where HAProxy's two ports lead, as `stack.sh ha-status` prints them. */
  async status(): Promise<HaStatus> {
    const [nodes, routes] = await Promise.all([
      Promise.all(this.o.nodes.map((n) => this.node(n))),
      this.routes().catch(() => new Map<string, string>()),
    ]);
    return {
      nodes,
      primaryRoute: routes.get(listeners[0] as string) ?? '',
      replicaRoute: routes.get(listeners[1] as string) ?? '',
    };
  }

  /** Waits up to `budgetMs` for a primary with a synchronous standby, HAProxy routing to each; the last status read. */
  async waitWhole(budgetMs: number): Promise<{ whole: boolean; status: HaStatus }> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      const status = await this.status();
      if (isWhole(status)) return { whole: true, status };
      if (Date.now() >= deadline) return { whole: false, status };
      await sleep(wholePollMs);
    }
  }

  /** SIGKILL of the postmaster of `node` (a crash of PostgreSQL; its Patroni lives on); its pid. */
  killPostmaster(node: HaNode): number {
    const pidFile = join(this.nodeDir(node), 'data', 'postmaster.pid');
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n', 1)[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0) throw operationalError(`${pidFile} names no postmaster`);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** patronictl switchover to the synchronous standby; returns once it is promoted, with its name. */
  async switchover(): Promise<string> {
    return (await this.o.stack(['ha-switchover'])).trim();
  }

  /** `node` cut off from etcd and from its clients. */
  async isolate(node: HaNode): Promise<void> {
    this.o.links.cut(nodeNumber(node.name));
    await this.admin(
      listeners.flatMap((l) => [`disable server ${l}/${node.name}`, `shutdown sessions server ${l}/${node.name}`]),
    );
  }

  /** `node` reaches etcd again, and HAProxy routes to it again when its checks say so. */
  async reconnect(node: HaNode): Promise<void> {
    this.o.links.heal(nodeNumber(node.name));
    await this.admin(listeners.map((l) => `enable server ${l}/${node.name}`));
  }

  /** Patroni's own word on `node`: `ROLE/STATE` (e.g. `master/running`, `demoted/stopped`), or null when it does not answer. */
  async patroniState(node: HaNode): Promise<string | null> {
    try {
      const restPort = portOf(node) + 1;
      const response = await fetch(`http://127.0.0.1:${restPort}/patroni`, {
        signal: AbortSignal.timeout(restTimeoutMs),
      });
      const body = (await response.json()) as { role?: string; state?: string };
      return `${body.role ?? '?'}/${body.state ?? '?'}`;
    } catch {
      return null;
    }
  }

  /** Node N's role from its Patroni REST API (stack-ha.sh's ha_node_role). */
  private async node(n: number): Promise<HaNode> {
    const pgPort = this.o.pgPort + 10 * n;
    const answers = await Promise.all(
      [...roleChecks.map(([path]) => path), '/health'].map((path) => this.restStatus(pgPort + 1, path)),
    );
    const checked = roleChecks.find((_, i) => answers[i] === 200)?.[1];
    const role = checked ?? (answers[roleChecks.length] !== null ? 'starting' : 'down');
    return { name: `node-${n}`, role, address: `127.0.0.1:${pgPort}` };
  }

  /** The HTTP status of OPTIONS `path` (what HAProxy's checks send), or null when nothing answers in time. */
  private async restStatus(port: number, path: string): Promise<number | null> {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'OPTIONS',
        signal: AbortSignal.timeout(restTimeoutMs),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return null;
    }
  }

  /** The servers each listener routes to now (HAProxy's statistics: status UP), `node-N` joined by spaces. */
  private async routes(): Promise<Map<string, string>> {
    const csv = await this.admin(['show stat'], true);
    const up = new Map<string, string[]>();
    for (const line of csv.split('\n')) {
      const cells = line.split(',');
      const [proxy = '', server = ''] = cells;
      if (cells[17] !== 'UP' || server === 'FRONTEND' || server === 'BACKEND') continue;
      up.set(proxy, [...(up.get(proxy) ?? []), server]);
    }
    return new Map([...up].map(([proxy, servers]) => [proxy, servers.sort().join(' ')]));
  }

  private nodeDir(node: HaNode): string {
    return join(this.o.stackDir, 'ha', node.name);
  }

  /**
   * Commands to HAProxy's runtime API (stack-ha.sh's admin.sock). A command that changes
   * something answers nothing when it worked; `read` returns what a command that shows
   * something answered.
   */
  private async admin(commands: string[], read = false): Promise<string> {
    const socketPath = join(this.o.stackDir, 'ha', 'haproxy', 'admin.sock');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = createConnection(socketPath);
      let out = '';
      socket.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
      socket.end(`${commands.join('; ')}\n`);
    });
    if (!read && answer.trim() !== '')
      throw operationalError(`HAProxy refused "${commands.join('; ')}": ${answer.trim()}`);
    return answer;
  }
}

export function describeHa(s: HaStatus): string {
  const nodes = s.nodes.map((n) => `${n.name} ${n.role}`).join(', ');
  return `${nodes || 'no node answers'}; HAProxy primary port -> ${s.primaryRoute || 'none'}`;
}
