/**
 * The e2e world: a real control plane with KWOK, the sim cloud joined to it (3 control-plane
 * + 6 worker instances, 1 s boots), workloads under PDBs, the cluster-autoscaler Deployment,
 * a fleet repository on a real Git server, and `drydock run` as a child process (so SIGKILL
 * is real). Tests change the world only by pushing commits.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, type KubeConfig, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { parseSimConfigText } from '../../src/cloud/index.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, type ControlPlane } from '../support/control-plane.js';
import { IMAGE_V1, fleetFiles, startFleetRepo, type FleetRepo } from './fleet.js';
import { drydockArgs, ROOT, startDrydockChild, type DrydockChild } from './drydock-child.js';
import { applyObjects, type DemoApp } from '../../src/sandbox/workloads.js';
import type { GitServerUser } from '../../src/sandbox/git-server.js';

export * from './fleet.js';
export * from './drydock-child.js';

export const E2E_NAMESPACE = 'apps';
const FIELD_MANAGER = 'drydock-e2e';

/**
 * Small workloads, each PDB allowing one disruption. Described like the sandbox's demo apps,
 * but built here: the e2e world keeps them in their own namespace, selects them by `app`, and
 * runs two autoscaler replicas that tolerate every node (the sandbox keeps one on the workers).
 */
export const E2E_APPS: readonly DemoApp[] = [
  { name: 'web', replicas: 4, pdb: { maxUnavailable: 1 } },
  { name: 'api', replicas: 2, pdb: { minAvailable: 1 } },
];

export async function startE2eCloud(
  cp: ControlPlane,
  stateDir: string,
  bootDelaySeconds = 1,
): Promise<RunningSimCloud> {
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds,
      terminateDelaySeconds: 1,
      groups: [
        { id: 'control-plane', role: 'control-plane', size: 3, image: IMAGE_V1 },
        { id: 'workers', role: 'worker', size: 6, image: IMAGE_V1 },
      ],
    }),
  );
  return runSimCloud({ config, stateDir, kubeconfigPath: cp.kubeconfigPath, host: '127.0.0.1', port: 0 });
}

function deployment(
  namespace: string,
  name: string,
  replicas: number,
  workersOnly: boolean,
): KubernetesObject & { spec: unknown } {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          ...(workersOnly
            ? {
                affinity: {
                  nodeAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: {
                      nodeSelectorTerms: [
                        {
                          matchExpressions: [
                            { key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' },
                          ],
                        },
                      ],
                    },
                  },
                },
              }
            : { tolerations: [{ operator: 'Exists' }] }),
          containers: [{ name, image: `registry.example/${name}:1` }],
        },
      },
    },
  };
}

/** Workloads on the workers, each under a PDB, and the autoscaler Deployment (2 replicas). */
export function workloadManifests(): (KubernetesObject & { spec?: unknown })[] {
  const objects: (KubernetesObject & { spec?: unknown })[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: E2E_NAMESPACE } },
  ];
  for (const app of E2E_APPS) {
    objects.push(deployment(E2E_NAMESPACE, app.name, app.replicas, true));
    objects.push({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: app.name, namespace: E2E_NAMESPACE },
      spec: { ...app.pdb, selector: { matchLabels: { app: app.name } } },
    });
  }
  objects.push(deployment('kube-system', 'cluster-autoscaler', 2, false));
  return objects;
}

/**
 * The shared start of every e2e world: the sim cloud joined to the control plane (9 nodes
 * Ready), the workloads Running, and the fleet repository on v1. Returns what to stop.
 */
export async function startWorld(
  cp: ControlPlane,
  dirs: string[],
  gitUsers: readonly GitServerUser[] = [],
): Promise<{ sim: RunningSimCloud; repo: FleetRepo; cacheDir: string }> {
  const stateDir = tempDir('drydock-e2e-sim-');
  const cacheDir = tempDir('drydock-e2e-cache-');
  dirs.push(stateDir, cacheDir);
  const sim = await startE2eCloud(cp, stateDir);
  const kc = cp.adminKubeConfig();
  await eventually(
    '9 sim nodes Ready',
    async () => (await nodes(kc)).filter((n) => n.ready && n.group !== '').length === 9,
    { timeoutMs: 60_000 },
  );
  await applyWorkloads(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const want = E2E_APPS.reduce((n, a) => n + a.replicas, 0);
  await eventually(
    'workload pods Running',
    async () => {
      const pods = await core.listNamespacedPod({ namespace: E2E_NAMESPACE });
      return pods.items.length === want && pods.items.every((p) => p.status?.phase === 'Running');
    },
    { timeoutMs: 60_000 },
  );
  const repo = await startFleetRepo(fleetFiles({ worker: IMAGE_V1, controlPlane: IMAGE_V1 }), gitUsers);
  return { sim, repo, cacheDir };
}

/** startWorld, then `drydock run` on it as a child process, once its /readyz answers. */
export async function startWorldWithDrydock(
  cp: ControlPlane,
  dirs: string[],
): Promise<{ sim: RunningSimCloud; repo: FleetRepo; cacheDir: string; drydock: DrydockChild }> {
  const world = await startWorld(cp, dirs);
  const drydock = startDrydockChild(drydockArgs(world.repo, cp.kubeconfigPath, world.sim.url, world.cacheDir));
  const url = await drydock.url;
  await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  return { ...world, drydock };
}

/**
 * The world of the in-place e2e files: one sim worker group of `size` hosts (which play the Job
 * pods), deploy/'s RBAC, a fleet repository with `files`, and `drydock run` as deploy/'s
 * ServiceAccount in drydock-system, once every host reports a bootID and drydock's /readyz answers.
 * `group` adds to the sim group's definition (a Bottlerocket group's `image` and `bottlerocket`).
 * `args` start the same drydock again after a test kills it.
 */
export async function startWorkerWorld(
  cp: ControlPlane,
  dirs: string[],
  opts: {
    name: string;
    size: number;
    host: Record<string, unknown>;
    files: Record<string, string>;
    group?: Record<string, unknown>;
  },
): Promise<{ sim: RunningSimCloud; repo: FleetRepo; drydock: DrydockChild; url: string; args: string[] }> {
  const stateDir = tempDir(`drydock-e2e-${opts.name}-sim-`);
  const cacheDir = tempDir(`drydock-e2e-${opts.name}-cache-`);
  dirs.push(stateDir, cacheDir);
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds: 0,
      groups: [{ id: 'workers', role: 'worker', size: opts.size, image: 'os-v1', ...opts.group }],
      host: opts.host,
    }),
  );
  const sim = await runSimCloud({ config, stateDir, kubeconfigPath: cp.kubeconfigPath, host: '127.0.0.1', port: 0 });
  const kc = cp.adminKubeConfig();
  await eventually(
    `${opts.size} Ready workers`,
    async () => {
      const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: 'sim.drydock.dev/group=workers' });
      return list.items.filter((n) => viewNode(n).ready && n.status?.nodeInfo?.bootID).length === opts.size;
    },
    { timeoutMs: 60_000 },
  );
  await applyDeployRbac(kc);
  const repo = await startFleetRepo(opts.files);
  const args = drydockArgs(repo, await serviceAccountKubeconfig(cp), sim.url, cacheDir, 'drydock-system');
  const drydock = startDrydockChild(args);
  const url = await drydock.url;
  await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  return { sim, repo, drydock, url, args };
}

