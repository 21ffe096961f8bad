/**
 * A fixed offered load: records from a traffic stream handed to the producer at a steady
 * rate, in 10 ms ticks scheduled against absolute time (a late tick catches up, the rate does
 * not drift), until stopped. Each record's send time is kept by the producer.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { TrafficRecord } from '../domain/ledger-traffic.js';
import type { BulkProducer } from './bulk-producer.js';

const tickMs = 10;

export class OfferedLoad {
  private stopped = false;
  private sent = 0;
  readonly done: Promise<void>;

  constructor(
    private readonly producer: BulkProducer,
    private readonly traffic: Iterator<TrafficRecord>,
    readonly rps: number,
  ) {
    this.done = this.run();
  }

  get sentCount(): number {
    return this.sent;
  }

  async stop(): Promise<number> {
    this.stopped = true;
    await this.done;
    return this.sent;
  }

  private async run(): Promise<void> {
    const start = Date.now();
    while (!this.stopped) {
      const due = Math.floor(((Date.now() - start) / 1000) * this.rps);
      while (this.sent < due) {
        await this.producer.send(this.traffic.next().value as TrafficRecord, true);
        this.sent += 1;
      }
      const nextTick = start + (Math.floor((Date.now() - start) / tickMs) + 1) * tickMs;
      await sleep(Math.max(0, nextTick - Date.now()));
    }
  }
}
