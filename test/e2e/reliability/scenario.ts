/**
 * The reliability world: one control plane (KWOK leaves Job pods to the sim hosts), the sim
 * cloud with its workers, workloads under PDBs, the autoscaler Deployment, a fleet repository on
 * a real Git server, and the invariant monitor watching all of it. Seeds and sizes come from
 * the environment so the full run is the same suite with bigger numbers.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { parseSimConfigText } from '../../../src/cloud/index.js';
import { runSimCloud, type RunningSimCloud } from '../../../src/sim-host/index.js';
import { nodeOpRecordKey } from '../../../src/protocol/keys.js';
import { eventually, type ControlPlane } from '../../support/control-plane.js';
import {
  applyDeployRbac,
  applyWorkloads,
  drydockArgs,
  E2E_APPS,
  E2E_NAMESPACE,
  IMAGE_V1,
  locked,
  rolloutYaml,
  serviceAccountKubeconfig,
  startFleetRepo,
  tempDir,
  viewNode,
  type FleetRepo,
  type NodeView,
} from '../world.js';
import { InvariantMonitor } from './monitor.js';

export const JOB_NAMESPACE = 'drydock-system';
export const BUDGET = 2;
export const AUTOSCALER = { namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 2 };

/**
 * The Bottlerocket hosts of the crash suite's own group: their NodeImage moves them to `latest`,
 * which the first node's update Job resolves to `to`; `later` is published once it did.
 */
export const BOTTLEROCKET = {
  group: 'br',
  name: 'br',
  variant: 'aws-k8s-1.30',
  from: '1.19.2',
  to: '1.20.3',
  later: '1.21.0',
} as const;

/** What a Bottlerocket host on `version` reports in status.nodeInfo.osImage. */
export function bottlerocketOs(version: string): string {
  return `Bottlerocket OS ${version} (${BOTTLEROCKET.variant})`;
}

/** Hosts in the Bottlerocket group: 3 for the subset's 10 workers, 4 for the full run's 20. */
export function bottlerocketHosts(workers: number): number {
  return Math.max(3, Math.round(workers * 0.2));
}

export interface ReliabilitySettings {
  readonly seed: number;
  /** Kill points aimed at over the crash suite's five scenarios. */
  readonly kills: number;
  /** Workers in the crash suite's group: the replace rollout's size; NodeOp targets are a share of it. */
  readonly workers: number;
  /**
   * The exhaustive pass: every life killed right before and right after the first call of each
   * kind not yet killed at, no seeded counts; otherwise seeded counts, and after each kind of
   * NEVER_SEEDED once.
   */
  readonly exhaustive: boolean;
}

/**
 * `DRYDOCK_RELIABILITY_SEED` (default 1), `DRYDOCK_RELIABILITY_KILLS` (default 10) and
 * `DRYDOCK_RELIABILITY_WORKERS` (default 10): the defaults are the subset `npm test` runs; the
 * full run asks for 60 kills over 20 workers. `DRYDOCK_RELIABILITY_EXHAUSTIVE=1`: the
 * exhaustive pass, by kind of call instead of seeded counts.
 */
export function reliabilitySettings(env: NodeJS.ProcessEnv = process.env): ReliabilitySettings {
  const int = (name: string, fallback: number, min = 0): number => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min) throw new Error(`${name} must be a whole number ≥ ${min}, got "${v}"`);
    return Number(v);
  };
  return {
    seed: int('DRYDOCK_RELIABILITY_SEED', 1),
    kills: int('DRYDOCK_RELIABILITY_KILLS', 10),
    workers: int('DRYDOCK_RELIABILITY_WORKERS', 10, 10),
    exhaustive: int('DRYDOCK_RELIABILITY_EXHAUSTIVE', 0) > 0,
  };
}

export function specDoc(kind: string, name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: 'drydock.dev/v1alpha1', kind, metadata: { name }, spec });
}

/**
 * A drain's clock runs across kills (it counts from the phase's annotation): each restart costs
 * 10-20 s on a loaded machine, and an eviction a PDB refuses waits for the previous evictee's
 * replacement. At 60 s a full run on a machine at load 10 halted on a drain timeout. These
 * scenarios prove crash safety; drain timeouts are the faults suite's PDB hold.
 */
const DRAIN_TIMEOUT_SECONDS = 600;

export function workerImageDoc(image: string, rollout: Record<string, unknown> = {}): string {
  const drain = { ...(rolloutYaml()['drain'] as object), timeoutSeconds: DRAIN_TIMEOUT_SECONDS };
  return specDoc('NodeImage', 'worker', {
    image,
    strategy: 'replace',
    rollout: rolloutYaml({ maxSurge: 2, maxUnavailable: 2, concurrency: 2, drain, ...rollout }),
  });
}

