/**
 * The simulated Machine Config Operator: what OpenShift's MCO does to the sim cloud's nodes
 * when a MachineConfigPool's rendered config changes (mco-decide.ts says what and why). It
 * watches the pools, the ClusterVersion and the nodes, and writes what the MCO writes: the
 * pools' rendered config and status, the nodes' currentConfig, desiredConfig, state and reason
 * annotations and release-image-version label; it cordons, drains through the Eviction API (a
 * PodDisruptionBudget that allows no disruption holds the drain until it does) and reboots
 * through the simulated host (host.ts brings the node back with a new bootID).
 *
 * Level-triggered like the hosts: every step is read off the API objects (the sim's own
 * progress marks are node annotations), so a restarted simulator carries every update on.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesListObject,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Rounds } from './rounds.js';
import { watchCollection, type WatchedCollection } from '../kube/informer.js';
import type { SimMcoConfig } from '../cloud/sim/config.js';
import { SIM_LABELS } from '../cloud/sim/nodes.js';
import { applyHostStep } from './host.js';
import {
  decideMco,
  MCO_KEYS,
  type ClusterVersion,
  type MachineConfigPool,
  type McoNodeStep,
  type McoStep,
} from './mco-decide.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const POOLS = { group: 'machineconfiguration.openshift.io', version: 'v1', plural: 'machineconfigpools' } as const;
const CLUSTER_VERSIONS = { group: 'config.openshift.io', version: 'v1', plural: 'clusterversions' } as const;
/** How soon a drain that is still waiting (a PDB, a pod going away) is tried again. */
const DRAIN_RETRY_MS = 1000;
/** Long enough for a watch to deliver what a step wrote. */
const APPLIED_MEMORY_MS = 30_000;

export interface SimMcoOptions {
  readonly kubeConfig: KubeConfig;
  readonly config: SimMcoConfig;
  /** Seconds a node stays down for the update's reboot (the hosts' rebootSeconds). */
  readonly rebootSeconds: number;
  readonly logger: Logger;
  /** Default Date.now. */
  readonly now?: () => number;
}

export interface SimMco {
  /** Resolves once the first lists are in. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

export function startSimMco(options: SimMcoOptions): SimMco {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
  const log = options.logger.child({ component: 'sim-mco' });
  const now = options.now ?? Date.now;
  const rounds = new Rounds(() => round());
  /**
   * Steps this process applied lately, by when: the watched objects catch up a moment later. They
   * are forgotten after a while, so the same step may come again (a release rolled back).
   */
  const applied = new Map<string, number>();

  const onChange = (): void => rounds.schedule(0);
  const common = { kubeConfig: options.kubeConfig, logger: log, onChange };
  const customPath = (r: typeof POOLS | typeof CLUSTER_VERSIONS) => `/apis/${r.group}/${r.version}/${r.plural}`;
  const pools: WatchedCollection<MachineConfigPool> = watchCollection({
    ...common,
    name: 'sim-mco-pools',
    path: customPath(POOLS),
    list: async () => (await custom.listClusterCustomObject(POOLS)) as KubernetesListObject<MachineConfigPool>,
  });
  const clusterVersions: WatchedCollection<ClusterVersion> = watchCollection({
    ...common,
    name: 'sim-mco-clusterversions',
    path: customPath(CLUSTER_VERSIONS),
    list: async () => (await custom.listClusterCustomObject(CLUSTER_VERSIONS)) as KubernetesListObject<ClusterVersion>,
  });
  const nodes: WatchedCollection<V1Node> = watchCollection<V1Node>({
    ...common,
    name: 'sim-mco-nodes',
    path: '/api/v1/nodes',
    labelSelector: SIM_LABELS.group,
    list: () => core.listNode({ labelSelector: SIM_LABELS.group }),
  });

  /** Applies steps in order; false when one could not be done yet (then the round is tried again). */
  async function applySteps(steps: readonly McoStep[]): Promise<boolean> {
    for (const step of steps) {
      if (rounds.isStopped) return true;
      const where = 'node' in step ? { node: step.node } : 'pool' in step ? { pool: step.pool } : {};
      try {
        const done = await applyStep(core, custom, step, now());
        if (!done) {
          log.info({ step: step.kind, ...where }, 'MCO step waits; retrying');
          return false;
        }
        applied.set(step.key, now());
        if (step.kind !== 'poolStatus') log.info({ step: step.kind, ...where }, 'MCO step applied');
      } catch (err) {
        const { code, body } = err as { code?: unknown; body?: unknown };
        log.warn({ step: step.kind, ...where, code, body }, 'MCO step failed; retrying');
        return false;
      }
    }
    return true;
  }

