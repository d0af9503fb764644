/**
 * The reliability world: one control plane (KWOK leaves Job pods to the sim hosts), the sim
 * cloud with its workers, workloads under PDBs, the autoscaler Deployment, a fleet repository on
 * a real Git server, and the invariant monitor watching all of it. Seeds and sizes come from
 * the environment so the full run is the same suite with bigger numbers.
 */
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { parseSimConfigText } from '../../../src/cloud/index.js';
import { runSimCloud, type RunningSimCloud } from '../../../src/sim-host/index.js';
import {
  matchesSelector,
  MCO_KEYS,
  renderedConfigName,
  type MachineConfigPool,
} from '../../../src/sim-host/mco-decide.js';
import { JOB_LABELS, nodeOpRecordKey } from '../../../src/protocol/keys.js';
import { replay, type Announced } from '../api-watch.js';
import { eventually, type ControlPlane } from '../../support/control-plane.js';
import {
  completeControlPlane,
  createClusterVersion,
  installOpenShiftCrds,
  MACHINE_CONFIG_POOL,
} from '../../support/openshift.js';
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

/**
 * The OpenShift nodes of the crash suite: a group of its own, the only nodes the simulated
 * Machine Config Operator's pools select (so it leaves the other scenarios' nodes alone). Pool
 * `worker` is the MutexTarget's, pool `canary` takes one node at a time; the run upgrades them
 * from `from` to `to` when ClusterVersion asks for it. The rule's Jobs run in drydock's own Job
 * namespace, which the invariant monitor watches.
 */
export const MCO_RUN = {
  group: 'ocp',
  size: 2,
  run: 'ocp-upgrade',
  rule: 'ocp-quiesce',
  target: 'ocp-nodes',
  pool: 'worker',
  canary: 'canary',
  from: '4.15.1',
  to: '4.15.2',
} as const;

/** The label the run's MutexRule puts on a node that waits for its turn. */
export const MCO_RULE_LABEL = `mutexrule.openshift-optional.skrzypek.io/${MCO_RUN.rule}.${JOB_NAMESPACE}`;

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
  const openshift = { id: MCO_RUN.group, role: 'worker', size: MCO_RUN.size, image: 'rhcos-v1' };
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds: 1,
      terminateDelaySeconds: 1,
      groups: [{ id: 'workers', role: 'worker', size, image: IMAGE_V1 }, bottlerocket, openshift],
      quota: { maxInstancesPerGroup: size + 6 },
      host: { rebootSeconds: 2, jobRunSeconds: 1 },
      // An OpenShift control plane takes longer than the test: the test says when it is done.
      mco: { enabled: true, controlPlaneSeconds: 3600 },
    }),
  );
  // The simulated MCO watches ClusterVersions and MachineConfigPools from its start.
  await installOpenShiftCrds(kc);
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
  await startOpenShift(kc);
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

/**
 * The OpenShift side, as installed: ClusterVersion at MCO_RUN.from with the control plane there,
 * and the two pools, the canary first (so the Machine Config Operator adopts the nodes into it
 * rather than moving them over later); it selects every node of the group until drydock makes
 * it leave out the ones that wait.
 */
async function startOpenShift(kc: KubeConfig): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  await createClusterVersion(custom, 'reliability', MCO_RUN.from);
  await completeControlPlane(custom, MCO_RUN.from);
  for (const name of [MCO_RUN.canary, MCO_RUN.pool])
    await custom.createClusterCustomObject({
      ...MACHINE_CONFIG_POOL,
      body: {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfigPool',
        metadata: { name },
        spec: {
          nodeSelector: { matchLabels: { [SIM_GROUP]: MCO_RUN.group } },
          machineConfigSelector: { matchLabels: {} },
          paused: false,
          maxUnavailable: 1,
        },
      },
    });
  await eventually(
    `${MCO_RUN.size} OpenShift nodes at ${MCO_RUN.from}`,
    async () => {
      const ns = await mcoNodes(kc);
      return ns.length === MCO_RUN.size && ns.every((n) => n.ready && mcoAt(n, MCO_RUN.from));
    },
    { timeoutMs: 60_000 },
  );
}

