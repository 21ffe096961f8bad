/**
 * Runs the verifier's fast oracle (src/verify/fast-oracle.ts) over a whole history and
 * returns what the reference oracle returns, so tests can hold the two against each other:
 * decisions by (partition, offset) without the free-text detail, versions by (item,
 * location, day, version). With revisions (docs/design.md#configuration-revisions), a version's
 * status takes its key's threshold from the newest revision, as the verifier does: a key's terms
 * never change once it has versions.
 */
import type { NamespaceConfig } from '../../src/domain/config.js';
import type { ConfigRevision } from '../../src/domain/config-revision.js';
import type { Decision } from '../../src/domain/decision.js';
import { sortOutputVersions } from '../../src/domain/export-lines.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { FastOracle } from '../../src/verify/fast-oracle.js';
import { OracleKeyRules } from '../../src/verify/oracle-key-terms.js';

export function runFastOracle(
  config: NamespaceConfig,
  records: readonly SourceRecord[],
  revisions: readonly ConfigRevision[] = [],
): { decisions: Decision[]; versions: OutputVersion[] } {
  const oracle = new FastOracle(config, revisions);
  const rules = new OracleKeyRules(revisions[revisions.length - 1]?.config ?? config);
  const ordered = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  const versions: OutputVersion[] = [];
  let open: number | undefined;
  const decisions = ordered.map((record) => {
    // As the verifier runs it: a partition judged whole before the next one starts.
    if (open !== undefined && open !== record.partition) oracle.partitionJudged(open);
    open = record.partition;
    const d = oracle.judge(record, (v) => {
      const k = rules.of(v.item, v.location);
      if (k === undefined) throw new Error(`a version of ${v.item}@${v.location}, no stock key`);
      const closing = v.closing;
      versions.push({
        item: v.item,
        location: v.location,
        day: v.day,
        version: v.version,
        closing,
        status: closing === null ? null : closing < 0 ? 'NEGATIVE' : closing < k.threshold ? 'LOW' : 'OK',
        retracted: closing === null,
        cause: { partition: record.partition, offset: v.causeOffset },
      });
    });
    return { ...d, detail: null };
  });
  return { decisions, versions: sortOutputVersions(versions) };
}

/** A reference decision as the fast oracle gives it: no detail. */
export function withoutDetail(d: Decision): Decision {
  return { ...d, detail: null };
}
