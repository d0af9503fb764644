/**
 * The workloads a drain disturbs: Deployments and StatefulSets with their desired and ready
 * replica counts, and which of them each pod belongs to (a Deployment's pods are owned by a
 * ReplicaSet, which the Deployment owns). The health gate reads these to know that what was
 * evicted from a node is available again before the next node is disturbed. Only the fields
 * the planner reads are kept.
 */
import type { V1Deployment, V1ObjectMeta, V1Pod, V1ReplicaSet, V1StatefulSet } from '@kubernetes/client-node';

export type WorkloadKind = 'Deployment' | 'StatefulSet';

export interface ObservedWorkload {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  /** spec.replicas (absent means 1). */
  readonly desired: number;
  /** status.readyReplicas. */
  readonly ready: number;
}

/** `Kind/namespace/name`: how pods and nodes name a workload. */
export function workloadKey(w: { kind: WorkloadKind; namespace: string; name: string }): string {
  return `${w.kind}/${w.namespace}/${w.name}`;
}

function controllerOf(meta: V1ObjectMeta | undefined): { kind: string; name: string } | undefined {
  const refs = meta?.ownerReferences ?? [];
  return refs.find((r) => r.controller === true) ?? refs[0];
}

function toWorkload(kind: WorkloadKind, o: V1Deployment | V1StatefulSet): ObservedWorkload {
  return Object.freeze({
    kind,
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    desired: o.spec?.replicas ?? 1,
    ready: o.status?.readyReplicas ?? 0,
  });
}

export function toObservedWorkloads(
  deployments: readonly V1Deployment[],
  statefulSets: readonly V1StatefulSet[],
): ObservedWorkload[] {
  return [
    ...deployments.map((d) => toWorkload('Deployment', d)),
    ...statefulSets.map((s) => toWorkload('StatefulSet', s)),
  ].sort((a, b) => (workloadKey(a) < workloadKey(b) ? -1 : workloadKey(a) > workloadKey(b) ? 1 : 0));
}

/** namespace/name of a ReplicaSet → its owning Deployment's name. */
export function replicaSetOwners(replicaSets: readonly V1ReplicaSet[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const rs of replicaSets) {
    const owner = controllerOf(rs.metadata);
    if (owner?.kind === 'Deployment') out.set(`${rs.metadata?.namespace ?? ''}/${rs.metadata?.name ?? ''}`, owner.name);
  }
  return out;
}

/** The workload a pod belongs to, as workloadKey, or undefined (a DaemonSet's, a Job's, a bare pod). */
export function podWorkload(pod: V1Pod, rsOwners: ReadonlyMap<string, string>): string | undefined {
  const owner = controllerOf(pod.metadata);
  const namespace = pod.metadata?.namespace ?? '';
  if (owner?.kind === 'StatefulSet') return workloadKey({ kind: 'StatefulSet', namespace, name: owner.name });
  if (owner?.kind !== 'ReplicaSet') return undefined;
  const deployment = rsOwners.get(`${namespace}/${owner.name}`);
  return deployment === undefined ? undefined : workloadKey({ kind: 'Deployment', namespace, name: deployment });
}
