/**
 * How long each node took, read off the status branch's history of one spec's file: the
 * forecast's observations (plan/pace.ts). A node counts from the first version where it is in
 * flight (its row's `since`, the time drydock took it) to the first where it is Done (its
 * row's `since`, else the version's time), or for a replacement, gone (the old node is removed
 * once drained). Versions of another revision are another rollout: each is read on its own.
 */
import type { NodeTiming, PaceKind } from '../plan/pace.js';
import type { NodeRow, SpecStatus } from '../plan/types.js';

/** One version of a spec's file: the commit's time and the status it held. */
export interface StatusVersion {
  /** ISO 8601 time of the status commit. */
  readonly at: string;
  readonly status: SpecStatus;
}

const IN_FLIGHT: ReadonlySet<NodeRow['phase']> = new Set([
  'Pending',
  'Cordoned',
  'Draining',
  'Updating',
  'Rebooting',
  'Verifying',
]);

/** The kind of step a spec's nodes take, or undefined for a spec without waves of nodes. */
export function paceKindOf(status: SpecStatus): PaceKind | undefined {
  switch (status.spec.kind) {
    case 'NodeImage':
      return status.strategy === 'inPlace' ? 'inPlace' : 'replace';
    case 'NodeOp':
    case 'NodeOpUpgrade':
      return 'nodeOp';
    default:
      return undefined;
  }
}

/**
 * A row is in flight once drydock holds it: a taken node has `since` (a Pending row without it
 * is a node not taken yet).
 */
const startOf = (row: NodeRow): number | undefined =>
  IN_FLIGHT.has(row.phase) && row.since !== undefined ? Date.parse(row.since) : undefined;

/**
 * One spec's file read version by version, oldest first: each version gives the nodes it saw
 * done. Holds only the nodes in flight of the revision last read, so a reader kept for as long
 * as drydock runs (the service's, fed each status it publishes) stays as small as a rollout.
 */
export class NodeTimingReader {
  /** Per revision and node: when it was taken, while it is in flight. */
  private readonly started = new Map<string, number>();
  private revision: string | undefined;

  /** The nodes `version` is the first to see done. */
  add({ at, status }: StatusVersion): NodeTiming[] {
    const out: NodeTiming[] = [];
    const kind = paceKindOf(status);
    if (kind === undefined) return out;
    // Another revision is another rollout: what was in flight under the last one never ends here.
    if (status.revision !== this.revision) this.started.clear();
    this.revision = status.revision;
    const finish = (node: string, end: number): void => {
      const start = this.started.get(node);
      this.started.delete(node);
      if (start === undefined || !Number.isFinite(end) || end < start) return;
      out.push({ spec: status.spec, kind, node, doneAt: new Date(end).toISOString(), seconds: (end - start) / 1000 });
    };
    const present = new Set<string>();
    for (const row of status.nodes) {
      present.add(row.node);
      const start = startOf(row);
      if (start !== undefined && Number.isFinite(start)) {
        this.started.set(row.node, Math.min(start, this.started.get(row.node) ?? start));
      } else if (row.phase === 'Done') {
        finish(row.node, Date.parse(row.since ?? at));
      } else if (row.phase === 'Failed' || row.phase === 'Skipped') {
        this.started.delete(row.node);
      }
    }
    // A replaced node leaves the rows when its instance is removed: that is its end. Any other
    // node that leaves them (deselected, deleted) was not seen done.
    for (const node of [...this.started.keys()]) {
      if (present.has(node)) continue;
      if (kind === 'replace') finish(node, Date.parse(at));
      else this.started.delete(node);
    }
    return out;
  }
}

/** The nodes of one spec's file that went from taken to done, oldest version first. */
export function nodeTimings(versions: readonly StatusVersion[]): NodeTiming[] {
  const reader = new NodeTimingReader();
  return versions.flatMap((v) => reader.add(v));
}
