/**
 * Benchmark: reconcile latency under churn (issue 16, item 4). The idle-at-scale world (N KWOK
 * nodes, ten pods each in Deployments under PDBs, drydock in-process), then for CHURN_MS: pods
 * created at 50 a second and each deleted ten seconds later, and a new KWOK node every two
 * seconds. Per new node: the time from this process's own watch seeing its Ready condition
 * True to drydock's first plan whose observed state holds the node as Ready ("acting": the
 * first reconcile that would act on it, read from the service's last outcome every 10 ms).
 * Also the rounds the churn made: how many a second, and the share of the time they took
 * (drydock_reconcile_duration_seconds over the churn), which the scheduler's spacing of watch
 * events bounds. Sizes (nodes): DRYDOCK_BENCH_CHURN, default 50.
 */
import { CoreV1Api, Watch, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { fakeNode, startControlPlane } from '../../src/sandbox/control-plane/index.js';
import { idleNodeName, startIdleWorld, type IdleWorld } from '../service/idle-world.js';
import { recordFigures, sizesFrom, type Figure } from './results.js';
import { createWorkloads, REPLICAS, SCALE_HEARTBEAT, waitRunning } from './scale-world.js';

const CHURN_MS = 60_000;
const PODS_PER_SECOND = 50;
const POD_LIFE_MS = 10_000;
const NODE_EVERY_MS = 2_000;
/**
 * How long, after the churn, the benchmark waits for every new node to be Ready and planned.
 * At 5,000 nodes, with KWOK thousands of pod patches behind, none of the 30 new nodes was Ready
 * within the 5 s it used to wait, so nothing was measured; they were Ready minutes later.
 */
const SETTLE_MS = 600_000;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

/** When this process's watch first saw each node Ready. */
async function watchReady(kc: KubeConfig, seen: Map<string, number>): Promise<{ abort(): void }> {
  return new Watch(kc).watch(
    '/api/v1/nodes',
    {},
    (_type: string, node: V1Node) => {
      const name = node.metadata?.name ?? '';
      const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      if (ready && !seen.has(name)) seen.set(name, performance.now());
    },
    () => undefined,
  );
}

/** The rounds so far and the seconds they took, from the service's reconcile histogram. */
async function roundsSoFar(world: IdleWorld): Promise<{ count: number; seconds: number }> {
  let count = 0;
  let seconds = 0;
  for (const v of (await world.service.metrics.reconcileDuration.get()).values) {
    if (v.metricName?.endsWith('_count')) count += v.value;
    else if (v.metricName?.endsWith('_sum')) seconds += v.value;
  }
  return { count, seconds };
}

/** Pods created at PODS_PER_SECOND on the fleet's nodes, each deleted POD_LIFE_MS later. */
function churnPods(kc: KubeConfig, nodes: number): { stop(): Promise<number> } {
  const core = kc.makeApiClient(CoreV1Api);
  let i = 0;
  let errors = 0;
  const pending: Promise<unknown>[] = [];
  const timer = setInterval(() => {
    const name = `churn-${i}`;
    const nodeName = idleNodeName(i++ % nodes);
    const body = {
      metadata: { name },
      spec: {
        nodeName,
        containers: [{ name: 'c', image: 'registry.example/churn:1' }],
        tolerations: [{ operator: 'Exists' as const }],
      },
    };
    const life = core
      .createNamespacedPod({ namespace: 'default', body })
      .then(() => new Promise((r) => setTimeout(r, POD_LIFE_MS)))
      .then(() => core.deleteNamespacedPod({ namespace: 'default', name, gracePeriodSeconds: 0 }))
      .catch(() => errors++);
    pending.push(life);
  }, 1000 / PODS_PER_SECOND);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return errors;
    },
  };
}

export async function measureChurn(nodes: number): Promise<Figure[]> {
  const cp = await startControlPlane({ log: () => undefined, clientQps: 1000, nodeHeartbeat: SCALE_HEARTBEAT });
  try {
    const admin = cp.adminKubeConfig();
    const world = await startIdleWorld(admin, cp.kubeconfigPath, nodes, 3, async () => {
      await createWorkloads(admin, nodes * REPLICAS, idleNodeName);
      await waitRunning(admin, nodes * REPLICAS, 1_800_000);
    });
    try {
      return await churnOn(
        admin,
        world,
        nodes,
        `npx tsc -p . && DRYDOCK_BENCH_CHURN=${nodes} node dist/test/bench/churn.js`,
      );
    } finally {
      await world.close();
    }
  } finally {
    await cp.stop();
  }
}

/**
 * The churn measurement on a world that is already up (this module's own, or the idle-at-scale
 * benchmark's after its figures, which spares a second set-up of the largest size). `run` is the
 * command that reproduces the figures, build included.
 */