/** The OpenShift group's nodes. */
export function mcoNodes(kc: KubeConfig): Promise<NodeView[]> {
  return groupNodes(kc, MCO_RUN.group);
}

/** The Machine Config Operator is done with the node at `version`: Done, current = desired, labelled with it, uncordoned. */
export function mcoAt(n: NodeView, version: string): boolean {
  const a = n.annotations;
  return (
    n.labels[MCO_KEYS.releaseVersion] === version &&
    a[MCO_KEYS.state] === 'Done' &&
    a[MCO_KEYS.currentConfig] !== undefined &&
    a[MCO_KEYS.currentConfig] === a[MCO_KEYS.desiredConfig] &&
    !n.unschedulable
  );
}

/**
 * The mutex operator's three kinds for the run: a rule with a Job before each node and a
 * cleanup Job after it (a second each on the sim host), the target naming pool `worker`, and
 * the run with its canary pool.
 */
export function mcoFiles(): Record<string, string> {
  const api = 'openshift-optional.skrzypek.io/v1alpha1';
  const doc = (kind: string, name: string, spec: object): string =>
    stringify({ apiVersion: api, kind, metadata: { name }, spec });
  const job = (name: string) => ({
    template: {
      metadata: { annotations: { 'sim.drydock.dev/run-seconds': '1', 'sim.drydock.dev/exit-code': '0' } },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name, image: 'ubi9/toolbox', command: ['/bin/sh', '-c', `echo ${name}`] }],
      },
    },
  });
  const ref = (name: string) => [{ name, namespace: JOB_NAMESPACE }];
  return {
    'specs/mco-rule.yaml': doc('MutexRule', MCO_RUN.rule, {
      type: 'kubernetes',
      jobName: MCO_RUN.rule,
      jobNamespace: JOB_NAMESPACE,
      jobSpec: job('quiesce'),
      cleanUpJobSpec: job('cleanup'),
    }),
    'specs/mco-target.yaml': doc('MutexTarget', MCO_RUN.target, { machineConfigPools: [MCO_RUN.pool] }),
    'specs/mco-run.yaml': doc('MutexRunConfig', MCO_RUN.run, {
      canary: { name: MCO_RUN.canary },
      mutexRules: ref(MCO_RUN.rule),
      mutexTargets: ref(MCO_RUN.target),
    }),
  };
}

/**
 * drydock has the run ready for the control plane's end, as the world shows it: pool `worker`
 * paused, every node of the group labelled as waiting, and the canary pool leaving them out.
 */
export async function mcoPrepared(kc: KubeConfig): Promise<boolean> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const pool = async (name: string) =>
    (await custom.getClusterCustomObject({ ...MACHINE_CONFIG_POOL, name })) as MachineConfigPool;
  if ((await pool(MCO_RUN.pool)).spec?.paused !== true) return false;
  if (!(await mcoNodes(kc)).every((n) => MCO_RULE_LABEL in n.labels)) return false;
  const expressions = (await pool(MCO_RUN.canary)).spec?.nodeSelector?.matchExpressions ?? [];
  return expressions.some((e) => e.key === MCO_RULE_LABEL && e.operator === 'DoesNotExist');
}

/** The run's status says Complete at MCO_RUN.to for every node, and the world agrees. */
export async function mcoDone(kc: KubeConfig, repo: FleetRepo): Promise<boolean> {
  if (!(await mcoNodes(kc)).every((n) => mcoAt(n, MCO_RUN.to) && n.ready)) return false;
  const text = await repo.statusFile(`status/MutexRunConfig/${MCO_RUN.run}.yaml`);
  if (text === undefined) return false;
  const s = parse(text) as { phase?: string; progress?: { done?: number; total?: number }; conditions?: unknown };
  return (
    s.phase === 'Complete' &&
    s.progress?.done === MCO_RUN.size &&
    s.progress.total === MCO_RUN.size &&
    text.includes(`runs ${MCO_RUN.to}`)
  );
}

