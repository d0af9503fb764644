/**
 * Benchmark (issue "Performance against the limit of the world and the peers", item 2): as fast
 * as the operator it replaces, on the same job. One NodeOp in the Kairos operator's own format
 * (busybox `echo`, cordon, drain, concurrency 2, no reboot) over 6 workers carrying a Deployment
 * under a PDB, run by the Kairos operator (built from its source by scripts/kairos-operator.sh)
 * and by drydock, one after the other on the same control plane, as a migrating user would:
 * `kubectl apply` for the peer, a push to the fleet repository for drydock.
 *
 * Order: peer without the drain, peer, drydock without the drain, drydock (health gate 0),
 * drydock (default gate), drydock (gate 0), drydock without the drain, peer, peer without the
 * drain. The runs without the drain (cordon, Job, uncordon) set apart what the drain costs:
 * drydock evicts (a PDB may refuse), the peer deletes the pods and does not wait for them to go.
 * Only one of them runs at a time, and the world is back at rest (every node Ready and
 * schedulable, every workload pod Running) before each run starts.
 *
 * The peer: DRYDOCK_KAIROS_OPERATOR (the directory scripts/kairos-operator.sh prints), else
 * the script is run (cached). Without a peer, drydock alone is measured and the reason printed.
 * Alone: `npx tsc -p . && node dist/test/bench/kairos-peer.js`. DRYDOCK_BENCH_DRYDOCK_LOG=FILE
 * keeps drydock's log; DRYDOCK_BENCH_PEER_LOG=FILE keeps the peer's.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Node,
} from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { parseSimConfigText } from '../../src/cloud/index.js';
import { nodeOpRecordKey } from '../../src/protocol/keys.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane/index.js';
import { applyObjects } from '../../src/sandbox/workloads.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually } from '../support/control-plane.js';
import {
  drydockArgs,
  notifyWebhook,
  ROOT,
  startDrydockChild,
  startFleetRepo,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from '../e2e/world.js';
import { recordFigures, type Figure } from './results.js';
import { KWOK_POD_READY_AGAIN, settled } from './rollout-world.js';

const NODES = 6;
const CONCURRENCY = 2;
const PODS_PER_NODE = 2;
const JOB_RUN_SECONDS = 1;
const NAMESPACE = 'bench';
const PEER_NAMESPACE = 'kairos-operator-system';
const GROUP_LABEL = 'sim.drydock.dev/group';
const KAIROS_NODE_LABEL = 'kairos.io/managed';
const SIZE = `${NODES} workers, concurrency ${CONCURRENCY}, ${PODS_PER_NODE} pods per node under one PDB, Job ${JOB_RUN_SECONDS} s, no reboot`;
const COMMAND = 'npx tsc -p . && node dist/test/bench/kairos-peer.js';

/** The NodeOp, as a Kairos user writes it (the operator's README example, with this job's values). */
function kairosNodeOp(name: string, drain = true): KubernetesObject & { spec: Record<string, unknown> } {
  return {
    apiVersion: 'operator.kairos.io/v1alpha1',
    kind: 'NodeOp',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeSelector: { matchLabels: { [KAIROS_NODE_LABEL]: 'true' } },
      image: 'busybox:1.36',
      command: ['sh', '-c', 'echo patched'],
      cordon: true,
      drainOptions: { enabled: drain, ignoreDaemonSets: true },
      rebootOnSuccess: false,
      backoffLimit: 0,
      concurrency: CONCURRENCY,
    },
  };
}

/** The Deployment (PODS_PER_NODE per worker) and its PDB, roomy enough for a wave's drains. */
function workload(): KubernetesObject[] {
  const labels = { app: 'web' };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PEER_NAMESPACE } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NAMESPACE, labels },
      spec: {
        replicas: NODES * PODS_PER_NODE,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            nodeSelector: { [GROUP_LABEL]: 'workers' },
            containers: [{ name: 'app', image: 'registry.example/app:1' }],
          },
        },
      },
    } as KubernetesObject,
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: NAMESPACE },
      spec: { maxUnavailable: CONCURRENCY * PODS_PER_NODE, selector: { matchLabels: labels } },
    } as KubernetesObject,
  ];
}

interface World {
  readonly cp: ControlPlane;
  readonly kc: KubeConfig;
  readonly sim: RunningSimCloud;
  readonly dirs: string[];
  workers(): Promise<V1Node[]>;
}

