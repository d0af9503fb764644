/**
 * The forecast a pull request shows: which nodes go in which wave, and when. Estimates only:
 * each wave takes the spec's per-node time (pace.ts: observed, or the kind's default), the
 * canary wave is followed by its soak, and a wave never starts outside the rollout's
 * maintenance window (it waits for the next opening).
 */
import type { MaintenanceWindow } from '../spec/model.js';
import type { PaceRequest } from './pace.js';
import type { SpecRef, SpecStatus, Wave } from './types.js';
import { checkWindow, isWindowOpen, nextWindowOpening, windowClosing } from './window.js';

export interface ForecastInput {
  readonly spec: SpecRef;
  /** Nodes still to replace, in the order they will go (in flight first). */
  readonly remaining: readonly string[];
  readonly parallelism: number;
  /** Nodes of the canary wave still to go (0 when the canary has passed or there is none). */
  readonly canaryNodes: number;
  readonly soakSeconds: number;
  readonly window?: MaintenanceWindow;
  /** Earliest start (ms): now, or when the current wait ends. */
  readonly startAt: number;
  /** Waiting for a person (approval, halt): no ETA. */
  readonly blocked: boolean;
  /** Whether the rollout drains the nodes it takes (replace always; a NodeOp when its drain is on). */
  readonly drains?: boolean;
  /** Whether the rollout took a node already (in flight, done, failed or skipped). */
  readonly begun?: boolean;
  /** The kind of step a node takes and its default time, for the per-node time (pace.ts). */
  readonly pace: PaceRequest;
}

/** Finds the first instant >= t inside the window, remembering when the current opening closes. */
class WindowCursor {
  private closesAt = Number.NEGATIVE_INFINITY;
  private readonly usable: boolean;
  constructor(private readonly window: MaintenanceWindow | undefined) {
    this.usable = window !== undefined && checkWindow(window).ok;
  }

  /** undefined when the window never opens again. */
  at(t: number): number | undefined {
    if (!this.usable || this.window === undefined) return t;
    if (t < this.closesAt) return t;
    let start = t;
    if (!isWindowOpen(this.window, new Date(t))) {
      const next = nextWindowOpening(this.window, new Date(t));
      if (next === undefined) return undefined;
      start = next.getTime();
    }
    this.closesAt = windowClosing(this.window, new Date(start))?.getTime() ?? start;
    return start;
  }
}

export function forecastWaves(input: ForecastInput, perNodeMs: number): { waves: Wave[]; end: number | undefined } {
  const waves: Wave[] = [];
  const cursor = new WindowCursor(input.window);
  const p = Math.max(1, input.parallelism);
  let t = input.startAt;
  let i = 0;
  let never = false;
  const push = (label: string, size: number): void => {
    const nodes = input.remaining.slice(i, i + size);
    i += nodes.length;
    const start = cursor.at(t);
    if (start === undefined) {
      never = true;
      return;
    }
    const end = start + perNodeMs;
    waves.push({
      index: waves.length,
      spec: input.spec,
      label,
      nodes,
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
    });
    t = end;
  };
  if (input.canaryNodes > 0 && input.remaining.length > 0) {
    push('canary', input.canaryNodes);
    t += input.soakSeconds * 1000;
  }
  while (i < input.remaining.length && !never) push(`wave ${waves.length + 1}`, p);
  return { waves, end: input.blocked || never ? undefined : waves.length > 0 ? t : input.startAt };
}

/**
 * The forecast's estimates on the spec's status: each node's row gets the end of its wave, the
 * spec the end of its last wave. Nothing when no wave is left or the rollout waits for a person.
 */
export function withEta(status: SpecStatus, forecast: { waves: readonly Wave[]; end: number | undefined }): SpecStatus {
  if (forecast.end === undefined || forecast.waves.length === 0) return status;
  const byNode = new Map<string, string>();
  for (const w of forecast.waves) for (const n of w.nodes) byNode.set(n, w.end);
  return {
    ...status,
    eta: new Date(forecast.end).toISOString(),
    nodes: status.nodes.map((r) => {
      const eta = byNode.get(r.node);
      return eta === undefined ? r : { ...r, eta };
    }),
  };
}
