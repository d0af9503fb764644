// The simulated cloud against a real control plane (etcd, kube-apiserver, controllers,
// scheduler, KWOK), reached over HTTP as drydock reaches it.
import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { CloudError } from '../../src/cloud/provider.js';
import { parseSimConfig } from '../../src/cloud/sim/config.js';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';
import { KubeNodeRegistry } from '../../src/cloud/sim/nodes.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/process.js';
import { eventually, statusOf, useControlPlane } from '../support/control-plane.js';

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

describe('sim cloud against a real control plane', function () {
  this.timeout(120_000);
  const cp = useControlPlane();
  let core: CoreV1Api;
  let dir: string;
  let sim: RunningSimCloud | undefined;
  let client: SimHttpProvider;

  const config = parseSimConfig({
    bootDelaySeconds: 0.5,
    terminateDelaySeconds: 1,
    quota: { maxInstancesPerGroup: 5 },
    faults: { retryAfterSeconds: 2 },
    groups: [
      {
        id: 'workers',
        role: 'worker',
        size: 3,
        image: 'os-v1',
        labels: { pool: 'general' },
        resources: { cpu: '8', memory: '32Gi', pods: '110' },
      },
      { id: 'cp', role: 'control-plane', size: 1, image: 'os-v1' },
    ],
  });

  async function startSim(): Promise<void> {
    sim = await runSimCloud({
      config,
      stateDir: path.join(dir, 'state'),
      nodes: new KubeNodeRegistry(cp().adminKubeConfig()),
    });
    client = new SimHttpProvider(sim.url);
  }

  /** Nodes of one sim group, by name. */
  async function groupNodes(groupId: string): Promise<Map<string, V1Node>> {
    const list = await core.listNode({ labelSelector: `sim.drydock.dev/group=${groupId}` });
    return new Map(list.items.map((n) => [n.metadata?.name ?? '', n]));
  }

  async function readyNodes(groupId: string, names: string[]): Promise<Map<string, V1Node>> {
    return eventually(`${names.join(', ')} Ready`, async () => {
      const nodes = await groupNodes(groupId);
      return names.every((n) => nodes.has(n) && isReady(nodes.get(n) as V1Node)) ? nodes : undefined;
    });
  }

  before(async () => {
    core = cp().adminKubeConfig().makeApiClient(CoreV1Api);
    dir = await mkdtemp(path.join(tmpdir(), 'drydock-sim-it-'));
    await startSim();
  });
  after(async () => {
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a group of N instances yields N Ready nodes, labelled, tainted and with their providerID', async () => {
    const nodes = await readyNodes('workers', ['workers-i-0001', 'workers-i-0002', 'workers-i-0003']);
    assert.equal(nodes.size, 3);
    const w = nodes.get('workers-i-0002');
    assert.equal(w?.spec?.providerID, 'sim://workers/i-0002');
    assert.equal(w?.metadata?.labels?.['node-role.kubernetes.io/worker'], '');
    assert.equal(w?.metadata?.labels?.['sim.drydock.dev/image'], 'os-v1');
    assert.equal(w?.metadata?.labels?.['pool'], 'general');
    assert.equal(w?.metadata?.labels?.['kubernetes.io/hostname'], 'workers-i-0002');
    assert.equal(w?.status?.allocatable?.['cpu'], '8');
    assert.equal(w?.status?.nodeInfo?.osImage, 'os-v1');

    const cps = await readyNodes('cp', ['cp-i-0001']);
    const c = cps.get('cp-i-0001');
    assert.equal(c?.metadata?.labels?.['node-role.kubernetes.io/control-plane'], '');
    // The node lifecycle controller's own taints (node.kubernetes.io/not-ready until it sees the
    // node Ready) come and go on their own; the sim's taint is the control plane's.
    assert.deepEqual(
      c?.spec?.taints?.filter((t) => !t.key.startsWith('node.kubernetes.io/')).map((t) => `${t.key}:${t.effect}`),
      ['node-role.kubernetes.io/control-plane:NoSchedule'],
    );

    const described = await client.describeGroup('workers');
    assert.deepEqual(
      described.instances.map((i) => i.providerID).sort(),
      [...nodes.values()].map((n) => n.spec?.providerID).sort(),
    );
  });

  it('pods schedule onto the joined workers and run', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'on-sim-worker' },
        spec: {
          nodeSelector: { 'sim.drydock.dev/group': 'workers' },
          containers: [{ name: 'app', image: 'app:1', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
        },
      },
    });
    const pod = await eventually('pod on-sim-worker Running', async () => {
      const p = await core.readNamespacedPod({ namespace: 'default', name: 'on-sim-worker' });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    assert.match(pod.spec?.nodeName ?? '', /^workers-i-000[123]$/);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'on-sim-worker', gracePeriodSeconds: 0 });
  });

  it('a new image, then a surge: the new instances and their Nodes carry the new image', async () => {
    await client.setGroupImage('workers', 'os-v2');
    const ids = await client.addCapacity('workers', 2);
    assert.deepEqual(ids, ['i-0004', 'i-0005']);
    const nodes = await readyNodes('workers', ['workers-i-0004', 'workers-i-0005']);
    for (const name of ['workers-i-0004', 'workers-i-0005']) {
      assert.equal(nodes.get(name)?.metadata?.labels?.['sim.drydock.dev/image'], 'os-v2', name);
      assert.equal(nodes.get(name)?.metadata?.annotations?.['sim.drydock.dev/image'], 'os-v2', name);
    }
    // Old instances keep their image.
    assert.equal(nodes.get('workers-i-0001')?.metadata?.labels?.['sim.drydock.dev/image'], 'os-v1');
    const group = await client.describeGroup('workers');
    assert.deepEqual(
      group.instances.map((i) => `${i.id}:${i.image}`),
      ['i-0001:os-v1', 'i-0002:os-v1', 'i-0003:os-v1', 'i-0004:os-v2', 'i-0005:os-v2'],
    );
  });

  it('removing an instance removes its Node; the instance terminates, then is gone', async () => {
    await client.removeInstance('workers', 'i-0001');
    await eventually('node workers-i-0001 deleted', async () => {
      try {
        await core.readNode({ name: 'workers-i-0001' });
        return false;
      } catch (err) {
        if (statusOf(err) === 404) return true;
        throw err;
      }
    });
    await eventually(
      'instance i-0001 gone',
      async () => !(await client.describeGroup('workers')).instances.some((i) => i.id === 'i-0001'),
    );
    assert.equal((await client.describeGroup('workers')).targetSize, 4);
  });

  it('each injected fault surfaces through the HTTP client as its typed error', async () => {
    await client.injectFaults('Throttled', 1);
    await assert.rejects(
      client.addCapacity('workers', 1),
      (err: unknown) => err instanceof CloudError && err.code === 'Throttled' && err.data.retryAfterSeconds === 2,
    );
    await client.injectFaults('Transient', 1);
    await assert.rejects(
      client.describeGroup('workers'),
      (err: unknown) => err instanceof CloudError && err.code === 'Transient',
    );
    await assert.rejects(
      client.addCapacity('workers', 2),
      (err: unknown) => err instanceof CloudError && err.code === 'QuotaExceeded' && err.data.quota?.limit === 5,
    );
    await assert.rejects(
      client.setGroupImage('nope', 'os-v3'),
      (err: unknown) => err instanceof CloudError && err.code === 'NotFound' && err.data.groupId === 'nope',
    );
    await assert.rejects(
      client.setGroupImage('workers', ''),
      (err: unknown) => err instanceof CloudError && err.code === 'Permanent',
    );

    // A boot that never joins: the instance runs, no Node appears, the others still join.
    await client.injectFaults('BootFailure', 1);
    const [lost] = await client.addCapacity('cp', 1);
    await eventually(
      'the lost instance running',
      async () => (await client.describeGroup('cp')).instances.find((i) => i.id === lost)?.state === 'running',
    );
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await groupNodes('cp')).has(`cp-${lost}`), false);
    const [joined] = await client.addCapacity('cp', 1);
    await readyNodes('cp', [`cp-${joined}`]);
  });

  it('a restart of the simulator keeps every instance and every Node', async () => {
    const before = await client.describeGroup('workers');
    const nodesBefore = [...(await groupNodes('workers')).keys()].sort();
    await sim?.stop();
    await startSim();
    assert.deepEqual(await client.describeGroup('workers'), before);
    assert.deepEqual([...(await groupNodes('workers')).keys()].sort(), nodesBefore);
    // Ids continue after a restart instead of being reused.
    assert.deepEqual(await client.addCapacity('workers', 1), ['i-0006']);
    await readyNodes('workers', ['workers-i-0006']);
  });
});