  async function round(): Promise<void> {
    if (rounds.isStopped || !(pools.isSynced() && clusterVersions.isSynced() && nodes.isSynced())) return;
    const { steps, nextAt } = decideMco({
      pools: pools.list(),
      clusterVersions: clusterVersions.list(),
      nodes: nodes.list(),
      config: options.config,
      rebootSeconds: options.rebootSeconds,
      now: now(),
    });
    for (const [key, at] of applied) if (now() - at > APPLIED_MEMORY_MS) applied.delete(key);
    // Each node is its own machine: its steps in order, different nodes' at once.
    const groups = new Map<string, McoStep[]>();
    for (const step of steps) {
      if (applied.has(step.key)) continue;
      // A pool's and the ClusterVersion's writes do not wait for one another.
      const group = 'node' in step ? `node:${step.node}` : 'pool' in step ? `pool:${step.pool}` : step.kind;
      groups.set(group, [...(groups.get(group) ?? []), step]);
    }
    const results = await Promise.all([...groups.values()].map(applySteps));
    if (results.includes(false)) rounds.schedule(DRAIN_RETRY_MS);
    else if (nextAt !== undefined) rounds.schedule(nextAt - now());
  }

  return {
    synced: Promise.all([pools.synced, clusterVersions.synced, nodes.synced]).then(() => undefined),
    stop: async () => {
      rounds.stop();
      await Promise.all([pools.stop(), clusterVersions.stop(), nodes.stop()]);
      await rounds.finished();
    },
  };
}

/** One step against the API; each is safe to repeat. False: not done yet (a drain still waiting). */
async function applyStep(core: CoreV1Api, custom: CustomObjectsApi, step: McoStep, now: number): Promise<boolean> {
  switch (step.kind) {
    case 'render':
      await custom.patchClusterCustomObject(
        { ...POOLS, name: step.pool, body: { spec: { configuration: { name: step.config } } } },
        MERGE,
      );
      return true;
    case 'poolStatus':
      await custom.patchClusterCustomObjectStatus({ ...POOLS, name: step.pool, body: { status: step.status } }, MERGE);
      return true;
    case 'clusterVersion':
      // The whole status, as a JSON patch: a merge patch would drop a Partial entry's null completionTime.
      await custom.patchClusterCustomObjectStatus(
        { ...CLUSTER_VERSIONS, name: step.name, body: [{ op: 'add', path: '/status', value: step.status }] },
        JSON_PATCH,
      );
      return true;
    case 'drain':
      return drain(core, step);
    case 'reboot':
      await patchNode(core, step.node, { metadata: { annotations: { [MCO_KEYS.rebootFrom]: step.bootID } } });
      await applyHostStep(
        core,
        { kind: 'goDown', key: step.key, node: step.node, until: step.until, conditions: step.conditions },
        new Date(now).toISOString(),
      );
      return true;
    default:
      await patchNode(core, step.node, nodePatch(step));
      return true;
  }
}

/** The node patch of a controller or daemon step that only writes the node. */
export function nodePatch(step: Exclude<McoNodeStep, { kind: 'drain' | 'reboot' }>): object {
  switch (step.kind) {
    case 'adopt':
      return {
        metadata: {
          annotations: {
            [MCO_KEYS.currentConfig]: step.config,
            [MCO_KEYS.desiredConfig]: step.config,
            [MCO_KEYS.state]: 'Done',
          },
          ...(step.version === undefined ? {} : { labels: { [MCO_KEYS.releaseVersion]: step.version } }),
        },
      };
    case 'setDesired':
      return { metadata: { annotations: { [MCO_KEYS.desiredConfig]: step.config } } };
    case 'degrade':
      return { metadata: { annotations: { [MCO_KEYS.state]: 'Degraded', [MCO_KEYS.reason]: step.reason } } };
    case 'start':
      // Working first, then the cordon: in one patch, as the daemon's cordon follows at once.
      return {
        metadata: { annotations: { [MCO_KEYS.state]: 'Working', [MCO_KEYS.reason]: '' } },
        spec: { unschedulable: true },
      };
    case 'finish':
      return {
        metadata: {
          annotations: {
            [MCO_KEYS.currentConfig]: step.config,
            [MCO_KEYS.state]: 'Done',
            [MCO_KEYS.reason]: '',
            [MCO_KEYS.drained]: null,
            [MCO_KEYS.rebootFrom]: null,
          },
          ...(step.version === undefined ? {} : { labels: { [MCO_KEYS.releaseVersion]: step.version } }),
        },
        spec: { unschedulable: null },
      };
  }
}

async function patchNode(core: CoreV1Api, name: string, body: object): Promise<void> {
  await core.patchNode({ name, body }, STRATEGIC);
}

/** Pods a drain evicts: as `oc adm drain` in the MCO, DaemonSet and static (mirror) pods stay, and finished pods are gone already. */
export function toEvict(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (pod.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) return false;
  return !(pod.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
}

/** Evicts what is left on the node; done once nothing to evict is left (a refused eviction waits for the next try). */
async function drain(core: CoreV1Api, step: Extract<McoStep, { kind: 'drain' }>): Promise<boolean> {
  const pods = (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${step.node}` })).items.filter(
    toEvict,
  );
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp !== undefined) continue;
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    try {
      await core.createNamespacedPodEviction({
        name,
        namespace,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
      });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // 429: a PodDisruptionBudget allows no disruption now; 404: the pod is gone already.
      if (code !== 429 && code !== 404) throw err;
    }
  }
  if (pods.length > 0) return false;
  await patchNode(core, step.node, { metadata: { annotations: { [MCO_KEYS.drained]: step.config } } });
  return true;
}
