/**
 * Pure conversions from Kubernetes objects (as cached by the informers) to the planner's
 * Observed* shapes. Objects from the initial list are typed by client-node (dates as Date);
 * objects from the watch stream are plain JSON (dates as strings): both are accepted.
 */
import type {
  V1Deployment,
  V1Job,
  V1Node,
  V1Pod,
  V1PodCondition,
  V1PodDisruptionBudget,
  V1LabelSelector,
} from '@kubernetes/client-node';
import { jobOutcome } from '../protocol/job-outcome.js';
import { DRYDOCK_PREFIX, JOB_ANNOTATIONS } from '../protocol/keys.js';
import type { LabelSelector, LabelSelectorRequirement } from '../spec/model.js';
import type { ObservedDeployment, ObservedJob, ObservedNode, ObservedPDB, ObservedPod, PodOwnerKind } from './types.js';

/**
 * ISO 8601 text of a timestamp that may be a Date or a string; undefined stays undefined. Text
 * already in that form is returned itself, so a conversion shares the cached object's string.
 */
export function isoTime(value: Date | string | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return undefined;
  const iso = d.toISOString();
  return iso === value ? value : iso;
}

function sortedKeys(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if ((keys[i - 1] ?? '') >= (keys[i] ?? '')) return false;
  return true;
}

/**
 * A frozen copy of a string map, its keys sorted. A map that is already frozen with sorted keys
 * (one this made, as trim.ts keeps labels) is returned itself: shared, not copied again.
 */
export function record(value: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  if (value !== undefined && Object.isFrozen(value) && sortedKeys(Object.keys(value))) return value;
  const out: Record<string, string> = {};
  for (const key of Object.keys(value ?? {}).sort()) out[key] = value?.[key] ?? '';
  return Object.freeze(out);
}

export function toObservedNode(node: V1Node): ObservedNode {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const readySince = isoTime(ready?.lastTransitionTime);
  return Object.freeze({
    name: node.metadata?.name ?? '',
    ...(node.spec?.providerID ? { providerID: node.spec.providerID } : {}),
    ...(node.status?.nodeInfo?.bootID ? { bootID: node.status.nodeInfo.bootID } : {}),
    ...(node.status?.nodeInfo?.osImage ? { osImage: node.status.nodeInfo.osImage } : {}),
    labels: record(node.metadata?.labels),
    annotations: record(node.metadata?.annotations),
    unschedulable: node.spec?.unschedulable === true,
    ready: ready?.status === 'True',
    ...(readySince ? { readySince } : {}),
    createdAt: isoTime(node.metadata?.creationTimestamp as Date | string | undefined) ?? '',
    taints: Object.freeze(
      (node.spec?.taints ?? []).map((t) =>
        Object.freeze({ key: t.key, effect: t.effect, ...(t.value !== undefined ? { value: t.value } : {}) }),
      ),
    ),
  });
}

const OWNER_KINDS: readonly PodOwnerKind[] = ['ReplicaSet', 'DaemonSet', 'StatefulSet', 'Job', 'Node'];

function ownerOf(pod: V1Pod): { kind: PodOwnerKind; name?: string } {
  const refs = pod.metadata?.ownerReferences ?? [];
  const controller = refs.find((r) => r.controller === true) ?? refs[0];
  if (!controller) return { kind: 'None' };
  const kind = OWNER_KINDS.find((k) => k === controller.kind) ?? 'Other';
  return { kind, name: controller.name };
}

/**
 * Converts a pod; `pdbs` are the namespace/names of the PDBs covering it. A frozen `pdbs` is
 * taken as sorted and shared (the cache hands one list to all the pods one set of PDBs covers).
 */
export function toObservedPod(pod: V1Pod, pdbs: readonly string[], workload?: string): ObservedPod {
  const owner = ownerOf(pod);
  const ready = readyCondition(pod);
  const readySince = isoTime(ready?.lastTransitionTime);
  return Object.freeze({
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    nodeName: pod.spec?.nodeName ?? '',
    labels: record(pod.metadata?.labels),
    ownerKind: owner.kind,
    ...(owner.name !== undefined ? { ownerName: owner.name } : {}),
    phase: pod.status?.phase ?? 'Unknown',
    ready: ready?.status === 'True',
    ...(readySince ? { readySince } : {}),
    terminating: podTerminating(pod),
    hasEmptyDir: (pod.spec?.volumes ?? []).some((v) => v.emptyDir !== undefined && v.emptyDir !== null),
    mirror: pod.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined,
    ...rebootsFrom(pod),
    pdbs: Object.isFrozen(pdbs) ? pdbs : Object.freeze([...pdbs].sort()),
    ...(workload !== undefined ? { workload } : {}),
  });
}

