/**
 * The verifier's differences (docs/design.md#verification): every one is counted by kind, the first
 * ones are kept for the report (at most `listedDifferencesMax` per kind and in all), and the
 * reasons name each kind with its count and first key.
 */
import { type Difference, type DifferenceKind, differenceKinds, listedDifferencesMax } from './verify-document.js';

export class DifferenceList {
  private readonly listed = new Map<DifferenceKind, Difference[]>(differenceKinds.map((k) => [k, []]));
  private readonly totals = new Map<DifferenceKind, number>(differenceKinds.map((k) => [k, 0]));

  add(kind: DifferenceKind, key: string, want: unknown, got: unknown): void {
    this.totals.set(kind, (this.totals.get(kind) ?? 0) + 1);
    const list = this.listed.get(kind);
    if (list && list.length < listedDifferencesMax) list.push({ kind, key, want, got });
  }

  /** The listed differences, by kind, at most `listedDifferencesMax` in all. */
  differences(): Difference[] {
    return differenceKinds.flatMap((kind) => this.listed.get(kind) ?? []).slice(0, listedDifferencesMax);
  }

  /** One reason per kind that differs, then how many are not listed. */
  reasons(): string[] {
    const failures = differenceKinds.flatMap((kind) => {
      const total = this.totals.get(kind) ?? 0;
      if (total === 0) return [];
      const first = this.listed.get(kind)?.[0]?.key;
      return [`${kind}: ${total} difference${total === 1 ? '' : 's'}, first at ${first}`];
    });
    const total = [...this.totals.values()].reduce((a, b) => a + b, 0);
    const shown = this.differences().length;
    if (total > shown) failures.push(`${total} differences in all, the first ${shown} listed`);
    return failures;
  }
}
