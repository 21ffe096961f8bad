/**
 * Prepared statement names (one parse per session); tests' fault proxies match on them. The
 * texts are this folder's, but for `namespaceId` (namespace-registry.ts `namespaceIdSql`).
 */
export const storeStatementNames = {
  claim: 'amends_claim',
  observe: 'amends_observe',
  loadWindow: 'amends_load_window',
  commitBatch: 'amends_commit_batch',
  namespaceId: 'amends_namespace_id',
  warmWindow: 'amends_warm_window',
  warmCommit: 'amends_warm_commit',
  chain: 'amends_config_chain',
} as const;
