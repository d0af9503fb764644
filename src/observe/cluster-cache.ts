/**
 * The cluster half of observation: watch-backed caches (nodes, pods in every namespace,
 * PodDisruptionBudgets, Deployments, StatefulSets, ReplicaSets, drydock's Jobs). After the initial lists a snapshot is
 * built from memory alone, so an idle reconcile makes no API request; the snapshot is rebuilt
 * only after a watch event and otherwise returned as the same frozen object.
 */
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  PolicyV1Api,
  type KubernetesObject,
  type V1Deployment,
  type V1Job,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
  type V1ReplicaSet,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { JOB_NAME_LABEL } from '../protocol/job-outcome.js';
import { LABELS } from '../protocol/keys.js';
import type {
  ObservedDeployment,
  ObservedJob,
  ObservedNode,
  ObservedOpenShift,
  ObservedPDB,
  ObservedPod,
} from './types.js';
import { startOpenShiftCache } from './openshift.js';
import { SeenWrites, type Written } from './seen-writes.js';
import { pdbAndPods, PdbSettledWaiters } from './pdb-settled.js';
import { toObservedDeployment, toObservedJob, toObservedNode, toObservedPDB, toObservedPod } from './convert.js';
import { matchesSelector } from './selector.js';
import { podWorkload, replicaSetOwners, toObservedWorkloads, type ObservedWorkload } from './workloads.js';
import { watchCollection, type CollectionChange, type WatchedCollection } from '../kube/informer.js';
import type { CountingKubeConfig } from './kube.js';
import {
  sameContent,
  sameTrimmed,
  trimDeployment,
  trimJob,
  trimNode,
  trimPDB,
  trimPod,
  trimReplicaSet,
  trimStatefulSet,
} from './trim.js';

/** The cluster part of an ObservedState. */
export interface ClusterSnapshot {
  readonly nodes: readonly ObservedNode[];
  readonly pods: readonly ObservedPod[];
  readonly pdbs: readonly ObservedPDB[];
  /** Every Deployment; `observe` keeps only the autoscalers the specs name. */
  readonly deployments: readonly ObservedDeployment[];
  readonly jobs: readonly ObservedJob[];
  readonly workloads: readonly ObservedWorkload[];
}

export interface ClusterCacheOptions {
  readonly kubeConfig: CountingKubeConfig;
  readonly logger: Logger;
  /** Called after any watched object changed (debounce on the caller's side). */
  readonly onChange?: () => void;
  readonly onError?: (collection: string, err: unknown) => void;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
}

