/**
 * `amendsctl inspect --manifest M [--json] [--recent N]` (transport.md, Inspection): each
 * partition's epoch, frontier, broker end and lag, last committed work; counts by outcome,
 * outputs, quarantine, outbox, workers and recent decisions. The broker part is optional:
 * when it cannot be reached, `end` and `lag` are null and the rest is still shown.
 */
import { usageError } from '../../domain/amends-error.js';
import type { Manifest } from '../../domain/config.js';
import { inspectStore, recentDefault, recentMax, type StoreInspection } from '../../io/inspect-queries.js';
import { withKafkaAdmin } from '../../io/kafka-admin.js';
import { resolveBrokers } from '../../io/kafka-connection.js';
import { registerNamespace } from '../../io/namespace-registry.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../io/postgres.js';
import { defineCommand } from '../command.js';
import { readManifestFile } from '../input-files.js';

/** The broker is asked briefly: inspection must answer even when it is down. */
const brokerTimeoutMs = 3_000;

export const inspectCommand = defineCommand({
  name: 'inspect',
  summary: 'show partitions, counts, outbox, view, workers and recent decisions of a namespace',
  help: `inspect --manifest M [--json] [--recent N]

  Shows, per partition: epoch, frontier, the broker's read-committed end and the lag, and
  the last committed work (offsets, outcomes, time, epoch). Per namespace: decisions by
  outcome, output versions and retractions, quarantine, outbox, the view's frontier, end
  and lag per output partition (when bound), the processes seen with
  their last heartbeat and actor states, and the last N decisions. --json prints one
  JSON document. Needs AMENDS_DATABASE_URL; the broker is optional.

  Flags
    --manifest M   the namespace's manifest (required)
    --json         one JSON document instead of tables
    --recent N     how many recent decisions (default ${recentDefault}, at most ${recentMax})
    --brokers LIST bootstrap servers (default: $AMENDS_BROKERS or 127.0.0.1:19092)

  Example
    $ amendsctl inspect --manifest manifest.json --recent 5`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    json: { type: 'boolean', default: false },
    recent: { type: 'number', default: recentDefault },
    brokers: { type: 'string' },
  },
  async run(cli, io) {
    const { recent, json } = cli.flags;
    if (!Number.isSafeInteger(recent) || recent < 0 || recent > recentMax) {
      throw usageError(`--recent must be an integer in [0, ${recentMax}]`);
    }
    if (cli.input.length > 0) throw usageError(`unexpected argument ${JSON.stringify(cli.input[0])}`);
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = resolveBrokers(cli.flags.brokers, io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    const namespace = manifest.config.namespace;
    const db = await Database.open(databaseUrl, `amendsctl inspect pid ${process.pid}`);
    let store: StoreInspection;
    try {
      await registerNamespace(db.pool, manifest).catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `registering namespace ${namespace}`);
      });
      store = await inspectStore(db.pool, namespace, recent).catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `inspecting namespace ${namespace}`);
      });
    } finally {
      await db.close();
    }
    const [ends = null, viewEnds = null] = await brokerEnds(brokers, [
      { topic: manifest.source_topic, partitions: manifest.config.partitions },
      ...(store.view === null ? [] : [{ topic: store.view.output_topic, partitions: store.view.partitions.length }]),
    ]);
    const document = inspectionDocument(manifest, store, ends, viewEnds);
    io.stdout.write(json ? `${JSON.stringify(document)}\n` : renderInspection(document, ends === null));
    return 0;
  },
});

/**
 * The read-committed end of each partition of each topic, through one admin client; a topic
 * whose ends cannot be read (broker down, slow) gets null instead of failing the inspection.
 */
async function brokerEnds(
  brokers: string,
  topics: { topic: string; partitions: number }[],
): Promise<(Map<number, number> | null)[]> {
  try {
    return await withKafkaAdmin(brokers, `amendsctl-inspect-${process.pid}`, (admin) =>
      Promise.all(
        topics.map(({ topic, partitions }) =>
          admin
            .listOffsets(
              topic,
              Array.from({ length: partitions }, (_, p) => p),
              'read-committed-end',
              brokerTimeoutMs,
            )
            .catch(() => null),
        ),
      ),
    );
  } catch {
    return topics.map(() => null);
  }
}

