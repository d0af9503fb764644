/**
 * A fleet at scale on the real control plane: Deployments of ten replicas, each under a PDB
 * that allows one disruption, fifty to a namespace, scheduled by the real scheduler onto KWOK
 * nodes and made Running by KWOK. Only what the benchmarks create; drydock is started apart.
 */
import { AppsV1Api, CoreV1Api, PolicyV1Api, type KubeConfig } from '@kubernetes/client-node';

export const REPLICAS = 10;
const DEPLOYMENTS_PER_NAMESPACE = 50;

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
export async function createWorkloads(kc: KubeConfig, pods: number, nodeOf: (i: number) => string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const deployments = Math.ceil(pods / REPLICAS);
  const namespaces = Math.ceil(deployments / DEPLOYMENTS_PER_NAMESPACE);
  const ns = (i: number) => `fleet-${String(Math.floor(i / DEPLOYMENTS_PER_NAMESPACE)).padStart(3, '0')}`;
  await inParallel(namespaces, 8, (i) =>
    core.createNamespace({ body: { metadata: { name: ns(i * DEPLOYMENTS_PER_NAMESPACE) } } }),
  );
  await inParallel(deployments, 16, async (i) => {
    const namespace = ns(i);
    const name = `app-${String(i).padStart(5, '0')}`;
    const labels = { app: name };
    await policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: { metadata: { name }, spec: { maxUnavailable: 1, selector: { matchLabels: labels } } },
    });
    await apps.createNamespacedDeployment({
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
  });
}

/**
 * How many pods the Deployments have, summed from their status (a list of pods with a field
 * selector carries no remaining-item count, and listing every pod would be the heavier read).
 * Not readyReplicas: KWOK leaves a few Running pods unready for minutes under load; drydock's
 * own observation of every pod is waited for after this.
 */
export async function runningPods(kc: KubeConfig): Promise<number> {
  const list = await kc.makeApiClient(AppsV1Api).listDeploymentForAllNamespaces();
  return list.items.reduce((n, d) => n + (d.status?.replicas ?? 0), 0);
}

export async function waitRunning(kc: KubeConfig, want: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const n = await runningPods(kc);
    if (n >= want) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`only ${n} of ${want} pods Running after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}
