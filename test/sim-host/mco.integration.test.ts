// The simulated Machine Config Operator against a real control plane with the OpenShift CRDs:
// raising ClusterVersion's desired release updates an unpaused pool's nodes no more than
// maxUnavailable at a time, each cordoned, drained through the Eviction API (a PDB holds it),
// rebooted and back Done with the new release label; a paused pool is not touched; a faulty
// node goes Degraded and says why.
import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  Watch,
  type V1Node,
} from '@kubernetes/client-node';
import { parseSimConfig } from '../../src/cloud/sim/config.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/process.js';
import { MCO_KEYS, renderedConfigName, type MachineConfigPool } from '../../src/sim-host/mco-decide.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import {
  CLUSTER_VERSION,
  createClusterVersion,
  installOpenShiftCrds,
  MACHINE_CONFIG_POOL,
} from '../support/openshift.js';

const NS = 'default';
const WORKERS = ['workers-i-0001', 'workers-i-0002', 'workers-i-0003'];
const PAUSED = 'infra-i-0001';
const FAULTY = 'edge-i-0001';
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const annotation = (n: V1Node, key: string) => n.metadata?.annotations?.[key];
const ready = (n: V1Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
/** Updating as the pool's maxUnavailable counts it: told to update and not Done yet, or cordoned, or down. */
const updating = (n: V1Node) =>
  annotation(n, MCO_KEYS.desiredConfig) !== annotation(n, MCO_KEYS.currentConfig) ||
  annotation(n, MCO_KEYS.state) !== 'Done' ||
  n.spec?.unschedulable === true ||
  !ready(n);

describe('sim MCO against a real control plane', function () {
  this.timeout(180_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let dir: string;
  let sim: RunningSimCloud | undefined;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  const seen: { at: number; node: V1Node }[] = [];
  let stopWatch: (() => void) | undefined;

  const pool = (name: string, matchLabels: Record<string, string>, paused = false) =>
    custom.createClusterCustomObject({
      ...MACHINE_CONFIG_POOL,
      body: {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfigPool',
        metadata: { name },
        spec: { nodeSelector: { matchLabels }, machineConfigSelector: { matchLabels: {} }, paused, maxUnavailable: 1 },
      },
    });
  const readPool = async (name: string) =>
    (await custom.getClusterCustomObject({ ...MACHINE_CONFIG_POOL, name })) as MachineConfigPool;
  const condition = (p: MachineConfigPool, type: string) => p.status?.conditions?.find((c) => c.type === type);

  before(async function () {
    this.timeout(120_000);
    const kc = cp().adminKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    await installOpenShiftCrds(kc);
    dir = await mkdtemp(path.join(tmpdir(), 'drydock-sim-mco-'));
    const config = parseSimConfig({
      bootDelaySeconds: 0,
      groups: [
        { id: 'workers', size: 3, image: 'rhcos-v1' },
        { id: 'infra', size: 1, image: 'rhcos-v1', labels: { pool: 'infra' } },
        { id: 'edge', size: 1, image: 'rhcos-v1', labels: { pool: 'edge' } },
      ],
      host: { rebootSeconds: 2 },
      mco: { enabled: true, degradedNodes: [FAULTY], degradedReason: 'unexpected on-disk state' },
    });
    sim = await runSimCloud({ config, stateDir: path.join(dir, 'state'), kubeConfig: kc });
    await eventually(
      '5 Ready sim nodes',
      async () => (await core.listNode({ labelSelector: 'sim.drydock.dev/group' })).items.filter(ready).length === 5,
    );
    await createClusterVersion(custom, 'sim', '4.15.1');
    // The custom pools first: a node the worker pool took first would move over with an update.
    await pool('infra', { pool: 'infra' }, true);
    await pool('edge', { pool: 'edge' });
    await pool('worker', { 'node-role.kubernetes.io/worker': '' });
    await eventually('every node at 4.15.1', async () => {
      const nodes = (await core.listNode({ labelSelector: 'sim.drydock.dev/group' })).items;
      return nodes.every((n) => n.metadata?.labels?.[MCO_KEYS.releaseVersion] === '4.15.1');
    });
    const w = await new Watch(kc).watch(
      '/api/v1/nodes',
      { labelSelector: 'sim.drydock.dev/group' },
      (_type: string, node: V1Node) => seen.push({ at: Date.now(), node }),
      () => undefined,
    );
    stopWatch = () => w.abort();
  });
  after(async () => {
    stopWatch?.();
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('renders each pool after the release and adopts the nodes that joined', async () => {
    const worker = await eventually('the worker pool Updated', async () => {
      const p = await readPool('worker');
      return condition(p, 'Updated')?.status === 'True' ? p : undefined;
    });
    assert.equal(worker.spec?.configuration?.name, renderedConfigName('worker', '4.15.1'));
    assert.equal(worker.status?.configuration?.name, renderedConfigName('worker', '4.15.1'));
    assert.equal(worker.status?.machineCount, 3, 'the infra and edge nodes are in their custom pools, not worker');
    const n = await core.readNode({ name: PAUSED });
    assert.equal(annotation(n, MCO_KEYS.currentConfig), renderedConfigName('infra', '4.15.1'));
  });

  it('updates the workers one at a time: cordoned, drained (a PDB holds it), rebooted, then Done at the new release', async () => {
    // A guarded pod on the first worker: its PDB allows no eviction until it is deleted.
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'guarded', labels: { app: 'guarded' } },
        spec: { nodeName: WORKERS[0], containers: [{ name: 'app', image: 'nginx' }] },
      },
    });
    const policy = cp().adminKubeConfig().makeApiClient(PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: { metadata: { name: 'guarded' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } },
    });
    await eventually('the guarded pod Running', async () => {
      const p = await core.readNamespacedPod({ namespace: NS, name: 'guarded' });
      return p.status?.phase === 'Running';
    });
    const from = new Map<string, string>();
    for (const name of WORKERS) from.set(name, (await core.readNode({ name })).status?.nodeInfo?.bootID ?? '');

    await custom.patchClusterCustomObject(
      { ...CLUSTER_VERSION, name: 'version', body: { spec: { desiredUpdate: { version: '4.15.2' } } } },
      MERGE,
    );
    await eventually('the first worker cordoned and Working', async () => {
      const n = await core.readNode({ name: WORKERS[0]! });
      return n.spec?.unschedulable === true && annotation(n, MCO_KEYS.state) === 'Working';
    });
    await new Promise((r) => setTimeout(r, 3000));
    const held = await core.readNode({ name: WORKERS[0]! });
    assert.ok(ready(held), 'no reboot while the PDB holds the drain');
    assert.equal(annotation(held, MCO_KEYS.drained), undefined);
    assert.equal(
      (await core.readNamespacedPod({ namespace: NS, name: 'guarded' })).metadata?.deletionTimestamp,
      undefined,
    );
    await policy.deleteNamespacedPodDisruptionBudget({ namespace: NS, name: 'guarded' });

    const target = renderedConfigName('worker', '4.15.2');
    await eventually(
      'every worker Done at 4.15.2',
      async () => {
        const nodes = (await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' })).items;
        return nodes.every(
          (n) =>
            annotation(n, MCO_KEYS.currentConfig) === target &&
            annotation(n, MCO_KEYS.state) === 'Done' &&
            n.spec?.unschedulable !== true &&
            ready(n) &&
            n.metadata?.labels?.[MCO_KEYS.releaseVersion] === '4.15.2',
        );
      },
      { timeoutMs: 90_000 },
    );
    await assert.rejects(core.readNamespacedPod({ namespace: NS, name: 'guarded' }), 'the guarded pod was evicted');

    // From the watch: never two workers updating at once, and each went through every step.
    const latest = new Map<string, V1Node>();
    let most = 0;
    for (const { node } of seen) {
      if (!WORKERS.includes(node.metadata?.name ?? '')) continue;
      latest.set(node.metadata?.name ?? '', node);
      most = Math.max(most, [...latest.values()].filter(updating).length);
    }
    assert.equal(most, 1, 'maxUnavailable 1: one worker updating at a time');
    for (const name of WORKERS) {
      const mine = seen.filter((s) => s.node.metadata?.name === name).map((s) => s.node);
      const first = (p: (n: V1Node) => boolean) => mine.findIndex(p);
      const desired = first((n) => annotation(n, MCO_KEYS.desiredConfig) === target);
      const cordoned = first((n) => n.spec?.unschedulable === true);
      const drained = first((n) => annotation(n, MCO_KEYS.drained) === target);
      const down = first((n) => !ready(n));
      const done = first((n) => annotation(n, MCO_KEYS.currentConfig) === target);
      assert.ok(desired >= 0 && desired <= cordoned, `${name}: told to update, then cordoned`);
      assert.ok(cordoned < drained && drained <= down && down < done, `${name}: cordoned, drained, down, then Done`);
      const end = mine[mine.length - 1]!;
      assert.notEqual(end.status?.nodeInfo?.bootID, from.get(name), `${name} rebooted`);
      assert.equal(annotation(end, MCO_KEYS.drained), undefined, `${name}: the sim's marks are gone`);
    }
    const worker = await eventually('the worker pool Updated at the new config', async () => {
      const p = await readPool('worker');
      return condition(p, 'Updated')?.status === 'True' && p.status?.configuration?.name === target ? p : undefined;
    });
    assert.equal(worker.status?.updatedMachineCount, 3);
    assert.equal(condition(worker, 'Updating')?.status, 'False');
  });

  it('leaves the paused pool alone', async () => {
    const n = await core.readNode({ name: PAUSED });
    assert.equal(annotation(n, MCO_KEYS.currentConfig), renderedConfigName('infra', '4.15.1'));
    assert.equal(annotation(n, MCO_KEYS.desiredConfig), renderedConfigName('infra', '4.15.1'));
    assert.equal(n.metadata?.labels?.[MCO_KEYS.releaseVersion], '4.15.1');
    assert.ok(!seen.some((s) => s.node.metadata?.name === PAUSED && updating(s.node)), 'never cordoned nor updating');
    const infra = await readPool('infra');
    assert.equal(infra.spec?.configuration?.name, renderedConfigName('infra', '4.15.2'), 'rendered, held back');
    assert.match(condition(infra, 'Updating')?.message ?? '', /Pool is paused/);
    assert.equal(condition(infra, 'Updated')?.status, 'False');
  });

  it('shows a faulty node Degraded with its reason, in the node and in its pool', async () => {
    const edge = await eventually('the edge pool Degraded', async () => {
      const p = await readPool('edge');
      return condition(p, 'Degraded')?.status === 'True' ? p : undefined;
    });
    const n = await core.readNode({ name: FAULTY });
    assert.equal(annotation(n, MCO_KEYS.state), 'Degraded');
    assert.match(annotation(n, MCO_KEYS.reason) ?? '', /^unexpected on-disk state/);
    assert.equal(annotation(n, MCO_KEYS.currentConfig), renderedConfigName('edge', '4.15.1'));
    assert.equal(edge.status?.degradedMachineCount, 1);
    assert.match(condition(edge, 'Degraded')?.message ?? '', new RegExp(`Node ${FAULTY} is reporting: "unexpected`));
  });
});
