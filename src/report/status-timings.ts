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

/** The nodes of one spec's file that went from taken to done, oldest version first. */
export function nodeTimings(versions: readonly StatusVersion[]): NodeTiming[] {
  const out: NodeTiming[] = [];
  // Per revision and node: when it was taken, while it is in flight.
  const started = new Map<string, number>();
  const finish = (key: string, node: string, status: SpecStatus, kind: PaceKind, end: number): void => {
    const start = started.get(key);
    started.delete(key);
    if (start === undefined || !Number.isFinite(end) || end < start) return;
    out.push({ spec: status.spec, kind, node, doneAt: new Date(end).toISOString(), seconds: (end - start) / 1000 });
  };
  for (const { at, status } of versions) {
    const kind = paceKindOf(status);
    if (kind === undefined) continue;
    const prefix = `${status.revision}\u0000`;
    const present = new Set<string>();
    for (const row of status.nodes) {
      const key = prefix + row.node;
      present.add(key);
      const start = startOf(row);
      if (start !== undefined && Number.isFinite(start)) {
        started.set(key, Math.min(start, started.get(key) ?? start));
      } else if (row.phase === 'Done') {
        finish(key, row.node, status, kind, Date.parse(row.since ?? at));
      } else if (row.phase === 'Failed' || row.phase === 'Skipped') {
        started.delete(key);
      }
    }
    // A replaced node leaves the rows when its instance is removed: that is its end. Any other
    // node that leaves them (deselected, deleted) was not seen done.
    for (const key of [...started.keys()]) {
      if (!key.startsWith(prefix) || present.has(key)) continue;
      if (kind === 'replace') finish(key, key.slice(prefix.length), status, kind, Date.parse(at));
      else started.delete(key);
    }
  }
  return out;
}
