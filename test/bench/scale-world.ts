/**
 * A fleet at scale on the real control plane: Deployments of ten replicas, each under a PDB
 * that allows one disruption, fifty to a namespace, scheduled by the real scheduler onto KWOK
 * nodes and made Running by KWOK. Only what the benchmarks create; drydock is started apart.
 */
import { AppsV1Api, CoordinationV1Api, CoreV1Api, PolicyV1Api, type KubeConfig } from '@kubernetes/client-node';

export const REPLICAS = 10;
const DEPLOYMENTS_PER_NAMESPACE = 50;
/**
 * Requests in flight while creating Deployments and PDBs: at 16 (one PDB then its Deployment
 * per worker) the benchmark made about ten a second, the client's round trips and not the API
 * server setting the pace.
 */
const IN_FLIGHT = 64;

/** Runs `work(i)` for i in [0, count) with `concurrency` in flight. */
export async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/**
 * Creates `pods / REPLICAS` Deployments with their PDBs, in namespaces `fleet-NNN`. Deployment
 * i's pods are bound to `nodeOf(i)` in its template, so ten pods land on each node without the
 * scheduler: on the shared machine the scheduler binding pods one by one was most of the
 * set-up time at 200 nodes (minutes for 2,000 pods), and it is not what the benchmark measures.
 */
export async function createWorkloads(
  kc: KubeConfig,
  pods: number,
  nodeOf: (i: number) => string,
  /** called after every thousandth Deployment with how many have been created */
  progress?: (deployments: number) => void,
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const deployments = Math.ceil(pods / REPLICAS);
  const namespaces = Math.ceil(deployments / DEPLOYMENTS_PER_NAMESPACE);
  const ns = (i: number) => `fleet-${String(Math.floor(i / DEPLOYMENTS_PER_NAMESPACE)).padStart(3, '0')}`;
  await inParallel(namespaces, 8, (i) =>
    core.createNamespace({ body: { metadata: { name: ns(i * DEPLOYMENTS_PER_NAMESPACE) } } }),
  );
  await inParallel(deployments, IN_FLIGHT / 2, async (i) => {
    const namespace = ns(i);
    const name = `app-${String(i).padStart(5, '0')}`;
    const labels = { app: name };
    const pdb = policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: { metadata: { name }, spec: { maxUnavailable: 1, selector: { matchLabels: labels } } },
    });
    const deployment = apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name, labels },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeName: nodeOf(i),
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '10m' } } }],
              tolerations: [{ operator: 'Exists' }],
            },
          },
        },
      },
    });
    await Promise.all([pdb, deployment]);
    if ((i + 1) % 1000 === 0) progress?.(i + 1);
  });
}

/**
 * The scale world's node heartbeats (a benchmark-only control-plane setting): with KWOK's own
 * (a 40 s lease renewed every 10 s), 5,000 nodes need 500 lease renewals a second, and on two
 * shared cores KWOK got about 4 a second through beside the set-up's writes, so nodes went
 * NotReady and the set-up never finished. A one-hour lease, renewed every 15 minutes, asks 5.6
 * renewals a second of 5,000 nodes; the node status every 30 minutes, 2.8 writes a second. The
 * controller manager's grace periods are the lease's hour, so a node goes NotReady only after
 * three missed renewals.
 */
export const SCALE_HEARTBEAT = { leaseSeconds: 3600, statusSeconds: 1800 } as const;

/**
 * How far KWOK keeps up with its nodes: how many are Ready, and the age of their leases'
 * last renewal (KWOK renews each every quarter of its duration, SCALE_HEARTBEAT; older means
 * its lease workers or the API server lag behind).
 */
export async function nodeHealth(kc: KubeConfig): Promise<{ ready: number; leaseAgeP50: number; leaseAgeMax: number }> {
  const nodes = await kc.makeApiClient(CoreV1Api).listNode();
  const ready = nodes.items.filter((n) =>
    n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;
  const leases = await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'kube-node-lease' });
  const now = Date.now();
  const ages = leases.items.map((l) => (now - new Date(l.spec?.renewTime ?? 0).getTime()) / 1000).sort((a, b) => a - b);
  return { ready, leaseAgeP50: ages[Math.floor(ages.length / 2)] ?? NaN, leaseAgeMax: ages.at(-1) ?? NaN };
}

/**
 * Waits until all `nodes` nodes are Ready (KWOK holds their leases and has played their
 * initialisation), so the workloads' writes do not compete with KWOK taking up its nodes: pods
 * bound to a node whose lease KWOK does not hold yet stay Pending. Returns the wait, ms.
 */
export async function waitNodesReady(
  kc: KubeConfig,
  nodes: number,
  timeoutMs: number,
  progress?: (ready: number) => void,
): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const { ready } = await nodeHealth(kc);
    if (ready >= nodes) return Date.now() - t0;
    progress?.(ready);
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`only ${ready} of ${nodes} nodes Ready after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 10_000));
  }
}

/**
 * How many pods the Deployments have (`replicas`: created), or have Ready (`readyReplicas`:
 * KWOK has played them), summed from their status (a list of pods with a field selector carries
 * no remaining-item count, and listing every pod would be the heavier read).
 */
export async function deploymentPods(kc: KubeConfig, field: 'replicas' | 'readyReplicas'): Promise<number> {
  const list = await kc.makeApiClient(AppsV1Api).listDeploymentForAllNamespaces();
  return list.items.reduce((n, d) => n + (d.status?.[field] ?? 0), 0);
}

/** How many pods the Deployments have created. */
export const runningPods = (kc: KubeConfig): Promise<number> => deploymentPods(kc, 'replicas');

/**
 * Waits until the Deployments have `want` pods (`field`, default created); returns the wait,
 * ms. `progress`, if given, is called about every 30 s with the count so far (a long set-up
 * shows its rate as it goes).
 */
export async function waitRunning(
  kc: KubeConfig,
  want: number,
  timeoutMs: number,
  progress?: (pods: number) => void,
  field: 'replicas' | 'readyReplicas' = 'replicas',
): Promise<number> {
  const t0 = Date.now();
  let reported = t0;
  for (;;) {
    const n = await deploymentPods(kc, field);
    if (n >= want) return Date.now() - t0;
    if (progress && Date.now() - reported >= 30_000) {
      reported = Date.now();
      progress(n);
    }
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`only ${n} of ${want} pods (${field}) after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/**
 * Of `pods`, the share KWOK must have made Ready before drydock starts (DRYDOCK_BENCH_SCALE_READY,
 * default 0.999; 0 does not wait). At 5,000 nodes KWOK made pods Running at 8–22 a second while
 * the controller manager created them at 35–67, so the Deployments were complete long before
 * their pods were played, and the idle figures would be taken under tens of thousands of pod
 * status writes. Not all by default: KWOK leaves a few Running pods unready for minutes under load.
 */
export function playedShare(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.DRYDOCK_BENCH_SCALE_READY;
  if (text === undefined || text === '') return 0.999;
  const share = Number(text);
  if (!(share >= 0 && share <= 1)) throw new Error(`DRYDOCK_BENCH_SCALE_READY=${text}: expected a share from 0 to 1`);
  return share;
}
