/**
 * `amendsctl inspect --manifest M [--json] [--recent N]` (docs/design.md#inspection): each
 * partition's epoch, frontier, broker end and lag, last committed work; counts by outcome,
 * outputs, quarantine, outbox, workers and recent decisions. Read-only: an unregistered
 * namespace or an absent or old schema is a one-line error (read-only-namespace.ts).
 *
 * The broker part is optional and judged (topic-ends-observation.ts): `source.status` says
 * whether the ends are the namespace's topic's (ok), or why not (unreachable, topic missing,
 * recreated, partitions added); only with ok are `end` and `lag` shown, else they are null.
 */

import type { Manifest } from '../../domain/config.js';
import { withKafkaAdmin } from '../../io/kafka/kafka-admin.js';
import {
  commandObservationTimeouts,
  type ExpectedTopic,
  observeTopicEnds,
  type TopicEndsObservation,
} from '../../io/kafka/topic-ends-observation.js';
import { inspectStore, recentDefault, recentMax, type StoreInspection } from '../../io/store/inspect-queries.js';
import { databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { openRegisteredNamespace } from '../../io/store/read-only-namespace.js';
import { usageError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { defineCommand } from '../command.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { textTable } from '../text-table.js';

export const inspectCommand = defineCommand({
  name: 'inspect',
  summary: 'show partitions, counts, outbox, view, workers and recent decisions of a namespace',
  help: `inspect --manifest M [--json] [--recent N]

  Shows, per partition: epoch, frontier, the configuration revision in force from the
  frontier on (config-revise), the broker's read-committed end and the lag, and
  the last committed work (offsets, outcomes, time, epoch). Per namespace: decisions by
  outcome, output versions and retractions, quarantine, outbox, the view's frontier, end
  and lag per output partition (when bound), the processes seen with
  their last heartbeat and actor states, and the last N decisions. --json prints one
  JSON document. Needs AMENDS_DATABASE_URL; the broker is optional.

  The source topic's status is one line (JSON: "source"): ok, unreachable, topic_missing,
  incarnation_changed (deleted and recreated: another UUID) or partitions_changed; end
  and lag are shown only when it is ok. inspect only reads: a namespace that is not
  registered, or a database without the current amends schema, is a one-line error
  (amends worker or amendsctl source-load registers and migrates).

  Flags
    --manifest M   the namespace's manifest (required)
    --json         one JSON document instead of tables
    --recent N     how many recent decisions (default ${recentDefault}, at most ${recentMax})
${kafkaFlagsHelp(15)}

  Example
    $ amendsctl inspect --manifest manifest.json --recent 5`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    json: { type: 'boolean', default: false },
    recent: { type: 'number', default: recentDefault },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const { recent, json } = cli.flags;
    if (!Number.isSafeInteger(recent) || recent < 0 || recent > recentMax) {
      throw usageError(`--recent must be an integer in [0, ${recentMax}]`);
    }
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    const namespace = manifest.config.namespace;
    const db = await openRegisteredNamespace(databaseUrl, manifest, 'amendsctl inspect');
    let store: StoreInspection;
    try {
      store = await inspectStore(db.pool, namespace, recent).catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `inspecting namespace ${namespace}`);
      });
    } finally {
      await db.close();
    }
    const { source, output } = await observeEnds(
      brokers,
      {
        topic: manifest.source_topic,
        incarnation: manifest.config.source_incarnation,
        partitions: manifest.config.partitions,
        expectedBy: 'the manifest',
      },
      store.view && {
        topic: store.view.output_topic,
        incarnation: store.view.incarnation,
        partitions: store.view.partitions.length,
        expectedBy: 'the output binding',
      },
    );
    const document = inspectionDocument(manifest, store, source, output);
    io.stdout.write(json ? `${JSON.stringify(document)}\n` : renderInspection(document));
    return 0;
  },
});

/** Both topics' judged ends, through one admin client; never throws (the broker is optional). */
async function observeEnds(
  brokers: string,
  source: ExpectedTopic,
  output: ExpectedTopic | null,
): Promise<{ source: TopicEndsObservation; output: TopicEndsObservation | null }> {
  try {
    return await withKafkaAdmin(brokers, `amendsctl-inspect-${process.pid}`, async (admin) => {
      const [s, o] = await Promise.all([
        observeTopicEnds(admin, source, commandObservationTimeouts),
        output && observeTopicEnds(admin, output, commandObservationTimeouts),
      ]);
      return { source: s, output: o };
    });
  } catch (error) {
    // Only the client's creation can throw here (e.g. a malformed --brokers list).
    const detail = errorMessage(error);
    const failed: TopicEndsObservation = { status: 'unreachable', detail, ends: null };
    return { source: failed, output: output && failed };
  }
}

/** `source` and `view.output_status` of the document: the status without the ends. */
function statusOf(observation: TopicEndsObservation) {
  return { status: observation.status, detail: observation.detail };
}

