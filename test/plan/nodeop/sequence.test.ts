/**
 * Seeded sequences of plan → execute (sometimes cut short, as a crash would) → time passes,
 * over a NodeOp with reboots, with the invariants checked after every round: a Job is never
 * created twice for a node and revision, at most one reboot per Job success, never more than
 * `concurrency` nodes in flight, control-plane nodes before workers, the cluster budget held,
 * and the status tells the truth: Complete only once every node is done and let go, never undone
 * later, and no node done is undone.
 */
import assert from 'node:assert/strict';
import { SeededRandom } from '../../../src/cloud/sim/random.js';
import { plan } from '../../../src/plan/index.js';
import type { SpecStatus } from '../../../src/plan/types.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../../src/protocol/keys.js';
import type { NodeOp, UpgradeGate } from '../../../src/spec/model.js';
import { config, desired, jobTemplate, upgradeGate } from '../fixtures.js';
import { nodeOp } from './fixtures.js';
import { NS, NodeOpWorld } from './world.js';

interface Scenario {
  readonly seed: number;
  readonly op: NodeOp;
  readonly budget: number;
  readonly failing?: string;
  readonly gates?: readonly UpgradeGate[];
}

function inFlight(w: NodeOpWorld, op: NodeOp): number {
  return [...w.nodes.values()].filter(
    (n) =>
      n.annotations[ANNOTATIONS.operation] === `NodeOp/${op.name}@${op.revision}` &&
      n.annotations[ANNOTATIONS.phase] !== 'Failed',
  ).length;
}

function checkInvariants(w: NodeOpWorld, op: NodeOp, budget: number): void {
  const limit = op.concurrency > 0 ? op.concurrency : Number.POSITIVE_INFINITY;
  const flying = inFlight(w, op);
  if (flying > limit) w.violations.push(`t=${w.now}: ${flying} nodes in flight, concurrency ${op.concurrency}`);
  const down = [...w.nodes.values()].filter((n) => n.unschedulable).length;
  if (down > budget) w.violations.push(`t=${w.now}: ${down} nodes cordoned, budget ${budget}`);
  const cpOpen = [...w.nodes.values()].some(
    (n) =>
      n.controlPlane &&
      n.annotations[nodeOpRecordKey(op.name)] !== op.revision &&
      n.annotations[ANNOTATIONS.phase] !== 'Failed',
  );
  const workerStarted = [...w.nodes.values()].some(
    (n) =>
      !n.controlPlane &&
      (n.annotations[ANNOTATIONS.operation] !== undefined || n.annotations[nodeOpRecordKey(op.name)] !== undefined),
  );
  if (cpOpen && workerStarted)
    w.violations.push(`t=${w.now}: a worker started before every control-plane node was done`);
  for (const [node, r] of w.hosts.reboots)
    if (r > (w.hosts.successes.get(node) ?? 0))
      w.violations.push(
        `t=${w.now}: node ${node} rebooted ${r} times for ${w.hosts.successes.get(node) ?? 0} Job successes`,
      );
}

/** Runs until the spec is Complete or Halted with nothing left to do; returns the last status. */
function run(s: Scenario): { world: NodeOpWorld; status: SpecStatus } {
  const random = new SeededRandom(s.seed);
  const w = new NodeOpWorld(random);
  w.addNode('cp-0', { controlPlane: true });
  w.addNode('cp-1', { controlPlane: true });
  for (let i = 0; i < 6; i++) w.addNode(`worker-${i}`, { failsJobs: s.failing === `worker-${i}` });
  const d = desired({ config: config(s.budget), nodeOps: [s.op], upgradeGates: s.gates ?? [] });
  let status: SpecStatus | undefined;
  for (let round = 0; round < 2000; round++) {
    const p = plan(d, w.observe(), new Date(w.now), { jobNamespace: NS, rebootTimeoutSeconds: 900 });
    const was = status;
    status = p.specs.find((x) => x.spec.name === s.op.name);
    if (was?.phase === 'Complete' && status?.phase !== 'Complete')
      w.violations.push(
        `t=${w.now}: Complete ${was.progress.done}/${was.progress.total}, then ${status?.phase ?? 'absent'} ${status?.progress.done ?? 0}/${status?.progress.total ?? 0}`,
      );
    // Complete says what the world is, as observed for this round: every node done and let go.
    const undone = [...w.nodes.values()].filter(
      (n) =>
        n.annotations[nodeOpRecordKey(s.op.name)] !== s.op.revision ||
        n.annotations[ANNOTATIONS.operation] !== undefined,
    );
    if (status?.phase === 'Complete' && undone.length > 0)
      w.violations.push(`t=${w.now}: Complete while ${undone.map((n) => n.name).join(', ')} not done`);
    if (was !== undefined && status !== undefined && status.progress.done < was.progress.done)
      w.violations.push(`t=${w.now}: ${was.progress.done} node(s) done, then ${status.progress.done}`);
    if (
      p.actions.length === 0 &&
      (status?.phase === 'Complete' || status?.phase === 'Halted') &&
      inFlight(w, s.op) === 0
    )
      break;
    // A crash: only a prefix of the round's actions happens.
    const cut = random.chance(0.15) ? random.int(0, p.actions.length) : p.actions.length;
    for (const a of p.actions.slice(0, cut)) w.apply(a);
    checkInvariants(w, s.op, s.budget);
    w.advance(random.int(1, 20) * 1000);
  }
  assert.ok(status !== undefined);
  return { world: w, status };
}

