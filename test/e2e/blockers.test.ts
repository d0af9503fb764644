/**
 * End to end, what holds a rollout back: a drain blocked by a PDB (reported by name, then
 * resumed when the PDB allows it), and a replacement that never joins (removed, counted as a
 * failure, the rollout halted cleanly). `drydock plan`, run as a user RBAC allows only
 * get/list/watch, reports the same blockers and changes nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  AppsV1Api,
  CoreV1Api,
  PolicyV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { useControlPlane, eventually, statusOf } from '../support/control-plane.js';
import { TEST_USER } from '../support/git-server.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import {
  converged,
  DRYDOCK_BIN,
  ROOT,
  E2E_NAMESPACE,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  IMAGE_V3,
  nodes,
  startDrydockChild,
  startWorld,
  stopWorld,
  drydockArgs,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

interface PlanRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runPlan(args: readonly string[]): Promise<PlanRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [DRYDOCK_BIN, 'plan', ...args], {
      env: { ...process.env, DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every Node's and Deployment's resourceVersion: equal before and after means nothing was written. */
async function fingerprint(kc: KubeConfig): Promise<string[]> {
  const ns = await kc.makeApiClient(CoreV1Api).listNode();
  const ds = await kc.makeApiClient(AppsV1Api).listDeploymentForAllNamespaces();
  return [
    ...ns.items.map((n) => `node/${n.metadata?.name}@${n.metadata?.resourceVersion}/${n.spec?.unschedulable === true}`),
    ...ds.items.map(
      (d) =>
        `deploy/${d.metadata?.namespace}/${d.metadata?.name}@${d.spec?.replicas}/${JSON.stringify(d.metadata?.annotations ?? {})}`,
    ),
  ].sort();
}