/** MCO is updating the node: told to, not Done at it, or cordoned. */
function mcoUpdating(n: V1Node): boolean {
  const a = n.metadata?.annotations ?? {};
  return (
    a[MCO_KEYS.desiredConfig] !== a[MCO_KEYS.currentConfig] ||
    a[MCO_KEYS.state] !== 'Done' ||
    n.spec?.unschedulable === true
  );
}

/**
 * The most nodes of the canary pool (its nodeSelector as it stood) short of its config for
 * MCO_RUN.to at any change the API server announced once the pool had that config; 0 if it
 * never did. One at a time is 1.
 */
export function mostShortInCanary(events: readonly Announced[]): number {
  const config = renderedConfigName(MCO_RUN.canary, MCO_RUN.to);
  let rendered = false;
  let most = 0;
  replay(events, (_e, state) => {
    const canary = state.get('pools')?.get(`/${MCO_RUN.canary}`) as MachineConfigPool | undefined;
    if (canary?.spec?.configuration?.name === config) rendered = true;
    if (!rendered || canary === undefined) return;
    const nodes = [...(state.get('nodes')?.values() ?? [])] as V1Node[];
    const short = nodes.filter(
      (n) =>
        matchesSelector(n.metadata?.labels ?? {}, canary.spec?.nodeSelector) &&
        (n.metadata?.annotations?.[MCO_KEYS.currentConfig] !== config || mcoUpdating(n)),
    );
    most = Math.max(most, short.length);
  });
  return most;
}

/**
 * The nodes whose first rule Job (by the `jobs` watch) the API server did not announce before
 * MCO was told to update the node to the canary's config for MCO_RUN.to.
 */
export function ruleJobsLate(events: readonly Announced[], names: readonly string[]): string[] {
  const config = renderedConfigName(MCO_RUN.canary, MCO_RUN.to);
  const first = (match: (e: Announced) => boolean): number => events.find(match)?.at ?? Infinity;
  return names.filter((name) => {
    const job = first(
      (e) =>
        e.source === 'jobs' &&
        e.type === 'ADDED' &&
        e.obj.metadata?.labels?.[JOB_LABELS.node] === name &&
        e.obj.metadata.labels[JOB_LABELS.step] === 'before',
    );
    const told = first(
      (e) =>
        e.source === 'nodes' &&
        e.obj.metadata?.name === name &&
        e.obj.metadata.annotations?.[MCO_KEYS.desiredConfig] === config,
    );
    return !(job < told);
  });
}

export async function workers(kc: KubeConfig): Promise<NodeView[]> {
  return groupNodes(kc, 'workers');
}

const SIM_GROUP = 'sim.drydock.dev/group';

async function groupNodes(kc: KubeConfig, group: string): Promise<(NodeView & { osImage: string })[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: `${SIM_GROUP}=${group}` });
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
 * record is not taken as proof that the work was done; and none of its Jobs or reboot pods is
 * left.
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
  if (!all || !/phase: Complete/.test((await repo.statusFile(`status/NodeOp/${name}.yaml`)) ?? '')) return false;
  // Nothing of it left behind: each finished Job and reboot pod deleted, whichever life was stopped after it.
  const labelSelector = `${JOB_LABELS.operation}=NodeOp.${name}`;
  const [jobs, pods] = await Promise.all([
    kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: JOB_NAMESPACE, labelSelector }),
    kc
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: JOB_NAMESPACE, labelSelector: `${labelSelector},${JOB_LABELS.step}=reboot` }),
  ]);
  return jobs.items.length === 0 && pods.items.length === 0;
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
