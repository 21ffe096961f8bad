/**
 * How long amends waits on a Kafka client, named once for every client it creates: the
 * per-socket limits every librdkafka client gets (kafka-connection.ts), the bound on a
 * client's connect, and the bounds on closing one. librdkafka's own defaults are 30-60 s
 * or none at all; amends' are seconds, so that a dead or wrong address fails soon.
 */

/** A new connection's setup (TCP, TLS, SASL): a dead address fails within seconds. */
export const socketConnectionSetupTimeoutMs = 5_000;
/** One request on an open connection (librdkafka's `socket.timeout.ms`, default 60 s). */
export const socketTimeoutMs = 10_000;

/** A client's `connect()`: bootstrap and the first metadata request, then a timeout error. */
export const kafkaConnectTimeoutMs = 10_000;

/**
 * One whole source observation by a one-shot command (verify): metadata, configuration and
 * the offsets of every partition, each a request bounded by `socketTimeoutMs`, with room for
 * a leader election (the broker's session timeout) in between.
 */
export const sourceObservationBudgetMs = 30_000;

/**
 * Closing one client: a producer's flush and disconnect, a consumer's `disconnect()` (which
 * has no timeout of its own). Past it the caller stops waiting; the native close runs on in
 * the background.
 */
export const kafkaClientCloseTimeoutMs = 10_000;

/**
 * The worker's bound on its whole source-consumer close, longer than the client's own
 * `kafkaClientCloseTimeoutMs` on purpose: the close first waits out a connect still in
 * flight, and the consumer's own timeout, whose error names what hung, should fire first.
 */
export const sourceConsumerCloseBudgetMs = 15_000;