describe('e2e: blockers, and drydock plan as a read-only user', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  let viewer: string;
  let cacheDir = '';
  const dirs: string[] = [];
  const workerOnly = (image: string, rollout: Record<string, unknown> = {}): Record<string, string> => ({
    'images/worker.yaml':
      fleetFiles({ worker: image, controlPlane: IMAGE_V1, workerRollout: rollout })['images/worker.yaml'] ?? '',
  });
  const statusRecords = (): Record<string, unknown>[] =>
    drydock?.records().filter((r) => r.msg === 'status changed') ?? [];
  const waitsOf = (r: Record<string, unknown>): { code: string; reason: string }[] =>
    (r.waits as { code: string; reason: string }[] | undefined) ?? [];

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, cacheDir } = await startWorld(cp(), dirs));
    const kc = cp().adminKubeConfig();
    // A reader: deploy/plan-reader.yaml's ClusterRole, the one docs/guides/ci.md gives CI.
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const reader = parseAllDocuments(readFileSync(path.join(ROOT, 'deploy/plan-reader.yaml'), 'utf8')).map(
      (d) => d.toJS() as { kind: string; rules?: V1PolicyRule[] },
    );
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'drydock-plan-reader' },
        rules: reader.find((d) => d.kind === 'ClusterRole')?.rules ?? [],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'drydock-plan-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'drydock-plan-reader' },
        subjects: [{ kind: 'User', name: 'plan-reader', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    viewer = (await cp().kubeconfigFor('plan-reader')).kubeconfigPath;
    drydock = startDrydockChild(drydockArgs(repo, cp().kubeconfigPath, sim.url, cacheDir));
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  const planArgs = (): string[] => [
    '--repo',
    repo.url,
    '--kubeconfig',
    viewer,
    '--provider',
    'sim',
    '--cloud-endpoint',
    sim.url,
  ];

  it('the reader really cannot write', async () => {
    const kc = (await cp().kubeconfigFor('plan-reader')).kubeConfig();
    const err = await kc
      .makeApiClient(CoreV1Api)
      .deleteNode({ name: 'workers-i-0001' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.equal(statusOf(err), 403);
  });

  it('drydock plan shows the rollout a push would start, exit 0, and changes nothing', async () => {
    const kc = cp().adminKubeConfig();
    await repo.push(workerOnly(IMAGE_V2), 'images: worker v2 (plan only; the service is stopped first)');
    // Stop the service so nothing else writes while the plan runs.
    drydock?.kill('SIGTERM');
    await drydock?.exited;
    const before = await fingerprint(kc);
    const groupBefore = await sim.cloud.describeGroup('workers');
    const run = await runPlan([...planArgs(), '--format', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as {
      blocked: boolean;
      actions: { kind: string }[];
      waves: { nodes: string[] }[];
      eta: string | null;
    };
    assert.equal(out.blocked, false);
    assert.ok(
      out.actions.some((a) => a.kind === 'setGroupImage'),
      'the first step sets the group image',
    );
    // Which nodes go in which wave is the planner's forecast (tested with the planner); here it
    // only has to reach the output.
    assert.ok(Array.isArray(out.waves));
    assert.deepEqual(await fingerprint(kc), before);
    assert.deepEqual(await sim.cloud.describeGroup('workers'), groupBefore);
    const md = await runPlan([...planArgs(), '--format', 'markdown']);
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /\| NodeImage\/worker \|/);
  });

  it('a drain blocked by a PDB is reported by name, and resumes when the PDB allows it', async () => {
    const kc = cp().adminKubeConfig();
    const policy = kc.makeApiClient(PolicyV1Api);
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'api',
      namespace: E2E_NAMESPACE,
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 2 }],
    });
    await eventually(
      'PDB api allows 0',
      async () =>
        (await policy.readNamespacedPodDisruptionBudget({ name: 'api', namespace: E2E_NAMESPACE })).status
          ?.disruptionsAllowed === 0,
    );
    drydock = startDrydockChild(drydockArgs(repo, cp().kubeconfigPath, sim.url, cacheDir));
    await eventually(
      'a pdb wait naming apps/api',
      async () =>
        statusRecords().some((r) =>
          waitsOf(r).some((w) => w.code === 'pdb' && w.reason.includes(`PDB ${E2E_NAMESPACE}/api`)),
        ),
      { timeoutMs: 60_000 },
    );
    await eventually('the status branch names the PDB', async () => {
      const readme = await repo.statusFile('README.md');
      const spec = await repo.statusFile('status/NodeImage/worker.yaml');
      return [readme, spec].every((t) => t !== undefined && t.includes(`PDB ${E2E_NAMESPACE}/api`));
    });
    const run = await runPlan([...planArgs(), '--format', 'text']);
    assert.equal(run.code, 1, `blocked plan exits 1: ${run.stderr}`);
    assert.ok(run.stdout.includes(`[pdb] NodeImage/worker`), run.stdout);
    assert.ok(run.stdout.includes(`PDB ${E2E_NAMESPACE}/api allows 0 disruptions`), run.stdout);
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'api',
      namespace: E2E_NAMESPACE,
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 1 }],
    });
    await eventually('every worker on v2', () => converged(kc, IMAGE_V2, 6, 'workers'), {
      timeoutMs: 150_000,
      intervalMs: 1_000,
    });
  });

  it('a replacement that never joins is removed, counted as a failure, and the rollout halts cleanly', async () => {
    const kc = cp().adminKubeConfig();
    await sim.cloud.failNextBoots(1);
    const before = sim.cloud.inspectGroup('workers').nextInstance;
    await repo.push(workerOnly(IMAGE_V3, { joinTimeout: '4s', stopOnFailure: true }), 'images: worker v3');
    await eventually(
      'a halted wait',
      async () => statusRecords().some((r) => waitsOf(r).some((w) => w.code === 'halted')),
      { timeoutMs: 60_000 },
    );
    // The instance that never joined is gone from the cloud.
    const failedId = `i-${String(before).padStart(4, '0')}`;
    await eventually('the failed instance removed', async () => {
      const g = await sim.cloud.describeGroup('workers');
      return !g.instances.some((i) => i.id === failedId && i.state !== 'terminating');
    });
    // No node left cordoned by drydock without a reason on it.
    for (const n of await nodes(kc)) {
      if (n.unschedulable) assert.ok(n.annotations['drydock.dev/reason'], `${n.name} is cordoned and says why`);
    }
    const run = await runPlan([...planArgs(), '--format', 'json']);
    assert.equal(run.code, 1, run.stderr);
    assert.ok((JSON.parse(run.stdout) as { blockers: { code: string }[] }).blockers.some((b) => b.code === 'halted'));
  });
});