export function initialFiles(): Record<string, string> {
  return {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'reliability',
      budget: { maxUnavailable: BUDGET },
      paths: ['specs'],
      statusBranch: 'drydock/status',
    }),
    'specs/workers.yaml': specDoc('ScalingGroup', 'workers', {
      provider: 'sim',
      groupId: 'workers',
      nodeImage: 'worker',
      role: 'worker',
      autoscaling: true,
    }),
    'specs/worker-image.yaml': workerImageDoc(IMAGE_V1),
    'specs/autoscaler.yaml': specDoc('AutoscalingStrategy', 'cluster-autoscaler', {
      enabled: true,
      deploymentName: AUTOSCALER.name,
      deploymentNamespace: AUTOSCALER.namespace,
    }),
  };
}

export interface ReliabilityWorld {
  readonly sim: RunningSimCloud;
  readonly repo: FleetRepo;
  readonly monitor: InvariantMonitor;
  /** `drydock run` flags: deploy/'s ServiceAccount, its namespace, fast polling. */
  readonly args: string[];
  readonly dirs: string[];
  /** Workers in the group. */
  readonly size: number;
}

export async function startReliabilityWorld(cp: ControlPlane, size: number): Promise<ReliabilityWorld> {
  const kc = cp.adminKubeConfig();
  const stateDir = tempDir('drydock-rel-sim-');
  const cacheDir = tempDir('drydock-rel-cache-');
  const hosts = bottlerocketHosts(size);
  const bottlerocket = {
    id: BOTTLEROCKET.group,
    role: 'worker',
    size: hosts,
    image: `bottlerocket-${BOTTLEROCKET.variant}`,
    bottlerocket: {
      version: BOTTLEROCKET.from,
      variant: BOTTLEROCKET.variant,
      available: [BOTTLEROCKET.from, BOTTLEROCKET.to],
    },
  };
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds: 1,
      terminateDelaySeconds: 1,
      groups: [{ id: 'workers', role: 'worker', size, image: IMAGE_V1 }, bottlerocket],
      quota: { maxInstancesPerGroup: size + 6 },
      host: { rebootSeconds: 2, jobRunSeconds: 1 },
    }),
  );
  const running = await runSimCloud({
    config,
    stateDir,
    kubeconfigPath: cp.kubeconfigPath,
    host: '127.0.0.1',
    port: 0,
  });
  await eventually(`${size} workers Ready`, async () => (await workers(kc)).filter((n) => n.ready).length === size, {
    timeoutMs: 90_000,
  });
  await eventually(
    `${hosts} Bottlerocket hosts Ready`,
    async () => (await bottlerocketNodes(kc)).filter((n) => n.ready).length === hosts,
    { timeoutMs: 60_000 },
  );
  await applyWorkloads(kc);
  const want = E2E_APPS.reduce((n, a) => n + a.replicas, 0);
  await eventually(
    'workload pods Running',
    async () => {
      const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: E2E_NAMESPACE });
      return pods.items.length === want && pods.items.every((p) => p.status?.phase === 'Running');
    },
    { timeoutMs: 60_000 },
  );
  await applyDeployRbac(kc);
  const repo = await startFleetRepo(initialFiles());
  const monitor = new InvariantMonitor(kc, running, {
    budget: BUDGET,
    jobNamespace: JOB_NAMESPACE,
    autoscaler: AUTOSCALER,
  });
  monitor.expectAutoscaler(AUTOSCALER.replicas);
  monitor.start();
  const args = drydockArgs(repo, await serviceAccountKubeconfig(cp), running.url, cacheDir, JOB_NAMESPACE);
  return { sim: running, repo, monitor, args, dirs: [stateDir, cacheDir], size };
}

export async function workers(kc: KubeConfig): Promise<NodeView[]> {
  return groupNodes(kc, 'workers');
}

