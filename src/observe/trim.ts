/**
 * What the caches keep of each object: only the fields `convert.ts` reads. client-node's
 * informer would store every object whole (managedFields, container specs, images, volumes, the
 * last-applied annotation), which at 50,000 pods is most of drydock's memory; these functions
 * return a new object with the part the planner sees, which the informer stores instead
 * (informer.ts). metadata.name, namespace and resourceVersion stay: the cache keys and compares
 * by them. Labels are kept as the frozen, sorted record the conversion hands the planner, and
 * timestamps as ISO text, so a pod's ObservedPod shares them rather than holding copies.
 */
import type {
  KubernetesObject,
  V1Deployment,
  V1Container,
  V1ContainerStatus,
  V1Job,
  V1Node,
  V1ObjectMeta,
  V1OwnerReference,
  V1Pod,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1PodStatus,
  V1ReplicaSet,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { JOB_NAME_LABEL } from '../protocol/job-outcome.js';
import { DRYDOCK_PREFIX, JOB_ANNOTATIONS } from '../protocol/keys.js';
import { isoTime, record } from './convert.js';

/** The only foreign annotation a pod is read for: it marks a static (mirror) pod. */
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

function meta(m: V1ObjectMeta | undefined, keep: { labels?: boolean; annotations?: (key: string) => boolean }) {
  const out: V1ObjectMeta = {};
  if (!m) return out;
  if (m.name !== undefined) out.name = m.name;
  if (m.namespace !== undefined) out.namespace = m.namespace;
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (keep.labels && m.labels) out.labels = record(m.labels);
  const wanted = keep.annotations;
  if (wanted && m.annotations) {
    const annotations: Record<string, string> = {};
    let any = false;
    for (const [k, v] of Object.entries(m.annotations)) {
      if (!wanted(k)) continue;
      annotations[k] = v;
      any = true;
    }
    if (any) out.annotations = annotations;
  }
  return out;
}

/**
 * The Ready condition as the planner reads it: its status and since when. Its heartbeat time,
 * reason and message go: a kubelet (or KWOK) renews the heartbeat every few seconds, and a
 * cache that kept it would see every node change all the time (see sameTrimmed).
 */
function readyCondition<C extends { type: string; status: string; lastTransitionTime?: Date }>(
  conditions: readonly C[] | undefined,
): C[] | undefined {
  const ready = conditions?.find((c) => c.type === 'Ready');
  if (!conditions) return undefined;
  if (!ready) return [];
  const since = isoTime(ready.lastTransitionTime);
  return shared(`ready\0${ready.status}\0${since ?? ''}`, () => [
    { type: 'Ready', status: ready.status, ...(since !== undefined ? { lastTransitionTime: since } : {}) } as C,
  ]);
}

/** How many shared parts `shared` remembers before it starts over. */
const SHARED_LIMIT = 4096;
const sharedParts = new Map<string, unknown>();

/**
 * One frozen object for equal parts of many objects, by `key`: the pods of one ReplicaSet have
 * one owner, and pods made Ready in the same second one Ready condition. Bounded (it starts
 * over when full); the informer lists a namespace's objects together, so equal parts arrive
 * together and are shared all the same. Nothing edits a cached object, and freezing ensures it.
 */
function shared<V extends object>(key: string, make: () => V): V {
  const hit = sharedParts.get(key) as V | undefined;
  if (hit !== undefined) return hit;
  if (sharedParts.size >= SHARED_LIMIT) sharedParts.clear();
  const made = deepFreeze(make());
  sharedParts.set(key, made);
  return made;
}

function deepFreeze<V extends object>(value: V): V {
  for (const v of Object.values(value)) if (v !== null && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(value);
}

/**
 * Whether two trimmed versions of one object say the same to the planner: equal but for
 * metadata.resourceVersion. A watch update that changes only what trimming dropped (a node's
 * heartbeat, a ReplicaSet's status, a PDB's observedGeneration) is no change to drydock and
 * wakes no round. Timestamps compare by instant: the initial list gives Dates, the watch
 * stream strings.
 */
export function sameTrimmed(a: KubernetesObject, b: KubernetesObject): boolean {
  const { resourceVersion: _a, ...metaA } = a.metadata ?? {};
  const { resourceVersion: _b, ...metaB } = b.metadata ?? {};
  return sameContent({ ...a, metadata: metaA }, { ...b, metadata: metaB });
}

function instant(v: unknown): number | undefined {
  if (v instanceof Date) return v.getTime();
  return typeof v === 'string' ? Date.parse(v) : undefined;
}

/** Deep equality of two parts of trimmed objects (timestamps by instant). */
export function sameContent(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date || b instanceof Date) {
    const [x, y] = [instant(a), instant(b)];
    return x !== undefined && y !== undefined && !Number.isNaN(x) && x === y;
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameContent((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** The `containers` the Pod type requires and nothing reads: one empty list for every pod. */
const NO_CONTAINERS = Object.freeze([]) as unknown as V1Container[];

export function trimNode(node: V1Node): V1Node {
  const m = meta(node.metadata, { labels: true, annotations: () => true });
  if (m.annotations) m.annotations = record(m.annotations);
  const created = isoTime(node.metadata?.creationTimestamp);
  if (created !== undefined) m.creationTimestamp = created as unknown as Date;
  const ready = readyCondition(node.status?.conditions);
  const bootID = node.status?.nodeInfo?.bootID;
  const osImage = node.status?.nodeInfo?.osImage;
  const nodeInfo = {
    ...(bootID !== undefined ? { bootID } : {}),
    ...(osImage !== undefined ? { osImage } : {}),
  };
  return {
    metadata: m,
    spec: {
      ...(node.spec?.providerID !== undefined ? { providerID: node.spec.providerID } : {}),
      ...(node.spec?.unschedulable !== undefined ? { unschedulable: node.spec.unschedulable } : {}),
      ...(node.spec?.taints ? { taints: node.spec.taints } : {}),
    },
    status: {
      ...(ready ? { conditions: ready } : {}),
      // nodeInfo's other fields are required by the type, never read: kept empty.
      ...(Object.keys(nodeInfo).length > 0 ? { nodeInfo: nodeInfo as NonNullable<V1Node['status']>['nodeInfo'] } : {}),
    },
  };
}

/**
 * A pod's or ReplicaSet's controller as its readers use it (convert.ts, workloads.ts): kind and
 * name, shared by the objects it owns. Its uid and apiVersion, required by the type, are never read.
 */
function controllerRef(refs: readonly V1OwnerReference[] | undefined): V1OwnerReference[] | undefined {
  const owner = refs?.find((r) => r.controller === true) ?? refs?.[0];
  if (!owner) return undefined;
  const controller = owner.controller === true;
  return shared(`owner\0${owner.kind}\0${owner.name}\0${controller}`, () => [
    { kind: owner.kind, name: owner.name, ...(controller ? { controller } : {}) } as V1OwnerReference,
  ]);
}

export function trimPod(pod: V1Pod): V1Pod {
  // A reboot pod's bootID says which boot it reboots (plan/nodeop/step.ts enterRebooting).
  const m = meta(pod.metadata, {
    labels: true,
    annotations: (k) => k === MIRROR_ANNOTATION || k === JOB_ANNOTATIONS.bootID,
  });
  if (pod.metadata?.uid !== undefined) m.uid = pod.metadata.uid;
  if (pod.metadata?.deletionTimestamp) m.deletionTimestamp = pod.metadata.deletionTimestamp;
  const owners = controllerRef(pod.metadata?.ownerReferences);
  if (owners) m.ownerReferences = owners;
  // A Job pod's creation time picks the Job's last pod (execute/jobs/outcome.ts); no other pod's is read.
  const created = isoTime(pod.metadata?.creationTimestamp);
  if (created !== undefined && pod.metadata?.labels?.[JOB_NAME_LABEL] !== undefined)
    m.creationTimestamp = created as unknown as Date;
  // Built by assignment, one property after another: V8 gives objects built by spreading
  // optional parts a shape of their own each, which at 10,000 pods is a megabyte of shapes.
  const spec: V1PodSpec = { containers: NO_CONTAINERS };
  if (pod.spec?.nodeName !== undefined) spec.nodeName = pod.spec.nodeName;
  const emptyDir = (pod.spec?.volumes ?? []).find((v) => v.emptyDir !== undefined && v.emptyDir !== null);
  if (emptyDir) spec.volumes = [{ name: emptyDir.name, emptyDir: {} }];
  const status: V1PodStatus = {};
  if (pod.status?.phase !== undefined) status.phase = pod.status.phase;
  const ready = readyCondition(pod.status?.conditions);
  if (ready) status.conditions = ready;
  // A Job pod's ended containers carry the termination message status keeps.
  const ended = pod.status?.containerStatuses
    ?.filter((c) => c.state?.terminated !== undefined)
    .map((c) => ({ name: c.name, state: { terminated: c.state?.terminated } }) as V1ContainerStatus);
  if (ended !== undefined && ended.length > 0) status.containerStatuses = ended;
  return { metadata: m, spec, status };
}

/**
 * A PDB as drydock reads it: its selector, and the status the disruption controller and the
 * eviction handler write, with what says whether the controller has a write still to make (its
 * observed generation, and the pods an eviction named in disruptedPods; see pdb-settled.ts).
 */
export function trimPDB(pdb: V1PodDisruptionBudget): V1PodDisruptionBudget {
  const s = pdb.status;
  const m = meta(pdb.metadata, {});
  if (pdb.metadata?.generation !== undefined) m.generation = pdb.metadata.generation;
  let disruptedPods: Record<string, Date> | undefined;
  // Dates from a list, strings from a watch event: kept as the ISO string either way.
  for (const [name, at] of Object.entries(s?.disruptedPods ?? {})) {
    const iso = isoTime(at);
    if (iso !== undefined) (disruptedPods ??= {})[name] = iso as unknown as Date;
  }
  return {
    metadata: m,
    spec: pdb.spec?.selector ? { selector: pdb.spec.selector } : {},
    ...(s
      ? {
          status: {
            currentHealthy: s.currentHealthy,
            desiredHealthy: s.desiredHealthy,
            disruptionsAllowed: s.disruptionsAllowed,
            expectedPods: s.expectedPods,
            ...(s.observedGeneration !== undefined ? { observedGeneration: s.observedGeneration } : {}),
            ...(disruptedPods ? { disruptedPods } : {}),
          },
        }
      : {}),
  };
}

export function trimDeployment(d: V1Deployment): V1Deployment {
  // Only drydock's own annotations are read (the remembered replica count); the
  // last-applied-configuration annotation alone can be kilobytes.
  return {
    metadata: meta(d.metadata, { annotations: (k) => k.startsWith(DRYDOCK_PREFIX) }),
    ...(d.spec ? { spec: { replicas: d.spec.replicas, selector: d.spec.selector, template: {} } } : {}),
    // The health gate waits for an evicted workload's ready count (observe/workloads.ts).
    ...(d.status?.readyReplicas !== undefined ? { status: { readyReplicas: d.status.readyReplicas } } : {}),
  };
}

/** A StatefulSet as the health gate reads it: its desired and ready replicas. */
export function trimStatefulSet(s: V1StatefulSet): V1StatefulSet {
  return {
    metadata: meta(s.metadata, {}),
    ...(s.spec
      ? { spec: { replicas: s.spec.replicas, selector: s.spec.selector, serviceName: '', template: {} } }
      : {}),
    ...(s.status ? { status: { replicas: s.status.replicas, readyReplicas: s.status.readyReplicas } } : {}),
  };
}

/** A ReplicaSet as pod ownership reads it: which Deployment controls it. */
export function trimReplicaSet(rs: V1ReplicaSet): V1ReplicaSet {
  const m = meta(rs.metadata, {});
  const owners = controllerRef(rs.metadata?.ownerReferences);
  if (owners) m.ownerReferences = owners;
  return { metadata: m };
}

/**
 * A Job as its outcome is read (protocol/job-outcome.ts): its conditions and counts, the pods
 * still running or terminating and those ended but not yet counted (a decided Job is read once
 * none runs), how many completions it wants (a Job of one succeeds with its pod), and its uid
 * (its pods are told from an earlier Job's of the same name by it).
 */
export function trimJob(job: V1Job): V1Job {
  const s = job.status;
  const m = meta(job.metadata, { labels: true });
  if (job.metadata?.uid !== undefined) m.uid = job.metadata.uid;
  const spec = job.spec;
  const uncounted = s?.uncountedTerminatedPods;
  return {
    metadata: m,
    ...(spec
      ? {
          spec: {
            ...(spec.completions !== undefined ? { completions: spec.completions } : {}),
            ...(spec.parallelism !== undefined ? { parallelism: spec.parallelism } : {}),
            ...(spec.completionMode !== undefined ? { completionMode: spec.completionMode } : {}),
            ...(spec.suspend !== undefined ? { suspend: spec.suspend } : {}),
            // Required by the type, never read.
            template: {},
          },
        }
      : {}),
    ...(s
      ? {
          status: {
            ...(s.conditions ? { conditions: s.conditions } : {}),
            ...(s.completionTime ? { completionTime: s.completionTime } : {}),
            ...(s.succeeded !== undefined ? { succeeded: s.succeeded } : {}),
            ...(s.failed !== undefined ? { failed: s.failed } : {}),
            ...(s.active !== undefined ? { active: s.active } : {}),
            ...(s.terminating !== undefined ? { terminating: s.terminating } : {}),
            ...(uncounted ? { uncountedTerminatedPods: uncounted } : {}),
          },
        }
      : {}),
  };
}
