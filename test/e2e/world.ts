/**
 * The e2e world: a real control plane with KWOK, the sim cloud joined to it (3 control-plane
 * + 6 worker instances, 1 s boots), workloads under PDBs, the cluster-autoscaler Deployment,
 * a fleet repository on a real Git server, and `drydock run` as a child process (so SIGKILL
 * is real). Tests change the world only by pushing commits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubeConfig, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { runSimCloud, parseSimConfigText, type RunningSimCloud } from '../../src/cloud/index.js';
import { eventually, type ControlPlane } from '../support/control-plane.js';
import { startTestGitServer, git, gitEnv, withUser, TEST_USER, type GitServer } from '../support/git-server.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const DRYDOCK_BIN = path.join(ROOT, 'bin', 'drydock.js');
export const IMAGE_V1 = 'registry.example/node-os:v1.0.0';
export const IMAGE_V2 = 'registry.example/node-os:v2.0.0';
export const IMAGE_V3 = 'registry.example/node-os:v3.0.0';
export const IMAGE_V4 = 'registry.example/node-os:v4.0.0';

export const E2E_NAMESPACE = 'apps';

export interface E2eApp {
  readonly name: string;
  readonly replicas: number;
  readonly pdb: { readonly minAvailable: number | string } | { readonly maxUnavailable: number | string };
}

/** Small workloads, each PDB allowing one disruption. */
export const E2E_APPS: readonly E2eApp[] = [
  { name: 'web', replicas: 4, pdb: { maxUnavailable: 1 } },
  { name: 'api', replicas: 2, pdb: { minAvailable: 1 } },
];

export function rolloutYaml(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    maxSurge: 1,
    maxUnavailable: 1,
    concurrency: 1,
    joinTimeout: '20s',
    healthGate: { minReadySeconds: 1 },
    drain: { timeoutSeconds: 60, onTimeout: 'halt', ignoreDaemonSets: true, deleteEmptyDirData: true },
    approval: { required: 'none' },
    ...overrides,
  };
}

function doc(kind: string, name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: 'drydock.dev/v1alpha1', kind, metadata: { name }, spec });
}

/** The fleet repository's files, for a worker and a control-plane image. */
export function fleetFiles(opts: { worker: string; controlPlane: string; workerRollout?: Record<string, unknown>; autoscaler?: boolean }): Record<string, string> {
  const files: Record<string, string> = {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'e2e',
      budget: { maxUnavailable: 2 },
      defaults: { rollout: rolloutYaml() },
      paths: ['clusters', 'images'],
      statusBranch: 'drydock/status',
    }),
    'clusters/workers.yaml': doc('ScalingGroup', 'workers', { provider: 'sim', groupId: 'workers', nodeImage: 'worker', role: 'worker', autoscaling: true }),
    'clusters/control-plane.yaml': doc('ScalingGroup', 'control-plane', {
      provider: 'sim',
      groupId: 'control-plane',
      nodeImage: 'control-plane',
      role: 'control-plane',
      autoscaling: false,
    }),
    'images/worker.yaml': doc('NodeImage', 'worker', { image: opts.worker, strategy: 'replace', rollout: rolloutYaml(opts.workerRollout) }),
    'images/control-plane.yaml': doc('NodeImage', 'control-plane', { image: opts.controlPlane, strategy: 'replace', rollout: rolloutYaml() }),
  };
  if (opts.autoscaler !== false) {
    files['clusters/autoscaler.yaml'] = doc('AutoscalingStrategy', 'cluster-autoscaler', {
      enabled: true,
      deploymentName: 'cluster-autoscaler',
      deploymentNamespace: 'kube-system',
    });
  }
  return files;
}

export interface FleetRepo {
  readonly url: string;
  /** The bare repository on the server. */
  readonly bare: string;
  /** A file of the status branch, or undefined when absent. */
  statusFile(file: string, branch?: string): Promise<string | undefined>;
  readonly server: GitServer;
  /** Writes (or with null deletes) files, commits and pushes; resolves to the commit id. */
  push(files: Record<string, string | null>, message: string): Promise<string>;
  head(): Promise<string>;
  close(): Promise<void>;
}

