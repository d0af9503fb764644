/**
 * observe: cluster (watch-backed caches) + cloud (provider reads) → one immutable ObservedState.
 */
import type { DesiredState } from '../spec/model.js';
import type { ObservedState } from './types.js';
import type { ClusterCache } from './cluster-cache.js';
import { observeCloud, type InstanceSightings, type ProviderLookup } from './cloud.js';
import { listClusterSnapshot } from './cluster-cache.js';
import type { CountingKubeConfig } from './kube.js';
import { observeMetrics, type MetricSightings } from './metrics.js';
import { listOpenShift } from './openshift.js';

export * from './types.js';
export {
  startClusterCache,
  buildClusterSnapshot,
  listClusterSnapshot,
  DRYDOCK_JOB_SELECTOR,
  type ClusterCache,
  type ClusterSnapshot,
  type ClusterCacheOptions,
} from './cluster-cache.js';
export { InstanceSightings, observeCloud, type ProviderLookup } from './cloud.js';
export {
  loadKubeConfig,
  cloneKubeConfig,
  CountingKubeConfig,
  KubeConfigError,
  type ApiRequest,
  type RequestListener,
} from './kube.js';
export { matchesSelector, selectorString } from './selector.js';
export { listOpenShift, startOpenShiftCache, type OpenShiftCache } from './openshift.js';
export { MetricSightings, metricGatesKey, metricGatesOf, observeMetrics } from './metrics.js';

/**
 * The cluster read once, for one-shot read-only commands (`drydock plan`): one list per
 * resource, and ClusterVersion and the pools only when a MutexRunConfig reads them.
 */
export async function listCluster(
  kc: CountingKubeConfig,
  desired: Pick<DesiredState, 'mutexRunConfigs'>,
): Promise<Pick<ClusterCache, 'snapshot' | 'openshift'>> {
  const [snapshot, openshift] = await Promise.all([
    listClusterSnapshot(kc),
    desired.mutexRunConfigs.length > 0 ? listOpenShift(kc) : undefined,
  ]);
  return { snapshot: () => snapshot, openshift: () => openshift };
}

/** The autoscaler Deployments the specs name, as namespace/name keys. */
function autoscalerKeys(desired: Pick<DesiredState, 'autoscalingStrategies'>): Set<string> {
  return new Set(desired.autoscalingStrategies.map((s) => `${s.deploymentNamespace}/${s.deploymentName}`));
}

/**
 * One ObservedState: reads the caches (no API request), each scaling group from its provider
 * and, when a rollout has metric gates, Prometheus (at the same time as the cloud).
 */
export async function observe(
  desired: Pick<DesiredState, 'scalingGroups' | 'autoscalingStrategies'> &
    Partial<Pick<DesiredState, 'mutexRunConfigs' | 'nodeImages' | 'nodeOps' | 'config'>>,
  cluster: Pick<ClusterCache, 'snapshot'> & Partial<Pick<ClusterCache, 'openshift'>>,
  providers: ProviderLookup,
  sightings?: { readonly log: InstanceSightings; readonly now: number; readonly metrics?: MetricSightings },
): Promise<ObservedState> {
  const snap = cluster.snapshot();
  const [cloud, metrics] = await Promise.all([
    observeCloud(desired, providers),
    observeMetrics(desired, sightings?.now ?? Date.now(), sightings?.metrics),
  ]);
  const groups = sightings ? sightings.log.stamp(cloud.groups, sightings.now) : cloud.groups;
  const wanted = autoscalerKeys(desired);
  // Only a MutexRunConfig reads ClusterVersion and the pools: without one, nothing is asked.
  const openshift = (desired.mutexRunConfigs?.length ?? 0) > 0 ? cluster.openshift?.() : undefined;
  return Object.freeze({
    nodes: snap.nodes,
    pods: snap.pods,
    pdbs: snap.pdbs,
    deployments: Object.freeze(
      wanted.size === 0 ? [] : snap.deployments.filter((d) => wanted.has(`${d.namespace}/${d.name}`)),
    ),
    jobs: snap.jobs,
    workloads: snap.workloads,
    cloudGroups: Object.freeze(groups),
    problems: Object.freeze(cloud.problems),
    ...(openshift !== undefined ? { openshift } : {}),
    ...(metrics !== undefined ? { metrics } : {}),
  });
}