/**
 * Waits, up to SETTLE_MS, until every node in `created` has been seen Ready by the watch and
 * then by a plan, printing the counts every 30 s: a node KWOK has not made Ready yet is not
 * measured, so a loaded KWOK would otherwise leave the figures empty.
 */
async function settle(created: readonly string[], readySeen: Map<string, number>, planned: Map<string, number>) {
  const t0 = performance.now();
  let said = t0;
  const count = (m: Map<string, number>) => created.filter((n) => m.has(n)).length;
  while (count(planned) < created.length || count(readySeen) < created.length) {
    if (performance.now() - t0 > SETTLE_MS) break;
    if (performance.now() - said >= 30_000) {
      said = performance.now();
      console.log(
        `(churn: ${count(readySeen)} of ${created.length} new nodes Ready (watch), ${count(planned)} planned, ` +
          `${Math.round((said - t0) / 1000)} s after the churn)`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** "p50 X s, max Y s" of `values` (ms), or "none". */
function spread(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 'none';
  return `p50 ${(quantile(sorted, 0.5) / 1000).toFixed(1)} s, max ${((sorted.at(-1) ?? NaN) / 1000).toFixed(1)} s`;
}

export async function churnOn(admin: KubeConfig, world: IdleWorld, nodes: number, run: string): Promise<Figure[]> {
  const readySeen = new Map<string, number>();
  const createdAt = new Map<string, number>();
  const planned = new Map<string, number>();
  const watch = await watchReady(admin, readySeen);
  const poll = setInterval(() => {
    for (const n of world.service.state().lastOutcome?.observed.nodes ?? [])
      if (n.ready && !planned.has(n.name)) planned.set(n.name, performance.now());
  }, 10);
  const core = admin.makeApiClient(CoreV1Api);
  const roundsBefore = await roundsSoFar(world);
  const churnStart = performance.now();
  const churn = churnPods(admin, nodes);
  const created: string[] = [];
  for (let t = 0; t < CHURN_MS; t += NODE_EVERY_MS) {
    const name = `churn-node-${created.length}`;
    await core.createNode({ body: fakeNode(name) });
    createdAt.set(name, performance.now());
    created.push(name);
    await new Promise((r) => setTimeout(r, NODE_EVERY_MS));
  }
  const errors = await churn.stop();
  const churnSeconds = (performance.now() - churnStart) / 1000;
  const roundsAfter = await roundsSoFar(world);
  const roundsPerSecond = (roundsAfter.count - roundsBefore.count) / churnSeconds;
  const roundShare = (roundsAfter.seconds - roundsBefore.seconds) / churnSeconds;
  await settle(created, readySeen, planned);
  clearInterval(poll);
  watch.abort();
  const lat = created
    .filter((n) => readySeen.has(n) && planned.has(n))
    .map((n) => (planned.get(n) ?? 0) - (readySeen.get(n) ?? 0))
    .sort((a, b) => a - b);
  const made = created.filter((n) => readySeen.has(n));
  console.log(
    `(churn: ${made.length} of ${created.length} new nodes Ready, created → Ready (KWOK) ` +
      `${spread(made.map((n) => (readySeen.get(n) ?? 0) - (createdAt.get(n) ?? 0)))}; ${lat.length} planned, ` +
      `Ready → plan ${spread(lat)}; ${errors} pod requests failed; ${roundsPerSecond.toFixed(1)} rounds a second, ` +
      `${(roundShare * 100).toFixed(1)} % of the time in rounds)`,
  );
  if (lat.length === 0) {
    console.log('(churn: no node was both Ready and planned: nothing to record)');
    return [];
  }
  const size = `${nodes} nodes, ${nodes * REPLICAS} pods, ${PODS_PER_SECOND} pods/s created and deleted, ${created.length} new nodes (${lat.length} measured, ${errors} pod requests failed)`;
  const f = (name: string, what: string, value: number, unit = 'ms'): Figure => ({
    id: `churn.${name}@${nodes}`,
    what,
    value,
    unit,
    target: null,
    size,
    command: run,
  });
  const figures = [
    f('readyToPlanP50', 'node Ready (watch) → first plan observing it Ready, p50', quantile(lat, 0.5)),
    f('readyToPlanP99', 'node Ready (watch) → first plan observing it Ready, p99', quantile(lat, 0.99)),
    f('roundsPerSecond', 'rounds a second during the churn', roundsPerSecond, '/s'),
    f('roundShare', 'share of the churn spent in rounds (reconcile time ÷ wall time)', roundShare, 'ratio'),
  ];
  recordFigures(figures);
  return figures;
}

export async function run(): Promise<void> {
  for (const nodes of sizesFrom('DRYDOCK_BENCH_CHURN', [50])) {
    console.log(`## ${nodes} nodes under churn`);
    await measureChurn(nodes);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
