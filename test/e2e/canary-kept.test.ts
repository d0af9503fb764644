/**
 * End to end: a worker rollout that needs an approval after its canary, beside the sandbox's
 * own NodeOpUpgrade over the workers (examples-repo/templates/edge-upgrade.yaml, copied into operations/ unchanged as its README says).
 * The NodeOpUpgrade takes the canary replacement once it is Done, runs its Job, reboots it and
 * releases it; the rollout must still see its canary, so no second original worker is locked
 * for replacement before the approval is merged. Checked from a watch on Nodes (what the API
 * server announced), never from drydock's logs. Real control plane, Git server, sim cloud.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { useControlPlane, eventually } from '../support/control-plane.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../src/protocol/keys.js';
import { ApiLog, replay } from './api-watch.js';
import {
  afterRounds,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  nodes,
  ROOT,
  specDoc,
  startWorldWithDrydock,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
  type NodeView,
} from './world.js';

const EXAMPLE = readFileSync(path.join(ROOT, 'examples-repo/templates/edge-upgrade.yaml'), 'utf8');
const UPGRADE = (parse(EXAMPLE) as { metadata: { name: string } }).metadata.name;

/** The original workers (sim group workers, not a replacement) the NodeImage locked, in order. */
function lockedOriginals(log: ApiLog, originals: ReadonlySet<string>, until = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = [];
  replay(
    log.events.filter((e) => e.at <= until),
    (e) => {
      const name = e.obj.metadata?.name ?? '';
      const lock = e.obj.metadata?.annotations?.[ANNOTATIONS.operation] ?? '';
      if (e.source === 'nodes' && originals.has(name) && lock.startsWith('NodeImage/worker@') && !out.includes(name))
        out.push(name);
    },
  );
  return out;
}

describe('e2e: a canary taken by another operation is still the canary', function () {
  this.timeout(720_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  const log = new ApiLog();
  const workers = async (): Promise<NodeView[]> =>
    (await nodes(cp().adminKubeConfig())).filter((n) => n.group === 'workers');

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, drydock } = await startWorldWithDrydock(cp(), dirs));
    await log.start(cp().adminKubeConfig(), { nodes: '/api/v1/nodes' });
  });

  after(async function () {
    this.timeout(30_000);
    log.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('no second original worker starts before the afterCanary approval, then the rollout goes on', async () => {
    const fleet = repo;
    assert.ok(fleet);
    const originals = new Set((await workers()).map((n) => n.name));
    const rollout = { canary: { nodes: 1, soak: '1s' }, approval: { required: 'afterCanary' } };
    const files = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V1, workerRollout: rollout });
    await fleet.push({ 'images/worker.yaml': files['images/worker.yaml'] ?? '' }, 'images: worker v2, afterCanary');

    // 1. The canary is replaced and marked; the rollout waits for its approval.
    const canary = await eventually(
      'the canary replacement is Done',
      async () => {
        const done = (await workers()).find((n) => n.annotations[ANNOTATIONS.replaces] !== undefined);
        if (done === undefined) throw new Error('no replacement marked yet');
        return done.name;
      },
      { timeoutMs: 90_000 },
    );

    // 2. The sandbox's NodeOpUpgrade over the workers comes in; it reaches the canary too.
    await fleet.push({ [`clusters/${UPGRADE}.yaml`]: EXAMPLE }, 'operations: the sandbox NodeOpUpgrade');
    await eventually(
      `${UPGRADE} took ${canary}, finished and released it`,
      async () => {
        // A second original worker locked now is the failure itself: no need to wait on.
        if (lockedOriginals(log, originals).length > 1) return false;
        const n = (await workers()).find((w) => w.name === canary);
        const took = log.events.some(
          (e) =>
            e.obj.metadata?.name === canary &&
            e.obj.metadata.annotations?.[ANNOTATIONS.operation]?.startsWith('NodeOp/'),
        );
        if (!took || n?.annotations[nodeOpRecordKey(UPGRADE)] === undefined || n.annotations[ANNOTATIONS.operation]) {
          // What the upgrade waits for, so a timeout says why it never reached the canary.
          const upgrade = parse((await fleet.statusFile(`status/NodeOpUpgrade/${UPGRADE}.yaml`)) ?? '{}') as {
            phase?: string;
            waitingFor?: string;
            lastError?: string;
          };
          throw new Error(
            `${canary}: ${JSON.stringify(n?.annotations)}; ${UPGRADE}: ${upgrade.phase ?? '?'}, waiting for ` +
              `${upgrade.waitingFor ?? '-'}, last error ${upgrade.lastError ?? '-'}`,
          );
        }
        return true;
      },
      // The upgrade walks the workers one at a time, each with a reboot, and reaches the canary
      // at its place in that order: up to every worker's turn on a loaded 2-core machine.
      { timeoutMs: 480_000 },
    );
    // A few of drydock's rounds with the canary no longer under its lock.
    assert.ok(drydock);
    await afterRounds(drydock);
    // The status commit trails the rounds (it is written at most every 2 s): wait for the one that
    // says what the rollout waits for once the canary has soaked.
    await eventually(
      'the status says the approval is needed',
      async () => {
        const text = await fleet.statusFile('status/NodeImage/worker.yaml');
        const status = parse(text ?? '{}') as { waitingFor?: string };
        return /^approval needed \(after the canary wave\)/.test(status.waitingFor ?? '');
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const approvedAt = Date.now();
    const before = lockedOriginals(log, originals);
    assert.equal(before.length, 1, `original workers locked for replacement before the approval: ${before.join(', ')}`);

    // 3. The approval is merged: the rollout goes on with a second original worker.
    const approval = specDoc('Approval', 'worker-after-canary', {
      target: { kind: 'NodeImage', name: 'worker' },
      image: IMAGE_V2,
      stage: 'afterCanary',
    });
    await fleet.push({ 'clusters/approvals/worker-after-canary.yaml': approval }, 'approve NodeImage/worker');
    await eventually(
      'a second original worker is locked for replacement',
      async () => {
        if (lockedOriginals(log, originals).length < 2) throw new Error('still one');
        return true;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(lockedOriginals(log, originals, approvedAt).length, 1, 'none before the approval was merged');
  });
});
