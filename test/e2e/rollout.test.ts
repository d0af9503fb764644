/**
 * End to end, driven only by commits to a real Git server: the service (a child process)
 * rolls a 6-node worker group and a 3-node control-plane group on the sim cloud to a new
 * image, with workloads under PDBs and the autoscaler paused and restored.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { useControlPlane, eventually } from '../support/control-plane.js';
import type { RunningSimCloud } from '../../src/cloud/index.js';
import {
  applyWorkloads,
  converged,
  E2E_NAMESPACE,
  autoscalerReplicas,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  nodes,
  startDrydockChild,
  startE2eCloud,
  startFleetRepo,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

export function drydockArgs(repo: FleetRepo, kubeconfig: string, cloudUrl: string, cacheDir: string): string[] {
  return [
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

describe('e2e: image rollout driven by Git', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];

  before(async function () {
    this.timeout(120_000);
    const stateDir = tempDir('drydock-e2e-sim-');
    dirs.push(stateDir);
    sim = await startE2eCloud(cp(), stateDir);
    const kc = cp().adminKubeConfig();
    await eventually('9 sim nodes Ready', async () => (await nodes(kc)).filter((n) => n.ready && n.group !== '').length === 9, { timeoutMs: 60_000 });
    await applyWorkloads(kc);
    const core = kc.makeApiClient(CoreV1Api);
    await eventually('workload pods Running', async () => {
      const pods = await core.listNamespacedPod({ namespace: E2E_NAMESPACE });
      return pods.items.length === 6 && pods.items.every((p) => p.status?.phase === 'Running');
    }, { timeoutMs: 60_000 });
    repo = await startFleetRepo(fleetFiles({ worker: IMAGE_V1, controlPlane: IMAGE_V1 }));
    const cacheDir = tempDir('drydock-e2e-cache-');
    dirs.push(cacheDir);
    drydock = startDrydockChild(drydockArgs(repo, cp().kubeconfigPath, sim.url, cacheDir));
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  });

  after(async function () {
    this.timeout(30_000);
    if (drydock) {
      drydock.kill('SIGTERM');
      await drydock.exited;
    }
    await sim?.stop();
    await repo?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('is idle on the current image: no node touched', async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    const ns = await nodes(cp().adminKubeConfig());
    assert.ok(ns.every((n) => !n.unschedulable && n.annotations['drydock.dev/operation'] === undefined));
    await converged(cp().adminKubeConfig(), IMAGE_V1);
    assert.deepEqual(await autoscalerReplicas(cp().adminKubeConfig()), { replicas: 2 });
  });

  it('rolls every node to the new image, pausing and restoring the autoscaler, each node replaced once', async () => {
    const kc = cp().adminKubeConfig();
    let pausedSeen = false;
    const watcher = setInterval(() => {
      void autoscalerReplicas(kc).then((a) => {
        if (a.replicas === 0 && a.previous === '2') pausedSeen = true;
      }, () => undefined);
    }, 250);
    try {
      await repo.push({ 'images/worker.yaml': fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V2 })['images/worker.yaml'] ?? '', 'images/control-plane.yaml': fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V2 })['images/control-plane.yaml'] ?? '' }, 'images: node-os v2');
      await eventually('every node on v2, Ready, uncordoned and unlocked', () => converged(kc, IMAGE_V2), { timeoutMs: 150_000, intervalMs: 1_000 });
      await eventually('autoscaler restored', async () => {
        const a = await autoscalerReplicas(kc);
        return a.replicas === 2 && a.previous === undefined;
      });
    } finally {
      clearInterval(watcher);
    }
    assert.ok(pausedSeen, 'the autoscaler was scaled to 0 with its 2 replicas remembered during the rollout');
    // Each old instance replaced exactly once: 6 + 6 and 3 + 3 instances ever created.
    assert.equal(sim.cloud.inspectGroup('workers').nextInstance - 1, 12);
    assert.equal(sim.cloud.inspectGroup('control-plane').nextInstance - 1, 6);
  });
});
