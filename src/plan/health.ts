/**
 * The health gate every operation kind shares: a node passes when it is Ready, every pod on it
 * is Ready, both for minReadySeconds, and the workloads that had pods on it when it was taken
 * (recorded on the node) are back to their desired ready replicas, so the next node is never
 * disturbed while the last one's workloads are still short.
 */
import type { ObservedNode, ObservedPod } from '../observe/types.js';
import { ANNOTATIONS } from '../protocol/keys.js';
import { compareStrings } from './order.js';
import { parseInstant } from './protocol.js';
import { podsOn, type ClusterView } from './view.js';

/** The workloads of these pods, as the node records them (sorted, comma-separated); '' when none. */
export function workloadsOf(pods: readonly ObservedPod[]): string {
  const keys = new Set<string>();
  for (const p of pods) if (p.workload !== undefined) keys.add(p.workload);
  return [...keys].sort(compareStrings).join(',');
}

/** The first recorded workload not back to its desired ready replicas, in words; undefined when all are. */
export function workloadShort(view: ClusterView, recorded: string | undefined): string | undefined {
  if (recorded === undefined || recorded === '') return undefined;
  const byKey = new Map((view.observed.workloads ?? []).map((w) => [`${w.kind}/${w.namespace}/${w.name}`, w]));
  for (const key of recorded.split(',')) {
    const w = byKey.get(key);
    // A workload deleted since is nothing to wait for.
    if (w !== undefined && w.ready < w.desired)
      return `${w.kind} ${w.namespace}/${w.name} has ${w.ready}/${w.desired} ready replicas`;
  }
  return undefined;
}

export interface HealthCheck {
  /** When the node (and its pods) will have been Ready for minReadySeconds. */
  readonly at: number;
  /** What keeps it from passing, in words; undefined when only time is left. */
  readonly blocker?: string;
}

/**
 * When `node` and every pod on it will have been Ready for minReadySeconds, or which of them is
 * not Ready: the gate without the recorded workloads, for a node that replaces another (it has
 * no workloads of its own taken from it).
 */
export function readyAt(view: ClusterView, node: ObservedNode, minReadySeconds: number, now: number): HealthCheck {
  const min = minReadySeconds * 1000;
  let from = parseInstant(node.readySince) ?? parseInstant(node.createdAt) ?? now;
  if (!node.ready) return { at: from + min, blocker: `node ${node.name} is not Ready` };
  for (const pod of podsOn(view, node.name)) {
    if (pod.terminating || pod.phase === 'Succeeded' || pod.phase === 'Failed') continue;
    if (!pod.ready) return { at: from + min, blocker: `pod ${pod.namespace}/${pod.name} is not Ready` };
    from = Math.max(from, parseInstant(pod.readySince) ?? from);
  }
  return { at: from + min };
}

/** Where `node` stands in its health gate at `now`. */
export function healthOf(view: ClusterView, node: ObservedNode, minReadySeconds: number, now: number): HealthCheck {
  const ready = readyAt(view, node, minReadySeconds, now);
  if (ready.blocker !== undefined) return ready;
  const short = workloadShort(view, node.annotations[ANNOTATIONS.evicted]);
  return short !== undefined ? { at: ready.at, blocker: short } : ready;
}
