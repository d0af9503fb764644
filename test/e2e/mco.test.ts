/**
 * End to end on the real control plane, with the simulated Machine Config Operator: the node-
 * upgrade mutex operator's own MutexRule, MutexTarget and MutexRunConfig pushed through Git,
 * the pools (worker, storage and the canary) applied as the cluster's manifests, then
 * ClusterVersion's desired release raised. drydock runs as deploy/'s ServiceAccount through a
 * recording proxy. What happened is read from the API server (watches on nodes, pools and the
 * rule's Jobs, replayed in order), never from drydock's logs:
 *  - every worker upgraded one at a time: once the canary pool has the new config, never two of
 *    its nodes short of it; never two nodes updating at once;
 *  - each rule Job once per node, before MCO was told to update it, each cleanup Job once after
 *    the node ran the release; pools unpaused and rule labels gone at the end; status Complete 3/3;
 *  - a node MCO reports Degraded halts the run, with MCO's reason in status;
 *  - every API call drydock made is allowed to deploy/'s ServiceAccount (SubjectAccessReview),
 *    and the OpenShift grants are the ones used.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { parse, parseDocument, stringify } from 'yaml';
import { parseSimConfigText } from '../../src/cloud/index.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/index.js';
import { MCO_KEYS, renderedConfigName, type MachineConfigPool } from '../../src/sim-host/mco-decide.js';
import { startCountingProxy, type CountingProxy } from '../service/counting-proxy.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import {
  CLUSTER_VERSION,
  createClusterVersion,
  installOpenShiftCrds,
  MACHINE_CONFIG_POOL,
} from '../support/openshift.js';
import { allowed, apiCallOf, callKey, type ApiCall } from './api-calls.js';
import { ApiLog, replay, type Announced } from './api-watch.js';
import {
  applyDeployRbac,
  drydockArgs,
  ROOT,
  serviceAccountKubeconfig,
  startDrydockChild,
  startFleetRepo,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const SEED = path.join(ROOT, 'test', 'fixtures', 'seeds', 'mutex-operator');
const JOB_NS = 'node-upgrade-mutex-operator';
const RULE_LABEL = `mutexrule.openshift-optional.skrzypek.io/storage-quiesce.${JOB_NS}`;
const WORKER = { 'node-role.kubernetes.io/worker': '' };
const WORKERS = ['workers-i-0001', 'workers-i-0002', 'workers-i-0003'];
const DEGRADED_REASON = 'unexpected on-disk state';
const SA = 'system:serviceaccount:drydock-system:drydock';
const SA_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:drydock-system', 'system:authenticated'];
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STATUS = 'status/MutexRunConfig/storage-upgrade.yaml';

interface RunStatus {
  phase?: string;
  waitingFor?: string;
  lastError?: string;
  progress?: { done: number; total: number };
  conditions?: { message?: string }[];
  nodes?: { node: string; phase: string; lastError?: string }[];
}

/** The seed's MutexRule as written, with the cleanUpJobSpec the operator's README documents. */
function seedRuleWithCleanup(): string {
  const doc = parseDocument(readFileSync(path.join(SEED, 'rule.yaml'), 'utf8'));
  doc.setIn(['spec', 'cleanUpJobSpec'], {
    template: {
      spec: {
        containers: [{ name: 'cleanup', image: 'ubi9/toolbox', command: ['/bin/sh', '-c', 'echo done'] }],
        restartPolicy: 'Never',
      },
    },
  });
  return doc.toString();
}

const seed = (file: string): string => readFileSync(path.join(SEED, file), 'utf8');

const annotation = (n: V1Node, key: string): string | undefined => n.metadata?.annotations?.[key];
const ready = (n: V1Node): boolean =>
  n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
/** MCO is updating the node: told to, not Done at it, or cordoned. */
const updating = (n: V1Node): boolean =>
  annotation(n, MCO_KEYS.desiredConfig) !== annotation(n, MCO_KEYS.currentConfig) ||
  annotation(n, MCO_KEYS.state) !== 'Done' ||
  n.spec?.unschedulable === true;

function selects(pool: MachineConfigPool, labels: Record<string, string>): boolean {
  const s = pool.spec?.nodeSelector;
  if (s === undefined) return false;
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of s.matchExpressions ?? []) {
    const has = k(labels, e.key);
    if (e.operator === 'DoesNotExist' && has) return false;
    if (e.operator === 'Exists' && !has) return false;
  }
  return true;
}
const k = (labels: Record<string, string>, key: string): boolean => Object.prototype.hasOwnProperty.call(labels, key);

