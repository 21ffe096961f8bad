/**
 * The rules a source topic must keep for amends to decide its history (docs/design.md#source-validation):
 * nothing may remove a record, so no compaction and no finite retention, and every partition
 * must still start at offset 0. Stated once, for two readers: the worker's observer
 * (kafka-source-observer.ts) stops at the first broken rule, and source-adopt
 * (topic-adoption.ts) lists every broken rule before it adopts a topic amends did not create,
 * so what adoption accepts is exactly what the worker will go on accepting.
 */
import { operationalError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { safeTopicConfig } from './safe-topic.js';
import { retentionConfigNames } from './topic-config.js';

export type RetentionConfigName = (typeof retentionConfigNames)[number];

/** A setting that lets the broker remove records, with the value that stops it. */
export interface UnsafeRetention {
  reason: 'unsafe_retention';
  setting: RetentionConfigName;
  value: string;
  /** What the setting must be instead (safe-topic.ts: delete, -1, -1). */
  safeValue: string;
  /** One line, as the worker reports it. */
  detail: string;
}

/** A partition whose history before `retainedStart` is gone. */
export interface DeletedHistory {
  reason: 'history_deleted';
  partition: number;
  retainedStart: number;
  detail: string;
}

/**
 * Every retention setting that can remove history, in the order the worker reports them
 * (compaction first). `config` holds DescribeConfigs' answer for retentionConfigNames; a
 * name the broker did not report is a failed read, not a verdict.
 */
export function unsafeRetention(topic: string, config: Record<string, string | null>): UnsafeRetention[] {
  for (const name of retentionConfigNames) {
    if (typeof config[name] !== 'string') {
      throw operationalError(`the broker did not report ${name} of topic ${topic}`);
    }
  }
  const found: UnsafeRetention[] = [];
  const policy = config['cleanup.policy'] as string;
  const policies = policy.split(',').map((p) => p.trim());
  if (policies.includes('compact')) {
    found.push({
      reason: 'unsafe_retention',
      setting: 'cleanup.policy',
      value: policy,
      safeValue: safeValueOf('cleanup.policy'),
      detail: `topic ${topic} has cleanup.policy=${policy}: compaction can remove records`,
    });
  }
  for (const name of ['retention.ms', 'retention.bytes'] as const) {
    const value = config[name] as string;
    if (value !== '-1') {
      found.push({
        reason: 'unsafe_retention',
        setting: name,
        value,
        safeValue: safeValueOf(name),
        detail: `topic ${topic} has ${name}=${value}, not -1: records can expire`,
      });
    }
  }
  return found;
}

/** amends never deletes records: any retained start above 0 means history is gone. */
export function deletedHistory(topic: string, partition: number, retainedStart: number): DeletedHistory | undefined {
  if (retainedStart <= 0) return undefined;
  return {
    reason: 'history_deleted',
    partition,
    retainedStart,
    detail: `${topic}[${partition}] starts at offset ${retainedStart}, not 0: records before it were deleted`,
  };
}

function safeValueOf(name: RetentionConfigName): string {
  const value = safeTopicConfig[name];
  assertInvariant(value !== undefined, `safeTopicConfig has no ${name}`);
  return value;
}
