/**
 * The nodes the service has seen done, for its forecast's per-node times (plan/pace.ts): the
 * status branch's history read once at start, then every status the service publishes, read
 * as the next version of its spec's file. A round reads no Git for it, and each spec keeps only
 * the newest nodes a median is taken of.
 */
import { MAX_OBSERVATIONS, type NodeTiming } from '../plan/pace.js';
import type { SpecStatus } from '../plan/types.js';
import { NodeTimingReader, paceKindOf, type StatusVersion } from '../report/status-timings.js';

interface SpecTimings {
  readonly reader: NodeTimingReader;
  /** Oldest first, at most MAX_OBSERVATIONS: the median of a spec never looks further back. */
  timings: NodeTiming[];
}

export class ObservedPace {
  private readonly specs = new Map<string, SpecTimings>();

  /** The status branch's history (source/status-history.ts readStatusHistory), each file oldest first. */
  seed(history: ReadonlyMap<string, readonly StatusVersion[]>): void {
    for (const versions of history.values()) for (const v of versions) this.add(v);
  }

  /** The specs of a status the service publishes at `at` (ISO 8601). */
  record(specs: readonly SpecStatus[], at: string): void {
    for (const status of specs) this.add({ at, status });
  }

  /** Every spec's kept nodes, for plan()'s observedNodes. */
  timings(): NodeTiming[] {
    return [...this.specs.values()].flatMap((s) => s.timings);
  }

  private add(version: StatusVersion): void {
    // Specs without node steps (NodeMaintenance, autoscaler rows) give no times: not kept.
    if (paceKindOf(version.status) === undefined) return;
    const { kind, name } = version.status.spec;
    const key = `${kind}/${name}`;
    let spec = this.specs.get(key);
    if (spec === undefined) {
      spec = { reader: new NodeTimingReader(), timings: [] };
      this.specs.set(key, spec);
    }
    const done = spec.reader.add(version);
    if (done.length > 0) spec.timings = [...spec.timings, ...done].slice(-MAX_OBSERVATIONS);
  }
}