export function inspectionDocument(
  manifest: Manifest,
  store: StoreInspection,
  source: TopicEndsObservation,
  output: TopicEndsObservation | null = null,
) {
  const ends = source.ends;
  const viewEnds = output?.ends ?? null;
  const byPartition = new Map(store.partitions.map((p) => [p.partition, p]));
  const partitions = Array.from({ length: manifest.config.partitions }, (_, partition) => {
    const row = byPartition.get(partition);
    const frontier = row?.frontier ?? 0;
    const end = ends?.get(partition) ?? null;
    return {
      partition,
      epoch: row?.epoch ?? 0,
      frontier,
      // A partition nobody claimed or revised decides its first record under revision 1.
      config_revision: row?.config_revision ?? 1,
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
    source: statusOf(source),
    partitions,
    counts: store.counts,
    outputs: store.outputs,
    quarantine: store.quarantine,
    outbox: store.outbox,
    // Without an output binding the view does not exist (docs/design.md#transport: null).
    view:
      store.view === null
        ? null
        : {
            output_topic: store.view.output_topic,
            incarnation: store.view.incarnation,
            output_status: output === null ? null : statusOf(output),
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

/** One line: `ok`, or the status, what is wrong, and that the broker's numbers are withheld. */
function statusLine(label: string, s: { status: string; detail: string | null }): string {
  if (s.status === 'ok') return `${label} ok`;
  return `${label} ${s.status}: ${s.detail ?? '?'}; end and lag not shown`;
}

function renderInspection(d: InspectionDocument): string {
  const out: string[] = [];
  out.push(`namespace ${d.namespace}  source ${d.source_topic} (${d.source_incarnation})`);
  out.push(statusLine('source topic', d.source));
  out.push('');
  out.push(partitionsTable(d.partitions));
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
  else out.push('', ...viewLines(d.view));
  out.push('');
  if (d.workers.length === 0) out.push('workers    none seen');
  else out.push(workersTable(d.workers));
  if (d.recent.length > 0) {
    out.push('');
    out.push(recentTable(d.recent));
  }
  return `${out.join('\n')}\n`;
}

function partitionsTable(partitions: InspectionDocument['partitions']): string {
  return textTable(
    ['partition', 'epoch', 'frontier', 'revision', 'end', 'lag', 'owner', 'last work'],
    partitions.map((p) => [
      String(p.partition),
      String(p.epoch),
      String(p.frontier),
      String(p.config_revision),
      p.end === null ? '-' : String(p.end),
      p.lag === null ? '-' : String(p.lag),
      p.owner ?? '-',
      p.last_work === null ? '-' : lastWorkCell(p.last_work),
    ]),
  );
}

function lastWorkCell(w: NonNullable<InspectionDocument['partitions'][number]['last_work']>): string {
  const counts = Object.entries(w.counts)
    .map(([o, n]) => `${o}:${n}`)
    .join(' ');
  const elapsedMs = (w.work_elapsed_ns / 1e6).toFixed(2);
  return `${w.first_offset}..${w.last_offset} (${w.records}) ${counts} epoch ${w.epoch} ${elapsedMs} ms at ${w.committed_at}`;
}

/** The view's heading, its output topic's status (when observed) and its partitions. */
function viewLines(view: NonNullable<InspectionDocument['view']>): string[] {
  const lines = [`view of ${view.output_topic} (${view.incarnation})`];
  if (view.output_status !== null) lines.push(statusLine('output topic', view.output_status));
  lines.push(
    textTable(
      ['partition', 'frontier', 'end', 'lag', 'applied', 'stale', 'duplicate'],
      view.partitions.map((p) => [
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
  return lines;
}

function workersTable(workers: InspectionDocument['workers']): string {
  return textTable(
    ['worker', 'role', 'pid', 'heartbeat age', 'state'],
    workers.map((w) => [
      w.id,
      w.role,
      String(w.pid),
      `${(w.heartbeat_age_ms / 1000).toFixed(1)} s`,
      summarizeState(w.state),
    ]),
  );
}

function recentTable(recent: InspectionDocument['recent']): string {
  return textTable(
    ['partition', 'offset', 'outcome', 'txn', 'rev'],
    recent.map((r) => [
      String(r.partition),
      String(r.offset),
      r.outcome,
      r.txn ?? '-',
      r.rev === null ? '-' : String(r.rev),
    ]),
  );
}

function summarizeState(state: unknown): string {
  // Workers summarize a group state; relay and view a plain `state`.
  const s = state as { group?: string; state?: string; partitions?: { partition: number; state: string }[] };
  const parts = (s.partitions ?? []).map((p) => `p${p.partition}:${p.state}`).join(' ');
  return `${s.group ?? s.state ?? '?'}${parts ? ` ${parts}` : ''}`;
}
