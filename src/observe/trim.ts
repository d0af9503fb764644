/**
 * What the caches keep of each object: only the fields `convert.ts` reads. client-node's
 * informer stores every object whole (managedFields, container specs, images, volumes, the
 * last-applied annotation), which at 50,000 pods is most of drydock's memory; these functions
 * replace an object's contents in place with the part the planner sees, on every add and update,
 * before anything else holds it. metadata.name, namespace and resourceVersion stay: the cache
 * keys and compares by them.
 */
import type {
  KubernetesObject,
  V1Deployment,
  V1ContainerStatus,
  V1Job,
  V1Node,
  V1ObjectMeta,
  V1Pod,
  V1PodDisruptionBudget,
  V1ReplicaSet,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { DRYDOCK_PREFIX } from '../protocol/keys.js';

/** The only foreign annotation a pod is read for: it marks a static (mirror) pod. */
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

function meta(m: V1ObjectMeta | undefined, keep: { labels?: boolean; annotations?: (key: string) => boolean }) {
  const out: V1ObjectMeta = {};
  if (!m) return out;
  if (m.name !== undefined) out.name = m.name;
  if (m.namespace !== undefined) out.namespace = m.namespace;
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (keep.labels && m.labels) out.labels = m.labels;
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
  return [
    {
      type: ready.type,
      status: ready.status,
      ...(ready.lastTransitionTime !== undefined ? { lastTransitionTime: ready.lastTransitionTime } : {}),
    } as C,
  ];
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

/** Replaces `target`'s own properties with `kept`'s. */
function replaceWith<T extends KubernetesObject>(target: T, kept: T): void {
  for (const key of Object.keys(target)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, kept);
}

export function trimNode(node: V1Node): void {
  const m = meta(node.metadata, { labels: true, annotations: () => true });
  if (node.metadata?.creationTimestamp) m.creationTimestamp = node.metadata.creationTimestamp;
  const ready = readyCondition(node.status?.conditions);
  const bootID = node.status?.nodeInfo?.bootID;
  replaceWith(node, {
    metadata: m,
    spec: {
      ...(node.spec?.providerID !== undefined ? { providerID: node.spec.providerID } : {}),
      ...(node.spec?.unschedulable !== undefined ? { unschedulable: node.spec.unschedulable } : {}),
      ...(node.spec?.taints ? { taints: node.spec.taints } : {}),
    },
    status: {
      ...(ready ? { conditions: ready } : {}),
      // nodeInfo's other fields are required by the type, never read: kept empty.
      ...(bootID !== undefined ? { nodeInfo: { bootID } as NonNullable<V1Node['status']>['nodeInfo'] } : {}),
    },
  });
}

export function trimPod(pod: V1Pod): void {
  const m = meta(pod.metadata, { labels: true, annotations: (k) => k === MIRROR_ANNOTATION });
  if (pod.metadata?.uid !== undefined) m.uid = pod.metadata.uid;
  if (pod.metadata?.deletionTimestamp) m.deletionTimestamp = pod.metadata.deletionTimestamp;
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller === true) ?? pod.metadata?.ownerReferences?.[0];
  if (owner) m.ownerReferences = [owner];
  const emptyDir = (pod.spec?.volumes ?? []).find((v) => v.emptyDir !== undefined && v.emptyDir !== null);
  const ready = readyCondition(pod.status?.conditions);
  // A Job pod's ended containers carry the termination message status keeps (execute/jobs/outcome.ts).
  const ended = pod.status?.containerStatuses
    ?.filter((c) => c.state?.terminated !== undefined)
    .map((c) => ({ name: c.name, state: { terminated: c.state?.terminated } }) as V1ContainerStatus);
  if (pod.metadata?.creationTimestamp !== undefined) m.creationTimestamp = pod.metadata.creationTimestamp;
  replaceWith(pod, {
    metadata: m,
    // containers is required by the type and never read: kept empty.
    spec: {
      containers: [],
      ...(pod.spec?.nodeName !== undefined ? { nodeName: pod.spec.nodeName } : {}),
      ...(emptyDir ? { volumes: [emptyDir] } : {}),
    },
    status: {
      ...(pod.status?.phase !== undefined ? { phase: pod.status.phase } : {}),
      ...(ready ? { conditions: ready } : {}),
      ...(ended !== undefined && ended.length > 0 ? { containerStatuses: ended } : {}),
    },
  });
}

export function trimPDB(pdb: V1PodDisruptionBudget): void {
  const s = pdb.status;
  replaceWith(pdb, {
    metadata: meta(pdb.metadata, {}),
    spec: pdb.spec?.selector ? { selector: pdb.spec.selector } : {},
    ...(s
      ? {
          status: {
            currentHealthy: s.currentHealthy,
            desiredHealthy: s.desiredHealthy,
            disruptionsAllowed: s.disruptionsAllowed,
            expectedPods: s.expectedPods,
          },
        }
      : {}),
  });
}

export function trimDeployment(d: V1Deployment): void {
  // Only drydock's own annotations are read (the remembered replica count); the
  // last-applied-configuration annotation alone can be kilobytes.
  replaceWith(d, {
    metadata: meta(d.metadata, { annotations: (k) => k.startsWith(DRYDOCK_PREFIX) }),
    ...(d.spec ? { spec: { replicas: d.spec.replicas, selector: d.spec.selector, template: {} } } : {}),
    // The health gate waits for an evicted workload's ready count (observe/workloads.ts).
    ...(d.status?.readyReplicas !== undefined ? { status: { readyReplicas: d.status.readyReplicas } } : {}),
  });
}

/** A StatefulSet as the health gate reads it: its desired and ready replicas. */
export function trimStatefulSet(s: V1StatefulSet): void {
  replaceWith(s, {
    metadata: meta(s.metadata, {}),
    ...(s.spec
      ? { spec: { replicas: s.spec.replicas, selector: s.spec.selector, serviceName: '', template: {} } }
      : {}),
    ...(s.status ? { status: { replicas: s.status.replicas, readyReplicas: s.status.readyReplicas } } : {}),
  });
}

/** A ReplicaSet as pod ownership reads it: which Deployment controls it. */
export function trimReplicaSet(rs: V1ReplicaSet): void {
  const m = meta(rs.metadata, {});
  const owner = rs.metadata?.ownerReferences?.find((r) => r.controller === true) ?? rs.metadata?.ownerReferences?.[0];
  if (owner) m.ownerReferences = [owner];
  replaceWith(rs, { metadata: m });
}

export function trimJob(job: V1Job): void {
  const s = job.status;
  replaceWith(job, {
    metadata: meta(job.metadata, { labels: true }),
    ...(s
      ? {
          status: {
            ...(s.conditions ? { conditions: s.conditions } : {}),
            ...(s.completionTime ? { completionTime: s.completionTime } : {}),
            ...(s.succeeded !== undefined ? { succeeded: s.succeeded } : {}),
            ...(s.failed !== undefined ? { failed: s.failed } : {}),
          },
        }
      : {}),
  });
}
