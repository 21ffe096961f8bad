/**
 * Cancellation for calls the client libraries cannot cancel (a librdkafka request, a kafkajs
 * request): the caller stops waiting at once, the call itself runs on to its own timeout and
 * its late result or error is dropped here, so nothing is left unhandled.
 */

/** The error an aborted wait rejects with: the signal's reason when it is an Error. */
export function abortError(signal: AbortSignal, what: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(`${what} was cancelled`);
  error.name = 'AbortError';
  return error;
}

/** Settles like `work`, or rejects as soon as `signal` fires (the listener is always removed). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  // The late outcome of an abandoned call must not become an unhandled rejection.
  work.catch(() => {});
  if (signal.aborted) return Promise.reject(abortError(signal, what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