export interface ClusterCache {
  /** Resolves once every collection has listed once. */
  synced(): Promise<void>;
  isSynced(): boolean;
  snapshot(): ClusterSnapshot;
  /** The Node the caches hold under that name (trimmed: trim.ts), if any. */
  node(name: string): V1Node | undefined;
  /**
   * ClusterVersion and the MachineConfigPools (openshift.ts): the first call starts observing
   * them; undefined until they are read (or known not to be served).
   */
  openshift(): ObservedOpenShift | undefined;
  /**
   * Resolves true once the caches have seen every one of drydock's writes in `writes`
   * (seen-writes.ts), false after `timeoutMs` if some write has not shown up.
   */
  whenSeen(writes: readonly Written[], timeoutMs: number): Promise<boolean>;
  /**
   * Resolves true once the disruption controller has nothing left to write to the PDB `key`
   * (namespace/name) as the caches see it (pdb-settled.ts), the pods of `evicted` (uids) counted
   * as being deleted; false after `timeoutMs`.
   */
  whenPdbSettled(key: string, evicted: ReadonlySet<string>, timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

/** Jobs drydock creates carry this label; only those are watched. */
export const DRYDOCK_JOB_SELECTOR = `${LABELS.managedBy}=drydock`;

function byNamespacedName(a: { namespace: string; name: string }, b: { namespace: string; name: string }): number {
  return a.namespace < b.namespace
    ? -1
    : a.namespace > b.namespace
      ? 1
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Conversions remembered per cached object, so a rebuild after one watch event converts only
 * what changed: the informer replaces an object on update, so an object seen before is
 * unchanged. A pod's conversion also reads which PDBs cover it and which Deployment owns its
 * ReplicaSet: pods are remembered per namespace, and the cache forgets a namespace's pods
 * (forgetPods) when a PDB there is added, deleted or changes its selector, or a ReplicaSet
 * there changes; a PDB's status moving (every eviction moves it) converts no pod again.
 */
export interface ConversionMemo {
  readonly objects: WeakMap<object, unknown>;
  readonly pods: Map<string, WeakMap<V1Pod, ObservedPod>>;
}

export function newConversionMemo(): ConversionMemo {
  return { objects: new WeakMap(), pods: new Map() };
}

/** The pods of `namespace` are to be converted again (their PDBs or owners changed). */
export function forgetPods(memo: ConversionMemo, namespace: string): void {
  memo.pods.delete(namespace);
}

function remembered<T extends object, R>(memo: ConversionMemo | undefined, convert: (raw: T) => R): (raw: T) => R {
  if (!memo) return convert;
  return (raw) => {
    const hit = memo.objects.get(raw) as R | undefined;
    if (hit !== undefined) return hit;
    const out = convert(raw);
    memo.objects.set(raw, out);
    return out;
  };
}

/** Builds a snapshot from raw objects: pure, so it is tested without a cluster. */
export function buildClusterSnapshot(
  raw: {
    readonly nodes: readonly V1Node[];
    readonly pods: readonly V1Pod[];
    readonly pdbs: readonly V1PodDisruptionBudget[];
    readonly deployments: readonly V1Deployment[];
    readonly jobs: readonly V1Job[];
    readonly statefulSets?: readonly V1StatefulSet[];
    readonly replicaSets?: readonly V1ReplicaSet[];
  },
  memo?: ConversionMemo,
): ClusterSnapshot {
  const rsOwners = replicaSetOwners(raw.replicaSets ?? []);
  const pdbs = raw.pdbs.map(remembered(memo, toObservedPDB)).sort(byNamespacedName);
  const pdbsByNamespace = new Map<string, ObservedPDB[]>();
  for (const pdb of pdbs) {
    const list = pdbsByNamespace.get(pdb.namespace) ?? [];
    list.push(pdb);
    pdbsByNamespace.set(pdb.namespace, list);
  }
  const seen = new Set<string>();
  // The informer lists a namespace's pods together: the last namespace's memo is reused.
  let last: { namespace: string; known: WeakMap<V1Pod, ObservedPod> } | undefined;
  const podMemo = (namespace: string): WeakMap<V1Pod, ObservedPod> | undefined => {
    if (!memo) return undefined;
    if (last?.namespace === namespace) return last.known;
    seen.add(namespace);
    let known = memo.pods.get(namespace);
    if (!known) memo.pods.set(namespace, (known = new WeakMap()));
    last = { namespace, known };
    return known;
  };
  // Pods covered by the same PDBs share one frozen list, and pods of one workload one key.
  const shared = new Map<string, string | readonly string[]>();
  const share = <V extends string | readonly string[]>(key: string, make: () => V): V => {
    const hit = shared.get(key) as V | undefined;
    if (hit !== undefined) return hit;
    const made = make();
    shared.set(key, made);
    return made;
  };
  const pods = raw.pods
    // Pods not yet scheduled belong to no node; a drain never waits for them.
    .filter((p) => (p.spec?.nodeName ?? '') !== '')
    .map((p) => {
      const namespace = p.metadata?.namespace ?? '';
      const known = podMemo(namespace);
      const hit = known?.get(p);
      if (hit) return hit;
      const labels = p.metadata?.labels ?? {};
      const covering = (pdbsByNamespace.get(namespace) ?? [])
        .filter((pdb) => matchesSelector(pdb.selector, labels))
        .map((pdb) => `${pdb.namespace}/${pdb.name}`)
        .sort();
      const pdbKeys = share(`pdbs\n${covering.join('\n')}`, () => Object.freeze(covering));
      const workload = podWorkload(p, rsOwners);
      const out = toObservedPod(p, pdbKeys, workload === undefined ? undefined : share(workload, () => workload));
      known?.set(p, out);
      return out;
    })
    .sort(byNamespacedName);
  for (const namespace of memo?.pods.keys() ?? []) if (!seen.has(namespace)) memo?.pods.delete(namespace);
  const jobPods = raw.jobs.length > 0 ? podsByJob(raw.pods) : new Map<string, V1Pod[]>();
  return Object.freeze({
    nodes: Object.freeze(raw.nodes.map(remembered(memo, toObservedNode)).sort(byName)),
    pods: Object.freeze(pods),
    pdbs: Object.freeze(pdbs),
    deployments: Object.freeze(raw.deployments.map(remembered(memo, toObservedDeployment)).sort(byNamespacedName)),
    jobs: Object.freeze(raw.jobs.map((j) => toObservedJob(j, podsOfJob(jobPods, j))).sort(byNamespacedName)),
    workloads: Object.freeze(toObservedWorkloads(raw.deployments, raw.statefulSets ?? [])),
  });
}

/**
 * A Job's pods, for its outcome (a Job of one completion succeeds with its pod) and its
 * termination message. Only drydock's Jobs are watched, and the pod informer holds every pod
 * already, so this costs no request and no extra cache.
 */
function podsOfJob(jobPods: ReadonlyMap<string, readonly V1Pod[]>, job: V1Job): readonly V1Pod[] {
  return jobPods.get(`${job.metadata?.namespace ?? ''}/${job.metadata?.name ?? ''}`) ?? [];
}

/** The pods of Jobs (labelled with their Job's name), by the Job's namespace/name. */
function podsByJob(pods: readonly V1Pod[]): Map<string, V1Pod[]> {
  const out = new Map<string, V1Pod[]>();
  for (const p of pods) {
    const job = p.metadata?.labels?.[JOB_NAME_LABEL];
    if (job === undefined) continue;
    const key = `${p.metadata?.namespace ?? ''}/${job}`;
    const list = out.get(key);
    if (list === undefined) out.set(key, [p]);
    else list.push(p);
  }
  return out;
}

/** What every watched collection of the cluster cache is given, by its name. */
type CommonWatchOptions = (
  name: string,
) => Omit<Parameters<typeof watchCollection<KubernetesObject>>[0], 'trim' | 'path' | 'list' | 'labelSelector'>;

/** The seven collections a round reads, each one list and one watch. */
function watchKubeCollections(
  kc: CountingKubeConfig,
  common: CommonWatchOptions,
  onPodInputChange: (change: CollectionChange<V1PodDisruptionBudget | V1ReplicaSet>) => void,
) {
  const core = kc.makeApiClient(CoreV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const nodes: WatchedCollection<V1Node> = watchCollection({
    ...common('nodes'),
    trim: trimNode,
    path: '/api/v1/nodes',
    list: (page) => core.listNode(page),
  });
  const pods: WatchedCollection<V1Pod> = watchCollection({
    ...common('pods'),
    trim: trimPod,
    path: '/api/v1/pods',
    list: (page) => core.listPodForAllNamespaces(page),
  });
  const pdbs: WatchedCollection<V1PodDisruptionBudget> = watchCollection({
    ...common('poddisruptionbudgets'),
    onChange: onPodInputChange,
    trim: trimPDB,
    path: '/apis/policy/v1/poddisruptionbudgets',
    list: (page) => policy.listPodDisruptionBudgetForAllNamespaces(page),
  });
  const deployments: WatchedCollection<V1Deployment> = watchCollection({
    ...common('deployments'),
    trim: trimDeployment,
    path: '/apis/apps/v1/deployments',
    list: (page) => apps.listDeploymentForAllNamespaces(page),
  });
  const jobs: WatchedCollection<V1Job> = watchCollection({
    ...common('jobs'),
    trim: trimJob,
    path: '/apis/batch/v1/jobs',
    labelSelector: DRYDOCK_JOB_SELECTOR,
    list: (page) => batch.listJobForAllNamespaces({ ...page, labelSelector: DRYDOCK_JOB_SELECTOR }),
  });
  // Held for the health gate: which workload a pod belongs to, and whether it is back.
  const statefulSets: WatchedCollection<V1StatefulSet> = watchCollection({
    ...common('statefulsets'),
    trim: trimStatefulSet,
    path: '/apis/apps/v1/statefulsets',
    list: (page) => apps.listStatefulSetForAllNamespaces(page),
  });
  const replicaSets: WatchedCollection<V1ReplicaSet> = watchCollection({
    ...common('replicasets'),
    onChange: onPodInputChange,
    trim: trimReplicaSet,
    path: '/apis/apps/v1/replicasets',
    list: (page) => apps.listReplicaSetForAllNamespaces(page),
  });
  return { nodes, pods, pdbs, deployments, jobs, statefulSets, replicaSets };
}

export function startClusterCache(opts: ClusterCacheOptions): ClusterCache {
  const kc = opts.kubeConfig;
  let current: ClusterSnapshot | undefined;
  const memo = newConversionMemo();
  // Reads the caches only once a waiter is there, after the collections below have started.
  const waiters = new PdbSettledWaiters((key) => pdbAndPods(pdbs, pods, key));
  const onChange = (): void => {
    current = undefined;
    waiters.changed();
    opts.onChange?.();
  };
  // A pod's conversion reads the PDBs covering it (their selectors) and its ReplicaSet's owner.
  const onPodInputChange = (change: CollectionChange<V1PodDisruptionBudget | V1ReplicaSet>): void => {
    const pdbSelectorKept =
      change.type === 'update' &&
      change.before !== undefined &&
      'spec' in change.object &&
      sameContent(change.before.spec, change.object.spec);
    if (!pdbSelectorKept) forgetPods(memo, change.object.metadata?.namespace ?? '');
    onChange();
  };
  const collections = new Map<string, WatchedCollection<KubernetesObject>>();
  const seen = new SeenWrites(
    (w) => collections.get(w.collection)?.get(w.name, w.namespace)?.metadata?.resourceVersion,
  );
  const common = (name: string) => ({
    kubeConfig: kc,
    name,
    logger: opts.logger,
    onChange,
    onEvent: (obj: KubernetesObject) => seen.saw(name, obj.metadata?.resourceVersion),
    // An update that changed only what trimming dropped is no change (informer.ts).
    same: sameTrimmed,
    onError: (err: unknown) => opts.onError?.(name, err),
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
  });

  const { nodes, pods, pdbs, deployments, jobs, statefulSets, replicaSets } = watchKubeCollections(
    kc,
    common,
    onPodInputChange,
  );
  const all = [nodes, pods, pdbs, deployments, jobs, statefulSets, replicaSets] as const;
  for (const c of all) collections.set(c.name, c);
  const openshift = startOpenShiftCache({
    kubeConfig: kc,
    logger: opts.logger,
    onChange: () => opts.onChange?.(),
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
  });

  const snapshot = (): ClusterSnapshot => {
    current ??= buildClusterSnapshot(
      {
        nodes: nodes.list(),
        pods: pods.list(),
        pdbs: pdbs.list(),
        deployments: deployments.list(),
        jobs: jobs.list(),
        statefulSets: statefulSets.list(),
        replicaSets: replicaSets.list(),
      },
      memo,
    );
    return current;
  };

  return {
    synced: async () => {
      await Promise.all(all.map((c) => c.synced));
    },
    isSynced: () => all.every((c) => c.isSynced()),
    snapshot,
    node: (name) => nodes.get(name),
    openshift: () => openshift.view(),
    whenSeen: (writes, timeoutMs) => seen.whenSeen(writes, timeoutMs),
    whenPdbSettled: (key, evicted, timeoutMs) => waiters.when(key, evicted, timeoutMs),
    stop: async () => {
      seen.stop();
      waiters.stop();
      await Promise.all([...all.map((c) => c.stop()), openshift.stop()]);
    },
  };
}

/**
 * One snapshot from one list per resource, no watch: for one-shot, read-only commands
 * (`drydock plan`), which need only get/list rights.
 */
export async function listClusterSnapshot(kc: CountingKubeConfig): Promise<ClusterSnapshot> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const [nodes, pods, pdbs, deployments, jobs, statefulSets, replicaSets] = await Promise.all([
    core.listNode(),
    core.listPodForAllNamespaces(),
    kc.makeApiClient(PolicyV1Api).listPodDisruptionBudgetForAllNamespaces(),
    apps.listDeploymentForAllNamespaces(),
    kc.makeApiClient(BatchV1Api).listJobForAllNamespaces({ labelSelector: DRYDOCK_JOB_SELECTOR }),
    apps.listStatefulSetForAllNamespaces(),
    apps.listReplicaSetForAllNamespaces(),
  ]);
  return buildClusterSnapshot({
    nodes: nodes.items,
    pods: pods.items,
    pdbs: pdbs.items,
    deployments: deployments.items,
    jobs: jobs.items,
    statefulSets: statefulSets.items,
    replicaSets: replicaSets.items,
  });
}