export async function startFleetRepo(initial: Record<string, string>): Promise<FleetRepo> {
  const server = await startTestGitServer();
  server.createBareRepo('fleet.git', 'main');
  const url = server.repoUrl('fleet.git');
  const work = mkdtempSync(path.join(tmpdir(), 'drydock-e2e-work-'));
  let tick = 0;
  await git(work, ['init', '-q', '-b', 'main']);
  await git(work, ['remote', 'add', 'origin', withUser(url)]);
  const push = async (files: Record<string, string | null>, message: string): Promise<string> => {
    for (const [file, content] of Object.entries(files)) {
      const abs = path.join(work, file);
      if (content === null) rmSync(abs, { force: true });
      else {
        mkdirSync(path.dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
    tick += 1;
    await git(work, ['add', '-A'], gitEnv(tick));
    await git(work, ['commit', '-q', '-m', message], gitEnv(tick));
    await git(work, ['push', '-q', 'origin', 'HEAD:main'], gitEnv(tick));
    return git(work, ['rev-parse', 'HEAD']);
  };
  await push(initial, 'fleet: initial specs');
  const bare = path.join(server.root, 'fleet.git');
  return {
    url,
    bare,
    statusFile: async (file, branch = 'drydock/status') => {
      try {
        return await git(bare, ['--git-dir', bare, 'show', `${branch}:${file}`]);
      } catch {
        return undefined;
      }
    },
    server,
    push,
    head: () => git(work, ['rev-parse', 'HEAD']),
    close: async () => {
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

export async function startE2eCloud(cp: ControlPlane, stateDir: string, bootDelaySeconds = 1): Promise<RunningSimCloud> {
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

function deployment(namespace: string, name: string, replicas: number, workersOnly: boolean): KubernetesObject & { spec: unknown } {
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
                      nodeSelectorTerms: [{ matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }] }],
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
  const objects: (KubernetesObject & { spec?: unknown })[] = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: E2E_NAMESPACE } }];
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
export async function startWorld(cp: ControlPlane, dirs: string[]): Promise<{ sim: RunningSimCloud; repo: FleetRepo; cacheDir: string }> {
  const stateDir = tempDir('drydock-e2e-sim-');
  const cacheDir = tempDir('drydock-e2e-cache-');
  dirs.push(stateDir, cacheDir);
  const sim = await startE2eCloud(cp, stateDir);
  const kc = cp.adminKubeConfig();
  await eventually('9 sim nodes Ready', async () => (await nodes(kc)).filter((n) => n.ready && n.group !== '').length === 9, { timeoutMs: 60_000 });
  await applyWorkloads(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const want = E2E_APPS.reduce((n, a) => n + a.replicas, 0);
  await eventually('workload pods Running', async () => {
    const pods = await core.listNamespacedPod({ namespace: E2E_NAMESPACE });
    return pods.items.length === want && pods.items.every((p) => p.status?.phase === 'Running');
  }, { timeoutMs: 60_000 });
  const repo = await startFleetRepo(fleetFiles({ worker: IMAGE_V1, controlPlane: IMAGE_V1 }));
  return { sim, repo, cacheDir };
}

export async function applyWorkloads(kc: KubeConfig): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const object of workloadManifests()) {
    await client.patch(object, undefined, undefined, 'drydock-e2e', true, PatchStrategy.ServerSideApply);
  }
}

/** `drydock run` flags for the e2e world: fast polling, short leases. */
export function drydockArgs(repo: FleetRepo, kubeconfig: string, cloudUrl: string, cacheDir: string, namespace = 'kube-system'): string[] {
  return [
    '--namespace', namespace,
    '--repo', repo.url,
    '--branch', 'main',
    '--kubeconfig', kubeconfig,
    '--provider', 'sim',
    '--cloud-endpoint', cloudUrl,
    '--listen', '127.0.0.1:0',
    '--interval', '1s',
    '--resync', '3s',
    '--cache-dir', cacheDir,
    '--lease-duration', '3s',
    '--renew-deadline', '2s',
    '--retry-period', '500ms',
  ];
}

/** deploy/'s Namespace, ServiceAccount and RBAC, applied as they are. */
export async function applyDeployRbac(kc: KubeConfig): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const file of ['namespace.yaml', 'serviceaccount.yaml', 'rbac.yaml']) {
    for (const d of parseAllDocuments(readFileSync(path.join(ROOT, 'deploy', file), 'utf8'))) {
      await client.patch(d.toJS() as KubernetesObject, undefined, undefined, 'drydock-e2e', true, PatchStrategy.ServerSideApply);
    }
  }
}