export function inspectionDocument(
  manifest: Manifest,
  store: StoreInspection,
  ends: Map<number, number> | null,
  viewEnds: Map<number, number> | null = null,
) {
  const byPartition = new Map(store.partitions.map((p) => [p.partition, p]));
  const partitions = Array.from({ length: manifest.config.partitions }, (_, partition) => {
    const row = byPartition.get(partition);
    const frontier = row?.frontier ?? 0;
    const end = ends?.get(partition) ?? null;
    return {
      partition,
      epoch: row?.epoch ?? 0,
      frontier,
      end,
      lag: end === null ? null : Math.max(0, end - frontier),
      owner: row?.owner ?? null,
      last_work: row?.last_work ?? null,
    };
  });
  return {
    namespace: manifest.config.namespace,
    source_topic: manifest.source_topic,
    source_incarnation: manifest.config.source_incarnation,
    partitions,
    counts: store.counts,
    outputs: store.outputs,
    quarantine: store.quarantine,
    outbox: store.outbox,
    // Without an output binding the view does not exist (transport.md: null).
    view:
      store.view === null
        ? null
        : {
            output_topic: store.view.output_topic,
            incarnation: store.view.incarnation,
            partitions: store.view.partitions.map((p) => {
              const end = viewEnds?.get(p.partition) ?? null;
              return {
                partition: p.partition,
                frontier: p.frontier,
                end,
                lag: end === null ? null : Math.max(0, end - p.frontier),
                applied: p.applied,
                stale: p.stale,
                duplicate: p.duplicate,
              };
            }),
          },
    workers: store.workers.map((w) => ({ ...w, state: w.state })),
    recent: store.recent,
  };
}

type InspectionDocument = ReturnType<typeof inspectionDocument>;

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

function renderInspection(d: InspectionDocument, brokerDown: boolean): string {
  const out: string[] = [];
  out.push(`namespace ${d.namespace}  source ${d.source_topic} (${d.source_incarnation})`);
  if (brokerDown) out.push('broker unreachable: end and lag unknown');
  out.push('');
  out.push(
    table(
      ['partition', 'epoch', 'frontier', 'end', 'lag', 'owner', 'last work'],
      d.partitions.map((p) => [
        String(p.partition),
        String(p.epoch),
        String(p.frontier),
        p.end === null ? '-' : String(p.end),
        p.lag === null ? '-' : String(p.lag),
        p.owner ?? '-',
        p.last_work === null
          ? '-'
          : `${p.last_work.first_offset}..${p.last_work.last_offset} (${p.last_work.records}) ${Object.entries(
              p.last_work.counts,
            )
              .map(([o, n]) => `${o}:${n}`)
              .join(
                ' ',
              )} epoch ${p.last_work.epoch} ${(p.last_work.work_elapsed_ns / 1e6).toFixed(2)} ms at ${p.last_work.committed_at}`,
      ]),
    ),
  );
  out.push('');
  out.push(
    `decisions  ${Object.entries(d.counts)
      .map(([o, n]) => `${o} ${n}`)
      .join(' · ')}`,
  );
  out.push(
    `outputs    ${d.outputs.versions} versions (${d.outputs.retractions} retractions) · quarantine ${d.quarantine} · outbox ${d.outbox.pending} pending, ${d.outbox.published} published`,
  );
  if (d.view === null) out.push('view       no output binding (amendsctl output-create)');
  else {
    out.push('');
    out.push(`view of ${d.view.output_topic} (${d.view.incarnation})`);
    out.push(
      table(
        ['partition', 'frontier', 'end', 'lag', 'applied', 'stale', 'duplicate'],
        d.view.partitions.map((p) => [
          String(p.partition),
          String(p.frontier),
          p.end === null ? '-' : String(p.end),
          p.lag === null ? '-' : String(p.lag),
          String(p.applied),
          String(p.stale),
          String(p.duplicate),
        ]),
      ),
    );
  }
  out.push('');
  if (d.workers.length === 0) out.push('workers    none seen');
  else
    out.push(
      table(
        ['worker', 'role', 'pid', 'heartbeat age', 'state'],
        d.workers.map((w) => [
          w.id,
          w.role,
          String(w.pid),
          `${(w.heartbeat_age_ms / 1000).toFixed(1)} s`,
          summarizeState(w.state),
        ]),
      ),
    );
  if (d.recent.length > 0) {
    out.push('');
    out.push(
      table(
        ['partition', 'offset', 'outcome', 'txn', 'rev'],
        d.recent.map((r) => [
          String(r.partition),
          String(r.offset),
          r.outcome,
          r.txn ?? '-',
          r.rev === null ? '-' : String(r.rev),
        ]),
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

function summarizeState(state: unknown): string {
  // Workers summarize a group state; relay and view a plain `state`.
  const s = state as { group?: string; state?: string; partitions?: { partition: number; state: string }[] };
  const parts = (s.partitions ?? []).map((p) => `p${p.partition}:${p.state}`).join(' ');
  return `${s.group ?? s.state ?? '?'}${parts ? ` ${parts}` : ''}`;
}
