/**
 * The NOTIFY channel a batch commit with new outbox envelopes signals (sql/commit-batch.ts);
 * the payload is the namespace. The relay LISTENs on it (transport/outbox-relay.ts).
 */
export const outboxChannel = 'amends_outbox';