/** A kubeconfig that authenticates as deploy/'s ServiceAccount (client certificate with its user name and groups). */
export async function serviceAccountKubeconfig(cp: ControlPlane): Promise<string> {
  const u = await cp.kubeconfigFor('system:serviceaccount:drydock-system:drydock', ['system:serviceaccounts', 'system:serviceaccounts:drydock-system']);
  return u.kubeconfigPath;
}

export const WEBHOOK_SECRET = 'e2e-webhook-secret';

/** POSTs a signed push notification to drydock's webhook route; resolves to the HTTP status. */
export async function notifyWebhook(drydockUrl: string): Promise<number> {
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const sig = createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex');
  const r = await fetch(`${drydockUrl}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-drydock-signature': `sha256=${sig}` },
    body,
  });
  return r.status;
}

export interface DrydockChild {
  readonly proc: ChildProcess;
  readonly url: Promise<string>;
  /** Every log line so far (JSON lines from stdout, text from stderr). */
  readonly lines: string[];
  /** Parsed JSON log records. */
  records(): Record<string, unknown>[];
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

export function startDrydockChild(args: readonly string[], env: NodeJS.ProcessEnv = {}): DrydockChild {
  const proc = spawn(process.execPath, [DRYDOCK_BIN, 'run', ...args], {
    env: {
      ...process.env,
      DRYDOCK_GIT_USERNAME: TEST_USER.username,
      DRYDOCK_GIT_PASSWORD: TEST_USER.password,
      DRYDOCK_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let resolveUrl!: (u: string) => void;
  const url = new Promise<string>((r) => {
    resolveUrl = r;
  });
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let buf = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        if (process.env.DRYDOCK_E2E_VERBOSE === '1') process.stderr.write(`      | ${line}\n`);
        const m = /listening on (https?:\/\/\S+)/.exec(line);
        if (m?.[1]) resolveUrl(m[1]);
      }
    });
  };
  collect(proc.stdout);
  collect(proc.stderr);
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return {
    proc,
    url,
    lines,
    records: () =>
      lines.flatMap((l) => {
        if (!l.startsWith('{')) return [];
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    exited,
    kill: (signal) => {
      proc.kill(signal);
    },
  };
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
  const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'cluster-autoscaler', namespace: 'kube-system' });
  const previous = d.metadata?.annotations?.['drydock.dev/previous-replicas'];
  return { replicas: d.spec?.replicas ?? 1, ...(previous !== undefined ? { previous } : {}) };
}

/** Whether a node holds drydock's per-node lock (an operation not yet Done). */
export function locked(n: NodeView): boolean {
  return n.annotations['drydock.dev/operation'] !== undefined && n.annotations['drydock.dev/phase'] !== 'Done';
}

/** Every sim node on `image`, Ready, schedulable and unlocked; throws what is not, for eventually(). */
export async function converged(kc: KubeConfig, image: string, count = 9): Promise<true> {
  const ns = (await nodes(kc)).filter((n) => n.group !== '');
  const off = ns.filter((n) => !(n.image === image && n.ready && !n.unschedulable && !locked(n)));
  if (off.length > 0 || ns.length !== count) {
    const what = off.map((n) => `${n.name} image=${n.image} ready=${n.ready} cordoned=${n.unschedulable} phase=${n.annotations['drydock.dev/phase'] ?? '-'}`);
    throw new Error(`${ns.length} nodes; not done: ${what.join('; ')}`);
  }
  return true;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}