describe('NodeOp sequences (seeded, with crashes between actions)', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: every node runs its Job once and reboots once; invariants hold throughout`, () => {
      const op = nodeOp('patch', { concurrency: 2, rebootOnSuccess: true, cordon: true });
      const { world, status } = run({ seed, op, budget: 2 });
      assert.deepEqual(world.violations, []);
      assert.equal(status.phase, 'Complete');
      assert.deepEqual(status.progress, { done: 8, total: 8 });
      for (const n of world.nodes.values()) {
        assert.equal(world.hosts.reboots.get(n.name), 1, `${n.name} rebooted once`);
        assert.equal(n.annotations[nodeOpRecordKey('patch')], op.revision);
        assert.equal(n.unschedulable, false, `${n.name} uncordoned`);
        assert.equal(n.annotations[ANNOTATIONS.operation], undefined, `${n.name} released`);
      }
      assert.equal(world.hosts.jobs.size, 0, 'finished Jobs are cleaned up');
      assert.deepEqual([...world.hosts.rebootPods.keys()], [], 'reboot pods are cleaned up');
      assert.equal(
        [...world.hosts.jobCreates.values()].reduce((x, y) => x + y, 0),
        8,
      );
    });
  }

  for (const seed of [11, 12, 13, 14]) {
    it(`seed ${seed}: stopOnFailure halts on worker-2's failed Job; the failed node is uncordoned and names its Job`, () => {
      const op = nodeOp('patch', { concurrency: 2, rebootOnSuccess: true, cordon: true, stopOnFailure: true });
      const { world, status } = run({ seed, op, budget: 3, failing: 'worker-2' });
      assert.deepEqual(world.violations, []);
      assert.equal(status.phase, 'Halted');
      const failed = world.nodes.get('worker-2');
      assert.equal(failed?.annotations[ANNOTATIONS.phase], 'Failed');
      assert.equal(failed?.unschedulable, false);
      assert.match(
        failed?.annotations[ANNOTATIONS.reason] ?? '',
        /Job drydock-system\/nodeop-patch-worker-2-r1 failed after 4 attempt/,
      );
      const row = status.nodes.find((r) => r.node === 'worker-2');
      assert.equal(row?.phase, 'Failed');
      assert.equal(row?.job, 'drydock-system/nodeop-patch-worker-2-r1');
      assert.equal(world.hosts.reboots.get('worker-2'), undefined, 'a failed Job is never followed by a reboot');
      for (const n of world.nodes.values()) assert.equal(n.unschedulable, false, `${n.name} not left cordoned`);
    });
  }

  const gate = upgradeGate([{ kind: 'NodeOp', name: 'patch' }], { before: [jobTemplate(), jobTemplate()] });
  for (const seed of [21, 22, 23, 24]) {
    it(`seed ${seed}: with an UpgradeGate, each gate Job runs once per node, before-Jobs before the cordon, after-Jobs once uncordoned`, () => {
      const op = nodeOp('patch', { concurrency: 2, rebootOnSuccess: true, cordon: true });
      const { world, status } = run({ seed, op, budget: 2, gates: [gate] });
      assert.deepEqual(world.violations, []);
      assert.equal(status.phase, 'Complete');
      const gateCreates = [...world.hosts.jobCreates].filter(([name]) => name.startsWith('storage-'));
      assert.equal(gateCreates.length, 8 * 3, 'two before-Jobs and one after-Job on each of 8 nodes');
      assert.ok(gateCreates.every(([, n]) => n === 1));
      for (const n of world.nodes.values()) assert.equal(world.hosts.reboots.get(n.name), 1, `${n.name} rebooted once`);
      assert.equal(world.hosts.jobs.size, 0, 'gate Jobs are cleaned up too');
      assert.deepEqual([...world.hosts.rebootPods.keys()], [], 'reboot pods are cleaned up');
    });
  }
});