export async function applyWorkloads(kc: KubeConfig): Promise<void> {
  await applyObjects(kc, workloadManifests(), FIELD_MANAGER);
}

/** `drydock run` flags for the e2e world: fast polling, short leases. */
export async function applyDeployRbac(kc: KubeConfig): Promise<void> {
  const objects = ['namespace.yaml', 'serviceaccount.yaml', 'rbac.yaml'].flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(ROOT, 'deploy', file), 'utf8')).map((d) => d.toJS() as KubernetesObject),
  );
  await applyObjects(kc, objects, FIELD_MANAGER);
}

/** A kubeconfig that authenticates as deploy/'s ServiceAccount (client certificate with its user name and groups). */
export async function serviceAccountKubeconfig(cp: ControlPlane): Promise<string> {
  const u = await cp.kubeconfigFor('system:serviceaccount:drydock-system:drydock', [
    'system:serviceaccounts',
    'system:serviceaccounts:drydock-system',
  ]);
  return u.kubeconfigPath;
}

export interface NodeView {
  readonly name: string;
  readonly group: string;
  readonly image: string;
  readonly ready: boolean;
  readonly unschedulable: boolean;
  readonly annotations: Record<string, string>;
  readonly labels: Record<string, string>;
}

export function viewNode(n: V1Node): NodeView {
  return {
    name: n.metadata?.name ?? '',
    group: n.metadata?.labels?.['sim.drydock.dev/group'] ?? '',
    image: n.metadata?.annotations?.['sim.drydock.dev/image'] ?? '',
    ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    unschedulable: n.spec?.unschedulable === true,
    annotations: n.metadata?.annotations ?? {},
    labels: n.metadata?.labels ?? {},
  };
}

export async function nodes(kc: KubeConfig): Promise<NodeView[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNode();
  return list.items.map(viewNode).sort((a, b) => a.name.localeCompare(b.name));
}

export async function autoscalerReplicas(kc: KubeConfig): Promise<{ replicas: number; previous?: string }> {
  const d = await kc
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ name: 'cluster-autoscaler', namespace: 'kube-system' });
  const previous = d.metadata?.annotations?.['drydock.dev/previous-replicas'];
  return { replicas: d.spec?.replicas ?? 1, ...(previous !== undefined ? { previous } : {}) };
}

/** Whether a node holds drydock's per-node lock (an operation not yet Done). */
export function locked(n: NodeView): boolean {
  return n.annotations['drydock.dev/operation'] !== undefined && n.annotations['drydock.dev/phase'] !== 'Done';
}

/**
 * Every sim node (or every node of `group`) on `image`, Ready, schedulable and unlocked, and
 * `count` of them; throws what is not, for eventually().
 */
export async function converged(kc: KubeConfig, image: string, count = 9, group?: string): Promise<true> {
  const ns = (await nodes(kc)).filter((n) => (group === undefined ? n.group !== '' : n.group === group));
  const off = ns.filter((n) => !(n.image === image && n.ready && !n.unschedulable && !locked(n)));
  if (off.length > 0 || ns.length !== count) {
    const what = off.map(
      (n) =>
        `${n.name} image=${n.image} ready=${n.ready} cordoned=${n.unschedulable} phase=${n.annotations['drydock.dev/phase'] ?? '-'}`,
    );
    throw new Error(`${ns.length} nodes; not done: ${what.join('; ')}`);
  }
  return true;
}

/** Stops what startWorld and startDrydockChild started, and removes the world's directories. */
export async function stopWorld(w: {
  drydock?: DrydockChild | undefined;
  sim?: RunningSimCloud | undefined;
  repo?: FleetRepo | undefined;
  dirs: readonly string[];
}): Promise<void> {
  if (w.drydock) {
    w.drydock.kill('SIGTERM');
    await w.drydock.exited;
  }
  await w.sim?.stop();
  await w.repo?.close();
  for (const d of w.dirs) rmSync(d, { recursive: true, force: true });
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}
