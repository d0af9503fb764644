/**
 * End to end, controlPlaneFirst across specs: one commit changes both example-like NodeImages
 * (control-plane and worker); no worker is locked while a control-plane node of the other
 * NodeImage still runs the old image, and both finish.
 */
import assert from 'node:assert/strict';
import { useControlPlane, eventually } from '../support/control-plane.js';
import type { RunningSimCloud } from '../../src/cloud/index.js';
import {
  converged,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  locked,
  nodes,
  notifyWebhook,
  startWorldWithDrydock,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

describe('e2e: control plane first across NodeImages', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, drydock } = await startWorldWithDrydock(cp(), dirs));
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('every control-plane node is on the new image before any worker is locked', async () => {
    const kc = cp().adminKubeConfig();
    const f = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V2 });
    await repo.push(
      {
        'images/worker.yaml': f['images/worker.yaml'] ?? '',
        'images/control-plane.yaml': f['images/control-plane.yaml'] ?? '',
      },
      'images: both v2',
    );
    assert.ok(drydock);
    assert.equal(await notifyWebhook(await drydock.url), 202);
    const violations: string[] = [];
    let sawControlPlaneFirst = false;
    await eventually(
      'all 9 nodes on v2',
      async () => {
        const ns = await nodes(kc);
        const oldControlPlane = ns.filter((n) => n.group === 'control-plane' && n.image === IMAGE_V1);
        const lockedWorkers = ns.filter(
          (n) =>
            n.group === 'workers' &&
            locked(n) &&
            n.annotations['drydock.dev/operation']?.startsWith('NodeImage/worker@'),
        );
        if (oldControlPlane.length > 0 && lockedWorkers.length > 0)
          violations.push(
            `${lockedWorkers.map((n) => n.name).join(', ')} locked while ${oldControlPlane.map((n) => n.name).join(', ')} still on v1`,
          );
        if (ns.some((n) => n.group === 'control-plane' && locked(n))) sawControlPlaneFirst = true;
        return converged(kc, IMAGE_V2, 9);
      },
      { timeoutMs: 240_000, intervalMs: 250 },
    );
    assert.deepEqual(violations, []);
    assert.ok(sawControlPlaneFirst, 'the control plane was seen in flight');
    // The status branch follows the cluster a round later.
    await eventually(
      'both NodeImages Complete on the status branch',
      async () => {
        const readme = (await repo.statusFile('README.md')) ?? '';
        return ['control-plane', 'worker'].every((name) =>
          new RegExp(`\\| \\[NodeImage/${name}\\]\\([^)]*\\) \\| Complete \\|`).test(readme),
        );
      },
      { timeoutMs: 30_000 },
    );
  });
});