async function groupNodes(kc: KubeConfig, group: string): Promise<(NodeView & { osImage: string })[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: `sim.drydock.dev/group=${group}` });
  return list.items
    .map((n) => ({ ...viewNode(n), osImage: n.status?.nodeInfo?.osImage ?? '' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The Bottlerocket group's nodes, with the osImage each reports. */
export function bottlerocketNodes(kc: KubeConfig): Promise<(NodeView & { osImage: string })[]> {
  return groupNodes(kc, BOTTLEROCKET.group);
}

/** The Bottlerocket NodeImage: every host of its group to `latest`, two at a time, no drain (the NodeOps drain). */
export function bottlerocketDoc(): string {
  return specDoc('NodeImage', BOTTLEROCKET.name, {
    image: 'latest',
    strategy: 'inPlace',
    inPlace: { updater: 'bottlerocket' },
    nodeSelector: { matchLabels: { 'sim.drydock.dev/group': BOTTLEROCKET.group } },
    rollout: { concurrency: 2, stopOnFailure: true, drain: { enabled: false }, healthGate: { minReadySeconds: 1 } },
  });
}

/** Every Bottlerocket host reports `version`, is Ready and free; status Complete, naming the version. */
export async function bottlerocketDone(kc: KubeConfig, repo: FleetRepo, version: string): Promise<boolean> {
  const ns = await bottlerocketNodes(kc);
  if (!ns.every((n) => n.osImage === bottlerocketOs(version) && n.ready && free(n))) return false;
  const status = (await repo.statusFile(`status/NodeImage/${BOTTLEROCKET.name}.yaml`)) ?? '';
  return /phase: Complete/.test(status) && status.includes(`resolvedImage: ${version}`);
}

/** Free of drydock: schedulable and not locked (a replacement keeps its lock's record, phase Done). */
export function free(n: NodeView): boolean {
  return !n.unschedulable && !locked(n);
}

/** Every worker on `image`, Ready and free; the status branch says the NodeImage is Complete. */
export async function replaceDone(kc: KubeConfig, repo: FleetRepo, image: string, size: number): Promise<boolean> {
  const ws = await workers(kc);
  if (ws.length !== size || !ws.every((n) => n.image === image && n.ready && free(n))) return false;
  return /phase: Complete/.test((await repo.statusFile('status/NodeImage/worker.yaml')) ?? '');
}

/**
 * NodeOp `name` is done on every target as the API server saw it (`monitor`): its Job
 * succeeded, then the node rebooted (a new bootID), and it is Ready and free. drydock must
 * also have recorded the success on each node and report the NodeOp Complete, but its own
 * record is not taken as proof that the work was done.
 */
export async function nodeOpDone(
  kc: KubeConfig,
  repo: FleetRepo,
  monitor: Pick<InvariantMonitor, 'nodeOpSeenDone'>,
  name: string,
  targets: readonly string[],
): Promise<boolean> {
  if (!targets.every((t) => monitor.nodeOpSeenDone(`NodeOp.${name}`, t))) return false;
  const ws = new Map((await workers(kc)).map((n) => [n.name, n]));
  const key = nodeOpRecordKey(name);
  const all = targets.every((t) => {
    const n = ws.get(t);
    return n !== undefined && n.annotations[key] !== undefined && n.ready && free(n);
  });
  return all && /phase: Complete/.test((await repo.statusFile(`status/NodeOp/${name}.yaml`)) ?? '');
}

export function nodeOpDoc(name: string, label: string): string {
  return specDoc('NodeOp', name, {
    nodeSelector: { matchLabels: { 'reliability-target': label } },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    drainOptions: {
      enabled: true,
      ignoreDaemonSets: true,
      deleteEmptyDirData: true,
      timeoutSeconds: DRAIN_TIMEOUT_SECONDS,
    },
    rebootOnSuccess: true,
    backoffLimit: 0,
    concurrency: 2,
    stopOnFailure: true,
  });
}

/** An UpgradeGate on NodeOp `nodeOp`: one before-Job and one after-Job per node, each a second long on the sim host. */
export function gateDoc(name: string, nodeOp: string): string {
  const job = (step: string) => ({
    name: `${name}-${step}`,
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { annotations: { 'sim.drydock.dev/run-seconds': '1', 'sim.drydock.dev/exit-code': '0' } },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'check', image: 'busybox:1.36', command: ['sh', '-c', 'echo $NODE_NAME'] }],
        },
      },
    },
  });
  return specDoc('UpgradeGate', name, {
    appliesTo: { targets: [{ kind: 'NodeOp', name: nodeOp }] },
    before: [job('before')],
    after: [job('after')],
  });
}

/** Labels `names` as NodeOp `label`'s targets (the admin does it, not drydock). */
export async function labelTargets(kc: KubeConfig, names: readonly string[], label: string): Promise<void> {
  await labelNodes(kc, names, 'reliability-target', label);
}

/** Sets label `key` on `names` (the admin does it, not drydock): a replace copies it to each replacement. */
export async function labelNodes(kc: KubeConfig, names: readonly string[], key: string, value: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (const name of names) {
    await core.patchNode({ name, body: [{ op: 'add', path: `/metadata/labels/${key}`, value }] });
  }
}
