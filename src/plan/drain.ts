/**
 * What draining a node means for each of its pods (kubectl drain's rules, as DrainOptions
 * spell them), and the pre-flight that keeps drydock from cordoning a node it could not
 * drain: a PDB that allows no disruption, or a pod the drain options do not allow to move.
 */
import { matchesSelector } from '../observe/selector.js';
import type { ObservedPod } from '../observe/types.js';
import type { DrainOptions, LabelSelector } from '../spec/model.js';
import type { ClusterView } from './view.js';

export type PodDisposition =
  | { readonly kind: 'skip' }
  | { readonly kind: 'terminating' }
  | { readonly kind: 'evict' }
  | { readonly kind: 'delete'; readonly reason: string }
  | { readonly kind: 'block'; readonly reason: string };

/** An undefined podSelector means every pod (Kubernetes' selector semantics otherwise). */
export function podSelected(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  return selector === undefined || matchesSelector(selector, labels);
}

export function podKey(pod: ObservedPod): string {
  return `${pod.namespace}/${pod.name}`;
}

export function classifyPod(pod: ObservedPod, drain: DrainOptions): PodDisposition {
  if (pod.mirror) return { kind: 'skip' };
  if (pod.ownerKind === 'DaemonSet') {
    if (drain.ignoreDaemonSets) return { kind: 'skip' };
    return {
      kind: 'block',
      reason: `pod ${podKey(pod)} belongs to DaemonSet ${pod.ownerName ?? '?'}; set rollout.drain.ignoreDaemonSets: true to leave DaemonSet pods in place`,
    };
  }
  if (!podSelected(drain.podSelector, pod.labels)) return { kind: 'skip' };
  if (pod.terminating) return { kind: 'terminating' };
  // Finished pods hold nothing: kubectl drain removes them whatever their owner or volumes.
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return { kind: 'evict' };
  if (pod.hasEmptyDir && !drain.deleteEmptyDirData) {
    return {
      kind: 'block',
      reason: `pod ${podKey(pod)} uses emptyDir data that draining would delete; set rollout.drain.deleteEmptyDirData: true to allow it`,
    };
  }
  if (pod.ownerKind === 'None') {
    if (drain.force) return { kind: 'delete', reason: 'pod has no controller (drain.force)' };
    return {
      kind: 'block',
      reason: `pod ${podKey(pod)} has no controller and would not come back; set rollout.drain.force: true to delete it`,
    };
  }
  return { kind: 'evict' };
}

export interface DrainView {
  readonly evict: readonly ObservedPod[];
  readonly remove: readonly { readonly pod: ObservedPod; readonly reason: string }[];
  readonly blocked: readonly { readonly pod: ObservedPod; readonly reason: string }[];
  readonly terminating: readonly ObservedPod[];
}

export function drainView(pods: readonly ObservedPod[], drain: DrainOptions): DrainView {
  const evict: ObservedPod[] = [];
  const remove: { pod: ObservedPod; reason: string }[] = [];
  const blocked: { pod: ObservedPod; reason: string }[] = [];
  const terminating: ObservedPod[] = [];
  if (!drain.enabled) return { evict, remove, blocked, terminating };
  for (const pod of pods) {
    const d = classifyPod(pod, drain);
    if (d.kind === 'evict') evict.push(pod);
    else if (d.kind === 'delete') remove.push({ pod, reason: d.reason });
    else if (d.kind === 'block') blocked.push({ pod, reason: d.reason });
    else if (d.kind === 'terminating') terminating.push(pod);
  }
  return { evict, remove, blocked, terminating };
}

export function drainLeft(d: DrainView): number {
  return d.evict.length + d.remove.length + d.blocked.length + d.terminating.length;
}

/**
 * Why the node must not be cordoned yet, or undefined when it may be: the first pod the drain
 * options cannot move, else the first PDB (by namespace/name) that allows no disruption for a
 * pod that would be evicted.
 */
export function preflight(view: ClusterView, d: DrainView): { code: 'drain' | 'pdb'; reason: string } | undefined {
  const first = d.blocked[0];
  if (first !== undefined) return { code: 'drain', reason: first.reason };
  for (const pod of d.evict) {
    for (const key of pod.pdbs) {
      const pdb = view.pdbByKey.get(key);
      if (pdb !== undefined && pdb.disruptionsAllowed <= 0) {
        return { code: 'pdb', reason: `PDB ${key} allows 0 disruptions (pod ${podKey(pod)} would be evicted)` };
      }
    }
  }
  return undefined;
}
