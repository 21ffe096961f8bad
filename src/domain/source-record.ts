/**
 * One source record as the domain sees it: broker coordinates and the raw key and value
 * bytes, kept exactly as received (docs/design.md#record-key). Transport details stay in src/io/kafka.
 */
export interface SourceRecord {
  partition: number;
  offset: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}