async function startWorld(cp: ControlPlane): Promise<World> {
  const dirs = [tempDir('drydock-bench-kairos-sim-')];
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds: 0,
      groups: [{ id: 'workers', role: 'worker', size: NODES, image: 'os-v1' }],
      host: { rebootSeconds: 2, jobRunSeconds: JOB_RUN_SECONDS },
    }),
  );
  const sim = await runSimCloud({
    config,
    stateDir: dirs[0] ?? '',
    kubeconfigPath: cp.kubeconfigPath,
    host: '127.0.0.1',
    port: 0,
  });
  const kc = cp.adminKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const workers = async (): Promise<V1Node[]> =>
    (await core.listNode({ labelSelector: `${GROUP_LABEL}=workers` })).items;
  await eventually(
    `${NODES} Ready workers`,
    async () => (await workers()).filter((n) => n.status?.nodeInfo?.bootID && settled(n)).length === NODES,
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  // The label the Kairos operator's node labeler puts on Kairos nodes, which its examples select on.
  for (const n of await workers()) {
    const key = KAIROS_NODE_LABEL.replace(/\//g, '~1');
    await core.patchNode({
      name: n.metadata?.name ?? '',
      body: [{ op: 'add', path: `/metadata/labels/${key}`, value: 'true' }],
    });
  }
  await applyObjects(kc, workload(), 'drydock-bench');
  return { cp, kc, sim, dirs, workers };
}

/** Every worker Ready and schedulable, every workload pod Running and Ready, none terminating. */
async function atRest(w: World): Promise<void> {
  const core = w.kc.makeApiClient(CoreV1Api);
  await eventually(
    'the world at rest',
    async () => {
      const ns = await w.workers();
      if (ns.length !== NODES || !ns.every((n) => settled(n))) return undefined;
      const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items;
      const ready = pods.filter(
        (p) =>
          p.metadata?.deletionTimestamp === undefined &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return pods.length === NODES * PODS_PER_NODE && ready.length === pods.length ? true : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}

/** The directory of the built peer (bin/kairos-operator, crd/), or why there is none. */
function peerBuild(): { dir: string } | { why: string } {
  const given = process.env.DRYDOCK_KAIROS_OPERATOR;
  if (given)
    return existsSync(path.join(given, 'bin', 'kairos-operator'))
      ? { dir: given }
      : { why: `${given}: no bin/kairos-operator` };
  const r = spawnSync('bash', [path.join(ROOT, 'scripts', 'kairos-operator.sh')], { encoding: 'utf8' });
  const dir = r.stdout.trim().split('\n').at(-1) ?? '';
  if (r.status === 0 && dir !== '') return { dir };
  return { why: `scripts/kairos-operator.sh failed:\n${r.stderr.trim().split('\n').slice(-8).join('\n')}` };
}

interface Peer {
  readonly proc: ChildProcess;
  readonly lines: string[];
  stop(): Promise<void>;
}

/** Installs the peer's CRDs (once) and starts its manager against the world, once its NodeOp controller runs. */
async function startPeer(w: World, dir: string): Promise<Peer> {
  const crdDir = path.join(dir, 'crd');
  const crds = readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(crdDir, f), 'utf8')).map((d) => d.toJS() as KubernetesObject),
    );
  await applyObjects(w.kc, crds, 'drydock-bench');
  const ext = w.kc.makeApiClient(ApiextensionsV1Api);
  await eventually('the peer CRDs established', async () => {
    for (const c of crds) {
      const got = await ext.readCustomResourceDefinition({ name: c.metadata?.name ?? '' });
      if (!got.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True')) return undefined;
    }
    return true;
  });
  const proc = spawn(
    path.join(dir, 'bin', 'kairos-operator'),
    ['--health-probe-bind-address=0', '--metrics-bind-address=0', '--leader-elect=false'],
    {
      env: { ...process.env, KUBECONFIG: w.cp.kubeconfigPath, CONTROLLER_POD_NAMESPACE: PEER_NAMESPACE },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  for (const s of [proc.stdout, proc.stderr]) {
    s.setEncoding('utf8');
    s.on('data', (chunk: string) => lines.push(...chunk.split('\n').filter((l) => l !== '')));
  }
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  await eventually(
    'the peer NodeOp controller started',
    async () => {
      if (proc.exitCode !== null) throw new Error(`the peer exited ${proc.exitCode}:\n${lines.slice(-10).join('\n')}`);
      return lines.some((l) => l.includes('Starting workers') && l.includes('"nodeop"')) || undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return {
    proc,
    lines,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** Seconds from `kubectl apply` of the NodeOp to its phase Completed and every worker uncordoned. */
async function runPeer(w: World, peer: Peer, name: string, drain: boolean): Promise<number> {
  const objects = w.kc.makeApiClient(CustomObjectsApi);
  const ref = { group: 'operator.kairos.io', version: 'v1alpha1', namespace: 'default', plural: 'nodeops', name };
  const t0 = Date.now();
  await applyObjects(w.kc, [kairosNodeOp(name, drain)], 'kubectl');
  await eventually(
    `the peer's NodeOp ${name} Completed`,
    async () => {
      const op = (await objects.getNamespacedCustomObject(ref)) as { status?: { phase?: string } };
      if (op.status?.phase === 'Failed')
        throw new Error(`the peer's NodeOp failed:\n${peer.lines.slice(-10).join('\n')}`);
      if (op.status?.phase !== 'Completed') return undefined;
      return (await w.workers()).every((n) => n.spec?.unschedulable !== true) || undefined;
    },
    { timeoutMs: 300_000, intervalMs: 100 },
  );
  const seconds = (Date.now() - t0) / 1000;
  // As a user moving off it would: the NodeOp deleted, and with it its Jobs and their pods
  // (drydock deletes its own once recorded), so the next run drains the same pods.
  await objects.deleteNamespacedCustomObject({ ...ref, propagationPolicy: 'Foreground' });
  const core = w.kc.makeApiClient(CoreV1Api);
  await eventually(
    `the peer's Job pods of ${name} gone`,
    async () => (await core.listNamespacedPod({ namespace: 'default' })).items.length === 0 || undefined,
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  return seconds;
}

/** drydock's fleet repository: the NodeOp directory, and drydock.yaml with the health gate given. */
function repoConfig(minReadySeconds: number | undefined): string {
  return stringify({
    apiVersion: 'drydock.dev/v1alpha1',
    kind: 'RepoConfig',
    cluster: 'bench',
    budget: { maxUnavailable: CONCURRENCY },
    paths: ['ops'],
    statusBranch: 'drydock/status',
    ...(minReadySeconds !== undefined ? { defaults: { rollout: { healthGate: { minReadySeconds } } } } : {}),
  });
}

/**
 * Seconds from the push of the NodeOp (drydock told at once by the webhook, as a forge would)
 * to every worker holding its record, uncordoned and unlocked.
 */
async function runDrydock(
  w: World,
  repo: FleetRepo,
  drydock: DrydockChild,
  name: string,
  minReadySeconds: number | undefined,
  previous: readonly string[],
  drain: boolean,
): Promise<number> {
  // The earlier NodeOps leave the repository: a change of drydock.yaml's defaults is a new
  // revision of every NodeOp still there, which would run them again beside this one.
  const earlier = Object.fromEntries(previous.map((p) => [`ops/${p}.yaml`, null]));
  await repo.push(
    {
      ...earlier,
      'drydock.yaml': repoConfig(minReadySeconds),
      [`ops/${name}.yaml`]: stringify(kairosNodeOp(name, drain)),
    },
    `ops: ${name}`,
  );
  const t0 = Date.now();
  await notifyWebhook(await drydock.url);
  await eventually(
    `drydock's NodeOp ${name} done on every worker`,
    async () =>
      (await w.workers()).every((n) => n.metadata?.annotations?.[nodeOpRecordKey(name)] !== undefined && settled(n)) ||
      undefined,
    { timeoutMs: 300_000, intervalMs: 100 },
  );
  return (Date.now() - t0) / 1000;
}

async function startDrydock(w: World, repo: FleetRepo): Promise<DrydockChild> {
  const cacheDir = tempDir('drydock-bench-kairos-cache-');
  w.dirs.push(cacheDir);
  const drydock = startDrydockChild(drydockArgs(repo, w.cp.kubeconfigPath, w.sim.url, cacheDir));
  const url = await drydock.url;
  await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok || undefined, { timeoutMs: 60_000 });
  return drydock;
}

interface Times {
  peer: number[];
  gate0: number[];
  defaultGate: number[];
  /** The same job without the drain (cordon, Job, uncordon): the peer's, and drydock's with gate 0. */
  peerNoDrain: number[];
  noDrain: number[];
}

/** The five runs, each from a world at rest; the peer's part is skipped without a peer. */
async function runAll(w: World, peerDir: string | undefined): Promise<Times> {
  const t: Times = { peer: [], gate0: [], defaultGate: [], peerNoDrain: [], noDrain: [] };
  const peerRun = async (name: string, drain: boolean): Promise<void> => {
    if (peerDir === undefined) return;
    await atRest(w);
    const peer = await startPeer(w, peerDir);
    const into = drain ? t.peer : t.peerNoDrain;
    try {
      into.push(await runPeer(w, peer, name, drain));
      console.log(`  peer ${name}: ${into.at(-1)?.toFixed(2)} s`);
    } finally {
      const log = process.env.DRYDOCK_BENCH_PEER_LOG;
      if (log) writeFileSync(log, peer.lines.join('\n') + '\n', { flag: 'a' });
      await peer.stop();
    }
  };
  await peerRun('bench-peer-nodrain-1', false);
  await peerRun('bench-peer-1', true);
  const repo = await startFleetRepo({ 'drydock.yaml': repoConfig(0), 'ops/.keep': '' });
  let drydock: DrydockChild | undefined;
  try {
    drydock = await startDrydock(w, repo);
    const done: string[] = [];
    for (const [name, gate, into, drain] of [
      ['bench-nodrain-1', 0, t.noDrain, false],
      ['bench-gate0-1', 0, t.gate0, true],
      ['bench-default', undefined, t.defaultGate, true],
      ['bench-gate0-2', 0, t.gate0, true],
      ['bench-nodrain-2', 0, t.noDrain, false],
    ] as const) {
      await atRest(w);
      into.push(await runDrydock(w, repo, drydock, name, gate, done, drain));
      done.push(name);
      console.log(`  drydock ${name}: ${into.at(-1)?.toFixed(2)} s`);
    }
  } finally {
    const log = process.env.DRYDOCK_BENCH_DRYDOCK_LOG;
    if (log && drydock) writeFileSync(log, drydock.lines.join('\n') + '\n');
    await stopWorld({ drydock, repo, dirs: [] });
  }
  await peerRun('bench-peer-2', true);
  await peerRun('bench-peer-nodrain-2', false);
  return t;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function figures(t: Times): Figure[] {
  const figure = (id: string, what: string, value: number, unit: string, target: number | null): Figure => ({
    id: `kairosPeer.${id}@${NODES}`,
    what,
    value: Number(value.toFixed(4)),
    unit,
    target,
    size: SIZE,
    command: COMMAND,
  });
  const out = [
    figure(
      'drydockGate0',
      `drydock, healthGate.minReadySeconds 0: push → every node done, uncordoned (mean of ${t.gate0.length})`,
      mean(t.gate0),
      's',
      null,
    ),
    figure(
      'drydockNoDrain',
      `drydock, gate 0, the same job without the drain: push → every node done (mean of ${t.noDrain.length})`,
      mean(t.noDrain),
      's',
      null,
    ),
    figure(
      'drydockDefaultGate',
      'drydock, the default health gate (30 s): push → every node done, uncordoned',
      mean(t.defaultGate),
      's',
      null,
    ),
  ];
  if (t.peer.length === 0) return out;
  return [
    figure(
      'peer',
      `the Kairos operator v0.1.3: apply → Completed, every node uncordoned (mean of ${t.peer.length})`,
      mean(t.peer),
      's',
      null,
    ),
    ...out,
    figure('ratioGate0', 'drydock (gate 0) ÷ the Kairos operator, same run', mean(t.gate0) / mean(t.peer), '×', 1),
    figure(
      'peerNoDrain',
      `the Kairos operator, the same job without the drain (cordon, Job, uncordon; mean of ${t.peerNoDrain.length})`,
      mean(t.peerNoDrain),
      's',
      null,
    ),
    figure(
      'ratioNoDrain',
      'drydock (gate 0) ÷ the Kairos operator, the same job without the drain, same run',
      mean(t.noDrain) / mean(t.peerNoDrain),
      '×',
      1,
    ),
  ];
}

export async function run(): Promise<Figure[]> {
  const built = peerBuild();
  if ('why' in built) console.log(`  the Kairos operator is not measured: ${built.why}`);
  const cp = await startControlPlane({
    log: () => undefined,
    jobPods: 'host',
    kwokConfig: KWOK_POD_READY_AGAIN,
    clientQps: 100,
  });
  let w: World | undefined;
  try {
    w = await startWorld(cp);
    const t = await runAll(w, 'dir' in built ? built.dir : undefined);
    const out = figures(t);
    recordFigures(out);
    return out;
  } finally {
    await w?.sim.stop();
    await stopWorld({ dirs: w?.dirs ?? [] });
    await cp.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
