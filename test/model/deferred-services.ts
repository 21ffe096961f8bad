/**
 * Controlled services for the model tests: every invoked service call waits in a registry
 * until the test resolves or rejects it, so each path step decides exactly one outcome.
 */
import { fromPromise } from 'xstate';

export interface PendingCall {
  seq: number;
  owner: string;
  service: string;
  input: unknown;
  signal: AbortSignal;
  settled: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class DeferredServices {
  readonly calls: PendingCall[] = [];
  private seq = 0;

  /** A promise actor whose calls wait here; `owner` names the actor that invoked it. */
  actor<TOutput, TInput>(service: string, owner: (input: TInput) => string) {
    return fromPromise<TOutput, TInput>(
      ({ input, signal }) =>
        new Promise<TOutput>((resolve, reject) => {
          const call: PendingCall = {
            seq: this.seq++,
            owner: owner(input),
            service,
            input,
            signal,
            settled: false,
            resolve: (value) => {
              call.settled = true;
              resolve(value as TOutput);
            },
            reject: (error) => {
              call.settled = true;
              reject(error);
            },
          };
          this.calls.push(call);
        }),
    );
  }

  /** The one open call of `service` by `owner`: an open call has not settled and was not aborted. */
  open(owner: string, service: string): PendingCall {
    const open = this.calls.filter(
      (c) => c.owner === owner && c.service === service && !c.settled && !c.signal.aborted,
    );
    if (open.length !== 1) {
      const all = this.calls.filter((c) => !c.settled && !c.signal.aborted).map((c) => `${c.owner}:${c.service}`);
      throw new Error(`expected one open ${owner}:${service} call, found ${open.length} (open: ${all.join(', ')})`);
    }
    return open[0] as PendingCall;
  }

  callsSince(seq: number): PendingCall[] {
    return this.calls.filter((c) => c.seq >= seq);
  }

  get nextSeq(): number {
    return this.seq;
  }
}

/** Lets every resolved promise and the actors' reactions run to quiescence. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
