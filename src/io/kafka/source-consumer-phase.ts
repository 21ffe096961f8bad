/**
 * The source consumer's lifecycle (kafka-source-consumer.ts), one per consumer:
 *
 *   new ──connect──▶ connecting ──subscribed──▶ connected
 *    ▲                   │
 *    └─ connect failed ──┘           any phase ──close──▶ closing ──▶ closed
 *
 * What each phase allows: poll and assign need `connected` (else an operational error naming
 * the phase), `commitFrontier` queues nothing before it, and `unassign` does nothing before it
 * (a stop during `connect` drains through there). In `closing` and `closed` the rebalance
 * callback answers librdkafka by itself. A close during `connecting` waits for the connect to
 * settle, and a connect that succeeds meanwhile does not subscribe.
 *
 * Hand-rolled rather than an xstate actor: five states and no events, timers or children. The
 * consumer moves the phase around its own awaits and reads it synchronously, inside
 * librdkafka's rebalance callback too; an actor would wrap one field in a system to start and
 * stop.
 */
import { operationalError } from '../../kernel/amends-error.js';

export type SourceConsumerPhaseName = 'new' | 'connecting' | 'connected' | 'closing' | 'closed';

export class SourceConsumerPhase {
  private current: SourceConsumerPhaseName = 'new';

  get name(): SourceConsumerPhaseName {
    return this.current;
  }

  get isConnected(): boolean {
    return this.current === 'connected';
  }

  /** Whether a connect that just succeeded may subscribe: not once a close has begun. */
  get isConnecting(): boolean {
    return this.current === 'connecting';
  }

  /** `closing` or `closed`: the group has released everything, the callback answers alone. */
  get isClosing(): boolean {
    return this.current === 'closing' || this.current === 'closed';
  }

  /** new → connecting; a connect from any other phase is refused. */
  startConnecting(): void {
    if (this.current !== 'new') throw operationalError(`the source consumer cannot connect from state ${this.current}`);
    this.current = 'connecting';
  }

  /** A failed connect (not an aborted one): the library disconnects it itself. */
  connectFailed(): void {
    this.current = 'new';
  }

  /** connecting → connected, once subscribed to the source topic. */
  subscribed(): void {
    this.current = 'connected';
  }

  /** Any phase → closing; true when a connect was in flight, which the close waits for. */
  startClosing(): boolean {
    const wasConnecting = this.current === 'connecting';
    this.current = 'closing';
    return wasConnecting;
  }

  closed(): void {
    this.current = 'closed';
  }

  /** Refuses `what` (poll, assign) outside `connected`. */
  throwUnlessConnected(what: string): void {
    if (this.current !== 'connected')
      throw operationalError(`the source consumer cannot ${what}: it is ${this.current}`);
  }
}
