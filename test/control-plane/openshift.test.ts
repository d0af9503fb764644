// Proof that the test world's OpenShift kinds are served by the real control plane: the
// ClusterVersion and MachineConfigPool CustomResourceDefinitions install and become Established,
// objects of both are created and read back, their status is written through the status
// subresource, and the schema refuses what OpenShift's API refuses for the fields kept.
import { strict as assert } from 'node:assert';

import { CustomObjectsApi } from '@kubernetes/client-node';

import { retryOnConflict, statusOf, useControlPlane } from '../support/control-plane.js';
import { CLUSTER_VERSION, installOpenShiftCrds, MACHINE_CONFIG_POOL } from '../support/openshift.js';

interface ClusterVersion {
  metadata: { name: string; resourceVersion?: string };
  spec: { clusterID: string; channel?: string; desiredUpdate?: { version: string }; capabilities?: unknown };
  status?: { history?: { state: string; version: string }[]; desired?: { version: string } };
}

interface MachineConfigPool {
  metadata: { name: string };
  spec: { paused?: boolean; nodeSelector?: { matchLabels?: Record<string, string> }; maxUnavailable?: number | string };
}

describe('test control plane: OpenShift ClusterVersion and MachineConfigPool', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  let objects: CustomObjectsApi;

  before(async () => {
    const kc = cp().adminKubeConfig();
    assert.deepEqual(await installOpenShiftCrds(kc), [
      'clusterversions.config.openshift.io',
      'machineconfigpools.machineconfiguration.openshift.io',
    ]);
    objects = kc.makeApiClient(CustomObjectsApi);
  });

  it('creates the ClusterVersion "version" and reads it back, fields it does not spell out kept', async () => {
    await objects.createClusterCustomObject({
      ...CLUSTER_VERSION,
      body: {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ClusterVersion',
        metadata: { name: 'version' },
        spec: {
          clusterID: '0f8a3c2e-6d1b-4b59-9d0e-7a2c4f1e8b30',
          channel: 'stable-4.16',
          desiredUpdate: { version: '4.16.4' },
          capabilities: { baselineCapabilitySet: 'vCurrent' },
        },
      },
    });
    const cv = (await objects.getClusterCustomObject({ ...CLUSTER_VERSION, name: 'version' })) as ClusterVersion;
    assert.deepEqual(
      [cv.spec.channel, cv.spec.desiredUpdate?.version, cv.spec.capabilities],
      ['stable-4.16', '4.16.4', { baselineCapabilitySet: 'vCurrent' }],
    );
  });

  it("writes the ClusterVersion's status through its status subresource", async () => {
    const now = '2026-03-02T10:00:00Z';
    const status = {
      desired: { version: '4.16.4', image: 'release:4.16.4' },
      history: [
        {
          state: 'Completed',
          version: '4.16.3',
          image: 'release:4.16.3',
          startedTime: now,
          completionTime: now,
          verified: false,
        },
      ],
      availableUpdates: null,
      observedGeneration: 1,
      versionHash: 'h1',
    };
    await retryOnConflict(async () => {
      const cv = (await objects.getClusterCustomObject({ ...CLUSTER_VERSION, name: 'version' })) as ClusterVersion;
      await objects.replaceClusterCustomObjectStatus({ ...CLUSTER_VERSION, name: 'version', body: { ...cv, status } });
    });
    const cv = (await objects.getClusterCustomObject({ ...CLUSTER_VERSION, name: 'version' })) as ClusterVersion;
    assert.deepEqual(
      [cv.status?.desired?.version, cv.status?.history?.map((h) => [h.state, h.version])],
      ['4.16.4', [['Completed', '4.16.3']]],
    );
  });

  it('refuses a ClusterVersion without spec.clusterID, as OpenShift does', async () => {
    const err = await objects
      .createClusterCustomObject({
        ...CLUSTER_VERSION,
        body: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'other' }, spec: {} },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.equal(statusOf(err), 422);
  });

  it('creates the MachineConfigPool "worker", reads it back, and pauses it', async () => {
    await objects.createClusterCustomObject({
      ...MACHINE_CONFIG_POOL,
      body: {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfigPool',
        metadata: { name: 'worker' },
        spec: {
          machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': 'worker' } },
          nodeSelector: { matchLabels: { 'node-role.kubernetes.io/worker': '' } },
          maxUnavailable: '10%',
          paused: false,
        },
      },
    });
    const read = async (): Promise<MachineConfigPool> =>
      (await objects.getClusterCustomObject({ ...MACHINE_CONFIG_POOL, name: 'worker' })) as MachineConfigPool;
    const pool = await read();
    assert.deepEqual(
      [pool.spec.nodeSelector?.matchLabels, pool.spec.maxUnavailable, pool.spec.paused],
      [{ 'node-role.kubernetes.io/worker': '' }, '10%', false],
    );
    await retryOnConflict(async () => {
      const p = await read();
      p.spec.paused = true;
      await objects.replaceClusterCustomObject({ ...MACHINE_CONFIG_POOL, name: 'worker', body: p });
    });
    assert.equal((await read()).spec.paused, true);
  });

  it('installs again over itself', async () => {
    assert.equal((await installOpenShiftCrds(cp().adminKubeConfig())).length, 2);
    const pool = (await objects.getClusterCustomObject({
      ...MACHINE_CONFIG_POOL,
      name: 'worker',
    })) as MachineConfigPool;
    assert.equal(pool.spec.paused, true, 'objects survive a second install');
  });
});
