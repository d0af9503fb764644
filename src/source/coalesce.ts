/**
 * Bursts of triggers (a webhook per pushed commit, plus the poller) become at most one run in
 * flight and one queued: a trigger during a run asks for exactly one more run after it, which
 * sees everything that arrived meanwhile.
 */
export interface Coalescer {
  /** Resolves when a run that started after this call has finished. */
  trigger(): Promise<void>;
  /** True while a run is in flight. */
  readonly busy: boolean;
}

export function coalesce(run: () => Promise<void>, onError: (err: unknown) => void = () => undefined): Coalescer {
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  const start = (): Promise<void> => {
    const p = run()
      .catch(onError)
      .finally(() => {
        inFlight = undefined;
      });
    inFlight = p;
    return p;
  };

  return {
    get busy() {
      return inFlight !== undefined;
    },
    trigger() {
      if (!inFlight) return start();
      if (!queued) {
        queued = inFlight.then(() => {
          queued = undefined;
          return start();
        });
      }
      return queued;
    },
  };
}