/** The distinct Jobs of `step` for `node`, by uid, with when each was first announced. */
function jobsOf(events: readonly Announced[], node: string, step: 'before' | 'after'): { uid: string; at: number }[] {
  const out = new Map<string, number>();
  for (const e of events) {
    if (e.source !== 'jobs' || e.type !== 'ADDED') continue;
    const labels = e.obj.metadata?.labels ?? {};
    if (labels['drydock.dev/node'] !== node || labels['drydock.dev/step'] !== step) continue;
    const uid = e.obj.metadata?.uid ?? '';
    if (!out.has(uid)) out.set(uid, e.at);
  }
  return [...out].map(([uid, at]) => ({ uid, at }));
}

/** When `node` was first announced with `check` true, after `from`. */
function firstSeen(events: readonly Announced[], node: string, from: number, check: (n: V1Node) => boolean): number {
  const e = events.find(
    (x) => x.source === 'nodes' && x.at >= from && x.obj.metadata?.name === node && check(x.obj as V1Node),
  );
  return e?.at ?? Infinity;
}

describe('e2e: the mutex operator run drives an OpenShift upgrade through the simulated MCO', function () {
  this.timeout(300_000);
  const cp = useControlPlane({ jobPods: 'host' });
  const dirs: string[] = [];
  const log = new ApiLog();
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  let proxy: CountingProxy | undefined;
  let custom: CustomObjectsApi;
  let core: CoreV1Api;

  const pool = (name: string, nodeSelector: object) =>
    custom.createClusterCustomObject({
      ...MACHINE_CONFIG_POOL,
      body: {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfigPool',
        metadata: { name },
        spec: { nodeSelector, machineConfigSelector: { matchLabels: {} }, paused: false, maxUnavailable: 1 },
      },
    });
  const raise = (version: string) =>
    custom.patchClusterCustomObject(
      { ...CLUSTER_VERSION, name: 'version', body: { spec: { desiredUpdate: { version } } } },
      MERGE,
    );
  const workers = async (): Promise<V1Node[]> =>
    (await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' })).items;
  const runStatus = async (): Promise<RunStatus | undefined> => {
    const text = await repo?.statusFile(STATUS);
    return text === undefined ? undefined : (parse(text) as RunStatus);
  };

  before(async function () {
    this.timeout(180_000);
    const admin = cp().adminKubeConfig();
    custom = admin.makeApiClient(CustomObjectsApi);
    core = admin.makeApiClient(CoreV1Api);
    await installOpenShiftCrds(admin);
    const stateDir = tempDir('drydock-e2e-mco-sim-');
    const cacheDir = tempDir('drydock-e2e-mco-cache-');
    dirs.push(stateDir, cacheDir);
    const config = parseSimConfigText(
      stringify({
        bootDelaySeconds: 0,
        groups: [{ id: 'workers', role: 'worker', size: 3, image: 'rhcos-v1' }],
        host: { rebootSeconds: 2, jobRunSeconds: 1 },
        // The control plane takes a few seconds, as on OpenShift the workers follow it.
        mco: { enabled: true, degradedReason: DEGRADED_REASON, controlPlaneSeconds: 4 },
      }),
    );
    sim = await runSimCloud({ config, stateDir, kubeconfigPath: cp().kubeconfigPath, host: '127.0.0.1', port: 0 });
    await eventually('3 Ready workers', async () => (await workers()).filter(ready).length === 3, {
      timeoutMs: 60_000,
    });
    await createClusterVersion(custom, 'e2e', '4.15.1');
    // The cluster's manifests: the seed's target pools, and a canary pool that leaves out the
    // nodes waiting for their MutexRule (the custom pools first, as the MCO wants them).
    await pool('storage', { matchLabels: { pool: 'storage' } });
    await pool('canary', { matchLabels: WORKER, matchExpressions: [{ key: RULE_LABEL, operator: 'DoesNotExist' }] });
    await pool('worker', { matchLabels: WORKER });
    await eventually(
      'every worker at 4.15.1',
      async () => {
        const ws = await workers();
        const off = ws.filter(
          (n) => n.metadata?.labels?.[MCO_KEYS.releaseVersion] !== '4.15.1' || updating(n) || !ready(n),
        );
        if (off.length === 0) return true;
        throw new Error(
          `not at 4.15.1: ${off.map((n) => `${n.metadata?.name} ${JSON.stringify(n.metadata?.annotations)}`).join('; ')}`,
        );
      },
      { timeoutMs: 60_000 },
    );

    // deploy/'s RBAC, and the rule's Job namespace granted as deploy/'s Role grants its own.
    await applyDeployRbac(admin);
    await core.createNamespace({ body: { metadata: { name: JOB_NS } } });
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: JOB_NS,
      body: {
        metadata: { name: 'drydock-jobs' },
        rules: [
          { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'delete'] },
          { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: JOB_NS,
      body: {
        metadata: { name: 'drydock-jobs' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'drydock-jobs' },
        subjects: [{ kind: 'ServiceAccount', name: 'drydock', namespace: 'drydock-system' }],
      },
    });
    // drydock as the ServiceAccount, every request through the recording proxy.
    const sa = new KubeConfig();
    sa.loadFromFile(await serviceAccountKubeconfig(cp()));
    proxy = await startCountingProxy(sa);
    const kubeconfig = path.join(cacheDir, 'proxy.kubeconfig');
    writeFileSync(kubeconfig, proxy.kubeconfig);

    await log.start(admin, {
      nodes: '/api/v1/nodes',
      pools: '/apis/machineconfiguration.openshift.io/v1/machineconfigpools',
      jobs: `/apis/batch/v1/namespaces/${JOB_NS}/jobs`,
    });
    repo = await startFleetRepo({
      'drydock.yaml': stringify({
        apiVersion: 'drydock.dev/v1alpha1',
        kind: 'RepoConfig',
        cluster: 'e2e',
        budget: { maxUnavailable: 1 },
        defaults: { rollout: { concurrency: 1, stopOnFailure: true } },
        paths: ['mutex'],
        statusBranch: 'drydock/status',
      }),
      'mutex/.keep': '',
    });
    drydock = startDrydockChild(drydockArgs(repo, kubeconfig, sim.url, cacheDir, 'drydock-system'));
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  });

  after(async function () {
    this.timeout(30_000);
    log.stop();
    await stopWorld({ drydock, sim, repo, dirs });
    await proxy?.close();
  });

  it('upgrades every worker one at a time: rule Job before, cleanup Job after, pools unpaused, Complete 3/3', async () => {
    await repo?.push(
      {
        'mutex/rule.yaml': seedRuleWithCleanup(),
        'mutex/run.yaml': seed('run.yaml'),
        'mutex/target.yaml': seed('target.yaml'),
      },
      'mutex: the operator’s rule, target and run, as written',
    );
    await eventually(
      'the run Complete at 4.15.1',
      async () => {
        const s = await runStatus();
        return s?.phase === 'Complete' && /4\.15\.1/.test(JSON.stringify(s)) ? s : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const raisedAt = Date.now();
    await raise('4.15.2');
    const done = await eventually(
      'every worker at 4.15.2, the run Complete',
      async () => {
        const ws = await workers();
        const off = ws.filter(
          (n) =>
            n.metadata?.labels?.[MCO_KEYS.releaseVersion] !== '4.15.2' ||
            updating(n) ||
            k(n.metadata?.labels ?? {}, RULE_LABEL),
        );
        const s = await runStatus();
        if (off.length > 0 || s?.phase !== 'Complete' || s.progress?.done !== 3)
          throw new Error(`not yet: ${off.map((n) => n.metadata?.name).join(', ')}; status ${JSON.stringify(s)}`);
        return s;
      },
      { timeoutMs: 200_000, intervalMs: 500 },
    );
    assert.deepEqual(done.progress, { done: 3, total: 3 });
    // Pools unpaused, no drydock annotation left on them.
    await eventually('pools unpaused', async () => {
      const pools = (await custom.listClusterCustomObject(MACHINE_CONFIG_POOL)) as { items: MachineConfigPool[] };
      return pools.items.every((p) => p.spec?.paused !== true) ? true : undefined;
    });

    const events = log.events.filter((e) => e.at >= raisedAt);
    // One at a time, from the watch: once the canary pool has the new config, never two of its
    // nodes short of it; and never two nodes updating at once.
    const canaryConfig = renderedConfigName('canary', '4.15.2');
    let rendered = false;
    let maxShort = 0;
    let maxUpdating = 0;
    let paused = false;
    replay(events, (_e, state) => {
      const canary = state.get('pools')?.get('/canary') as MachineConfigPool | undefined;
      if (canary?.spec?.configuration?.name === canaryConfig) rendered = true;
      const nodes = [...(state.get('nodes')?.values() ?? [])] as V1Node[];
      if ((state.get('pools')?.get('/worker') as MachineConfigPool | undefined)?.spec?.paused) paused = true;
      maxUpdating = Math.max(maxUpdating, nodes.filter(updating).length);
      if (!rendered || canary === undefined) return;
      const short = nodes.filter(
        (n) =>
          selects(canary, n.metadata?.labels ?? {}) &&
          (annotation(n, MCO_KEYS.currentConfig) !== canaryConfig || updating(n)),
      );
      maxShort = Math.max(maxShort, short.length);
    });
    assert.ok(rendered, 'the canary pool got the new config');
    assert.ok(paused, 'the worker pool was paused during the run');
    assert.equal(maxShort, 1, 'never two nodes in the canary pool short of the new config');
    assert.equal(maxUpdating, 1, 'never two nodes updating at once');
    for (const node of WORKERS) {
      const before = jobsOf(events, node, 'before');
      const after = jobsOf(events, node, 'after');
      assert.equal(before.length, 1, `${node}: one rule Job`);
      assert.equal(after.length, 1, `${node}: one cleanup Job`);
      const told = firstSeen(events, node, raisedAt, (n) => annotation(n, MCO_KEYS.desiredConfig) === canaryConfig);
      const atRelease = firstSeen(
        events,
        node,
        raisedAt,
        (n) => n.metadata?.labels?.[MCO_KEYS.releaseVersion] === '4.15.2',
      );
      assert.ok((before[0]?.at ?? Infinity) < told, `${node}: its rule Job before MCO was told to update it`);
      assert.ok((after[0]?.at ?? -1) > atRelease, `${node}: its cleanup Job after it ran 4.15.2`);
    }
  });

  it('a node MCO reports Degraded halts the run, with MCO’s reason in status', async () => {
    const faulty = 'workers-i-0002';
    await core.patchNode(
      { name: faulty, body: { metadata: { labels: { 'sim.drydock.dev/mco-degrade': 'true' } } } },
      MERGE,
    );
    const raisedAt = Date.now();
    await raise('4.15.3');
    const halted = await eventually(
      'the run Halted',
      async () => {
        const s = await runStatus();
        return s?.phase === 'Halted' ? s : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    const text = JSON.stringify(halted);
    assert.ok(text.includes(DEGRADED_REASON), `status names MCO's reason: ${text}`);
    assert.equal(halted.nodes?.find((n) => n.node === faulty)?.phase, 'Failed');
    const ws = new Map((await workers()).map((n) => [n.metadata?.name ?? '', n]));
    assert.equal(ws.get('workers-i-0001')?.metadata?.labels?.[MCO_KEYS.releaseVersion], '4.15.3');
    assert.equal(
      ws.get('workers-i-0003')?.metadata?.labels?.[MCO_KEYS.releaseVersion],
      '4.15.2',
      'stopOnFailure: the node after the failed one is not started',
    );
    const events = log.events.filter((e) => e.at >= raisedAt);
    assert.equal(jobsOf(events, 'workers-i-0003', 'before').length, 0, 'no rule Job for the node not started');
  });

  it('every API call drydock made is allowed to deploy/’s ServiceAccount, the OpenShift ones included', async () => {
    const admin = cp().adminKubeConfig();
    const calls = new Map<string, ApiCall>();
    for (const r of proxy?.requests ?? []) {
      const c = apiCallOf(r);
      calls.set(callKey(c), c);
    }
    const denied: string[] = [];
    for (const [key, call] of calls) if (!(await allowed(admin, SA, SA_GROUPS, call))) denied.push(key);
    assert.deepEqual(denied, [], 'calls deploy/ RBAC does not allow');
    const openshift = [...calls.keys()].filter((key) => /openshift\.io|core\/nodes$/.test(key));
    for (const want of [
      'list config.openshift.io/clusterversions',
      'watch config.openshift.io/clusterversions',
      'list machineconfiguration.openshift.io/machineconfigpools',
      'watch machineconfiguration.openshift.io/machineconfigpools',
      'patch machineconfiguration.openshift.io/machineconfigpools',
      'patch core/nodes',
    ])
      assert.ok(openshift.includes(want), `${want} was made: ${openshift.join(', ')}`);
  });
});
