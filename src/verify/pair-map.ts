/**
 * A map keyed by an (item, location) pair, as two levels of maps: a lookup per record builds
 * no key string (a JSON pair per lookup was 2–4 % of the verifier's time).
 */
export class PairMap<V> {
  private readonly byItem = new Map<string, Map<string, V>>();

  get(item: string, location: string): V | undefined {
    return this.byItem.get(item)?.get(location);
  }

  set(item: string, location: string, value: V): void {
    let byLocation = this.byItem.get(item);
    if (!byLocation) {
      byLocation = new Map();
      this.byItem.set(item, byLocation);
    }
    byLocation.set(location, value);
  }

  *values(): IterableIterator<V> {
    for (const byLocation of this.byItem.values()) yield* byLocation.values();
  }
}