/** A reboot pod's bootID, the boot it reboots from (its drydock.dev/boot-id). */
function rebootsFrom(pod: V1Pod): { rebootsFrom?: string } {
  const bootID = pod.metadata?.annotations?.[JOB_ANNOTATIONS.bootID];
  return bootID !== undefined && bootID !== '' ? { rebootsFrom: bootID } : {};
}

/** A pod's Ready condition, if it has one. */
export function readyCondition(pod: V1Pod): V1PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Whether a pod is being deleted (it has a deletionTimestamp). */
export function podTerminating(pod: V1Pod): boolean {
  return pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

export function toLabelSelector(selector: V1LabelSelector | undefined): LabelSelector | undefined {
  if (!selector) return undefined;
  const matchExpressions: LabelSelectorRequirement[] = (selector.matchExpressions ?? []).map((e) => ({
    key: e.key,
    operator: e.operator as LabelSelectorRequirement['operator'],
    ...(e.values ? { values: [...e.values] } : {}),
  }));
  return {
    ...(selector.matchLabels ? { matchLabels: { ...selector.matchLabels } } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

export function toObservedPDB(pdb: V1PodDisruptionBudget): ObservedPDB {
  const selector = toLabelSelector(pdb.spec?.selector);
  return Object.freeze({
    namespace: pdb.metadata?.namespace ?? '',
    name: pdb.metadata?.name ?? '',
    ...(selector ? { selector } : {}),
    disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
    currentHealthy: pdb.status?.currentHealthy ?? 0,
    desiredHealthy: pdb.status?.desiredHealthy ?? 0,
    expectedPods: pdb.status?.expectedPods ?? 0,
    ...(pdb.status?.disruptedPods ? { disruptedPods: disruptedPods(pdb.status.disruptedPods) } : {}),
    ...(pdb.metadata?.generation !== undefined && (pdb.status?.observedGeneration ?? 0) < pdb.metadata.generation
      ? { unobserved: true }
      : {}),
  });
}

function disruptedPods(m: Record<string, Date | string>): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, at] of Object.entries(m)) {
    const iso = isoTime(at);
    if (iso !== undefined) out[name] = iso;
  }
  return Object.freeze(out);
}

export function toObservedDeployment(d: V1Deployment): ObservedDeployment {
  return Object.freeze({
    namespace: d.metadata?.namespace ?? '',
    name: d.metadata?.name ?? '',
    // An absent spec.replicas means 1 (the API's default).
    replicas: d.spec?.replicas ?? 1,
    // Only drydock's own (the remembered replica count) are read; the caches keep no others.
    annotations: record(
      Object.fromEntries(Object.entries(d.metadata?.annotations ?? {}).filter(([k]) => k.startsWith(DRYDOCK_PREFIX))),
    ),
  });
}

/** `pods`: the Job's own pods (label batch.kubernetes.io/job-name), read for a finished Job's message. */
export function toObservedJob(job: V1Job, pods: readonly V1Pod[] = []): ObservedJob {
  const outcome = jobOutcome(job, pods);
  const succeeded = outcome.state === 'succeeded';
  const completedAt = succeeded ? (isoTime(job.status?.completionTime) ?? outcome.finishedAt) : undefined;
  const message = outcome.state !== 'running' ? outcome.lastPod?.message : undefined;
  return Object.freeze({
    namespace: job.metadata?.namespace ?? '',
    name: job.metadata?.name ?? '',
    labels: record(job.metadata?.labels),
    succeeded,
    failed: outcome.state === 'failed',
    ...(completedAt ? { completedAt } : {}),
    attempts: outcome.attempts,
    ...(outcome.reason ? { failureReason: outcome.reason } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(outcome.fromPod === true ? { unrecorded: true as const } : {}),
  });
}
