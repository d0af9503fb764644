/**
 * ClusterVersion and MachineConfigPools observed: what the planner reads of each (pure), and
 * the cache against a real API server: nothing asked until a MutexRunConfig wants it, a cluster
 * without the kinds named as such, then (their CRDs installed) both watched.
 */
import assert from 'node:assert/strict';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { pino } from 'pino';
import {
  buildOpenShift,
  listOpenShift,
  startOpenShiftCache,
  trimPool,
  unreadableReason,
  type OpenShiftCache,
  type RawPool,
} from '../../src/observe/openshift.js';
import { CountingKubeConfig, observe } from '../../src/observe/index.js';
import { buildClusterSnapshot } from '../../src/observe/cluster-cache.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { createClusterVersion, installOpenShiftCrds, MACHINE_CONFIG_POOL } from '../support/openshift.js';
import type { DesiredState, MutexRunConfig } from '../../src/spec/model.js';

const logger = pino({ level: 'silent' });
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const WORKER = { 'node-role.kubernetes.io/worker': '' };

const rawWorker: RawPool = {
  metadata: {
    name: 'worker',
    resourceVersion: '7',
    annotations: { 'drydock.dev/paused-by': 'MutexRunConfig/up', 'machineconfiguration.openshift.io/x': 'y' },
  },
  spec: { paused: true, nodeSelector: { matchLabels: WORKER }, maxUnavailable: '10%' },
  status: {
    configuration: { name: 'rendered-worker-1' },
    conditions: [
      { type: 'Updated', status: 'False' },
      { type: 'Degraded', status: 'True' },
      { type: 'Updating', status: 'True' },
    ],
  },
};

describe('observe OpenShift: what is read', () => {
  it('reads a pool: paused, selector, maxUnavailable, rendered config, Degraded and Updated; only drydock annotations', () => {
    const os = buildOpenShift({ clusterVersions: [], pools: [trimPool(rawWorker)] });
    assert.deepEqual(os.pools, [
      {
        name: 'worker',
        annotations: { 'drydock.dev/paused-by': 'MutexRunConfig/up' },
        paused: true,
        nodeSelector: { matchLabels: WORKER },
        maxUnavailable: '10%',
        configuration: 'rendered-worker-1',
        degraded: true,
        updated: false,
      },
    ]);
    assert.equal(os.clusterVersion, undefined);
    assert.deepEqual(os.absent, []);
  });

  it('reads ClusterVersion "version" only: the desired version and the history, newest first', () => {
    const os = buildOpenShift({
      clusterVersions: [
        { metadata: { name: 'other' }, spec: { desiredUpdate: { version: '9.9.9' } } },
        {
          metadata: { name: 'version' },
          spec: { desiredUpdate: { version: '4.16.4' } },
          status: {
            history: [
              { state: 'Partial', version: '4.16.4' },
              { state: 'Completed', version: '4.16.3' },
            ],
          },
        },
      ],
      pools: [],
    });
    assert.deepEqual(os.clusterVersion, {
      desiredVersion: '4.16.4',
      history: [
        { state: 'Partial', version: '4.16.4' },
        { state: 'Completed', version: '4.16.3' },
      ],
    });
  });

  it('says which rights to grant when a read is refused', () => {
    const reason = unreadableReason('MachineConfigPools', { code: 403, message: 'Forbidden\nbody' });
    assert.equal(
      reason,
      "cannot read MachineConfigPools: 403 Forbidden; grant drydock's ServiceAccount list and watch on MachineConfigPools (deploy/rbac.yaml)",
    );
  });

  it('observe asks for the OpenShift view only when a MutexRunConfig is desired', async () => {
    let asked = 0;
    const cluster = {
      snapshot: () => buildClusterSnapshot({ nodes: [], pods: [], pdbs: [], deployments: [], jobs: [] }),
      openshift: () => {
        asked += 1;
        return buildOpenShift({ clusterVersions: [], pools: [], absent: ['ClusterVersion'] });
      },
    };
    const none: Pick<DesiredState, 'scalingGroups' | 'autoscalingStrategies' | 'mutexRunConfigs'> = {
      scalingGroups: [],
      autoscalingStrategies: [],
      mutexRunConfigs: [],
    };
    const without = await observe(none, cluster, () => undefined);
    assert.equal(without.openshift, undefined);
    assert.equal(asked, 0);
    const run = { kind: 'MutexRunConfig', name: 'up' } as MutexRunConfig;
    const withRun = await observe({ ...none, mutexRunConfigs: [run] }, cluster, () => undefined);
    assert.deepEqual(withRun.openshift?.absent, ['ClusterVersion']);
    assert.equal(asked, 1);
  });
});

describe('observe OpenShift against a real API server', function () {
  this.timeout(120_000);
  const cp = useControlPlane();
  let kc: CountingKubeConfig;
  let cache: OpenShiftCache | undefined;
  let changes = 0;

  before(() => {
    kc = new CountingKubeConfig();
    kc.loadFromString(cp().kubeconfig);
  });
  after(async () => cache?.stop());

  it('asks nothing until viewed, names the absent kinds, then watches them once their CRDs are served', async () => {
    const before = kc.requestCount;
    cache = startOpenShiftCache({ kubeConfig: kc, logger, onChange: () => changes++, rediscoverMs: 300 });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(kc.requestCount, before, 'no request before a MutexRunConfig asks');
    const absent = await eventually('absent kinds', () => Promise.resolve(cache?.view()));
    assert.deepEqual(absent.absent, ['ClusterVersion', 'MachineConfigPool']);
    const listed = await listOpenShift(kc);
    assert.deepEqual(listed.absent, ['ClusterVersion', 'MachineConfigPool']);

    const admin = cp().adminKubeConfig();
    await installOpenShiftCrds(admin);
    const custom = admin.makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({
      ...MACHINE_CONFIG_POOL,
      body: {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfigPool',
        metadata: { name: 'worker' },
        spec: { nodeSelector: { matchLabels: WORKER }, paused: false },
      },
    });
    await createClusterVersion(custom, '00000000-0000-0000-0000-000000000001', '4.16.4');
    const served = await eventually('pools watched', () =>
      Promise.resolve(cache?.view()?.pools.length === 1 && cache.view()?.clusterVersion ? cache.view() : undefined),
    );
    assert.deepEqual(served.absent, []);
    assert.equal(served.clusterVersion?.desiredVersion, '4.16.4');
    assert.equal(served.pools[0]?.paused, false);

    const seen = changes;
    await custom.patchClusterCustomObject(
      { ...MACHINE_CONFIG_POOL, name: 'worker', body: { spec: { paused: true } } },
      MERGE,
    );
    await eventually('the pause through the watch', () => Promise.resolve(cache?.view()?.pools[0]?.paused));
    assert.ok(changes > seen, 'a change wakes a round');
    const idle = kc.requestCount;
    cache?.view();
    cache?.view();
    assert.equal(kc.requestCount, idle, 'a view from the cache asks nothing');
    assert.equal((await listOpenShift(kc)).pools[0]?.paused, true);
  });
});
