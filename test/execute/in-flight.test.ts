import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CloudProvider } from '../../src/cloud/provider.js';
import { executeActions, InFlight, type ActionResult, type KubeApis } from '../../src/execute/index.js';
import type { Written } from '../../src/kube/written.js';
import { annotate, evict, recordingDeps, surge as surgeOf } from './plan-actions.js';
import type { Action } from '../../src/plan/types.js';

const surge = surgeOf(1);

/** Each result as `kind outcome`, in order. */
const outcomes = (results: readonly ActionResult[]): string[] =>
  results.map((r) => `${r.action.kind} ${r.outcome.kind}`);

/** A node's lock with its phase: a step that takes the node, so its lane is never left running whole. */
const lock = (node: string, phase: string, forNode?: string): Action => {
  const a = annotate(node, phase, forNode) as Action & { kind: 'annotateNode' };
  return { ...a, annotations: { ...a.annotations, 'drydock.dev/operation': 'NodeOp/op@1' } };
};

/** The caches' copies of nodes, each locked in the phase given (none: not cached). */
const cachedIn =
  (phases: Record<string, string>) =>
  (name: string): V1Node | undefined =>
    phases[name] === undefined
      ? undefined
      : {
          metadata: {
            name,
            annotations: { 'drydock.dev/operation': 'NodeOp/op@1', 'drydock.dev/phase': phases[name] },
          },
        };

/** A verified reboot's pod deleted: a node's clean-up. */
const deleteRebootPod = (node: string): Action => ({
  kind: 'deleteRebootPod',
  spec: { kind: 'NodeOp', name: 'op' },
  node,
  namespace: 'drydock-system',
  name: `reboot-${node}`,
  reason: 'test',
});

/** A fake API server (unit test of the executor's ordering): evictions are slow, the rest quick. */
function world(evictMs: number, refuse = false) {
  const log: string[] = [];
  const call = async (what: string, ms: number, refused = false): Promise<void> => {
    log.push(`start ${what}`);
    await sleep(ms);
    log.push(`end ${what}`);
    // A PDB's refusal, as the API server answers it.
    if (refused) throw Object.assign(new Error('Too Many Requests'), { statusCode: 429 });
  };
  let version = 0;
  const kube = {
    core: {
      patchNode: async ({
        name,
        body,
      }: {
        name: string;
        body: { metadata: { annotations: Record<string, string> } };
      }) => {
        await call(`${name} ${body.metadata.annotations['drydock.dev/phase'] ?? '?'}`, 5);
        return { metadata: { name, resourceVersion: String(++version) } };
      },
      createNamespacedPodEviction: ({ name }: { name: string }) => call(`evict ${name}`, evictMs, refuse),
      deleteNamespacedPod: ({ name }: { name: string }) => call(`delete ${name}`, evictMs),
    },
  } as unknown as KubeApis;
  const cloud = { addCapacity: () => call('surge', 5) } as unknown as CloudProvider;
  const settled: number[] = [];
  const writes: (readonly Written[])[] = [];
  const inFlight = new InFlight((s) => {
    settled.push(s.retryInMs);
    writes.push(s.written);
  });
  const deps = { ...recordingDeps(kube, cloud), inFlight };
  return { log, deps, inFlight, settled, writes };
}

describe('execute: a drain left running past its round (InFlight)', () => {
  it("takes the node drained, not the lane it runs in: a node started on another's handed-over slot", async () => {
    const w = world(200);
    const handed = (a: Action): Action => ({ ...a, forNode: 'a' });
    await executeActions([annotate('a', 'released'), handed(lock('b', 'Pending')), handed(evict('b', 'p1'))], w.deps);
    assert.ok(w.inFlight.has('b') && !w.inFlight.has('a'));
    // The next round's evictions of b (in b's own lane now) wait for the first ones; a's clean-up does not.
    const next = await executeActions([evict('b', 'p1'), deleteRebootPod('a')], w.deps);
    assert.deepEqual(next, [], 'the clean-up outlives the round; the evictions are not run');
    assert.ok(w.log.includes('start delete reboot-a'));
    assert.equal(
      w.log.filter((l) => l === 'start evict p1').length,
      1,
      'no second eviction while the first is in flight',
    );
    await w.inFlight.idle();
  });

  it("ends the round without a node's last-step evictions; the next round starts nothing on that node until they answer", async () => {
    const w = world(200);
    const first = await executeActions([lock('a', 'Draining'), evict('a', 'p1'), lock('b', 'Pending')], w.deps);
    assert.deepEqual(
      outcomes(first),
      ['annotateNode done', 'annotateNode done'],
      'the round returned with its other steps, not the evictions',
    );
    assert.ok(w.log.includes('start evict p1') && !w.log.includes('end evict p1'), 'the eviction is still under way');
    assert.ok(w.inFlight.has('a'));

    // The next round plans the eviction again (the pod is still there) and a step on another node.
    const second = await executeActions([evict('a', 'p1'), annotate('a', 'Drained'), lock('b', 'Cordoned')], w.deps);
    assert.deepEqual(outcomes(second), ['annotateNode done'], "b goes on; nothing of a's is started or reported");
    assert.equal(
      w.log.filter((l) => l === 'start evict p1').length,
      1,
      'no second eviction while the first is in flight',
    );
    assert.ok(!w.log.includes('start a Drained'));

    await w.inFlight.idle();
    assert.ok(w.log.includes('end evict p1'));
    assert.equal(w.inFlight.has('a'), false, 'the node is free once its evictions answered');
    assert.deepEqual(w.settled, [0], 'and a round is asked for at once');
    const third = await executeActions([annotate('a', 'Drained'), surge], w.deps);
    assert.equal(third[0]?.outcome.kind, 'done');
  });

  it('runs no barrier after a step that waits for a node still draining (the protocol orders them)', async () => {
    const w = world(200);
    await executeActions([annotate('a', 'Draining'), evict('a', 'p1')], w.deps);
    const results = await executeActions([annotate('a', 'Pending'), annotate('b', 'Pending'), surge], w.deps);
    assert.deepEqual(outcomes(results), ['annotateNode done']);
    assert.ok(!w.log.includes('start surge'), 'the surge waits until the lock before it can be written');
    await w.inFlight.idle();
  });

  it("runs a barrier without waiting for this round's own drains, after every other step before it", async () => {
    const w = world(200);
    const results = await executeActions(
      [annotate('a', 'Draining'), evict('a', 'p1'), annotate('b', 'Pending'), surge],
      w.deps,
    );
    assert.deepEqual(outcomes(results), ['annotateNode done', 'annotateNode done', 'surge done']);
    // The lock before the surge is written first (the protocol's order); the eviction, a drain
    // that outlives the round, is still under way when the surge goes.
    assert.ok(w.log.indexOf('end b Pending') < w.log.indexOf('start surge'), w.log.join(', '));
    assert.ok(w.log.includes('end surge') && !w.log.includes('end evict p1'), w.log.join(', '));
    assert.ok(w.inFlight.has('a'));
    await w.inFlight.idle();
  });

  it('waits for evictions that are not the last step of their node', async () => {
    const w = world(30);
    const results = await executeActions([evict('a', 'p1'), annotate('a', 'Drained'), surge], w.deps);
    assert.deepEqual(outcomes(results), ['evict done', 'annotateNode done', 'surge done']);
    assert.ok(w.log.indexOf('end evict p1') < w.log.indexOf('start a Drained'));
    assert.equal(w.inFlight.has('a'), false);
  });

  it("asks for the next round after a refused eviction's retry delay, not at once", async () => {
    const w = world(10, true);
    await executeActions([annotate('a', 'Draining'), evict('a', 'p1')], w.deps);
    await w.inFlight.idle();
    assert.deepEqual(w.settled, [5000]);
  });

  it('runs a barrier after a lane skipped only for evictions already under way', async () => {
    const w = world(200);
    await executeActions([annotate('a', 'Draining'), evict('a', 'p1')], w.deps);
    const results = await executeActions([evict('a', 'p1'), annotate('b', 'Pending'), surge], w.deps);
    assert.deepEqual(outcomes(results), ['annotateNode done', 'surge done']);
    assert.ok(w.log.includes('end surge') && !w.log.includes('end evict p1'), 'the surge did not wait for the drain');
    await w.inFlight.idle();
  });

  it("ends the round without a node's last-step clean-up; a later round starts nothing on that node until it answered", async () => {
    const w = world(150);
    const first = await executeActions(
      [annotate('a', 'Verifying'), deleteRebootPod('a'), annotate('b', 'Pending'), surge],
      w.deps,
    );
    assert.deepEqual(
      outcomes(first),
      ['annotateNode done', 'annotateNode done', 'surge done'],
      'the round returned without waiting for the deletion',
    );
    assert.ok(w.log.includes('start delete reboot-a') && !w.log.includes('end delete reboot-a'));
    assert.ok(w.inFlight.has('a'));
    // The deletion planned again (the pod still observed) repeats the work: skipped, and a barrier after it runs.
    const second = await executeActions([deleteRebootPod('a'), surge], w.deps);
    assert.deepEqual(outcomes(second), ['surge done']);
    assert.equal(w.log.filter((l) => l === 'start delete reboot-a').length, 1);
    await w.inFlight.idle();
    assert.ok(w.log.includes('end delete reboot-a'));
    assert.equal(w.inFlight.has('a'), false);
  });

  it('waits for a clean-up that is not the last step of its node', async () => {
    const w = world(30);
    const results = await executeActions([deleteRebootPod('a'), annotate('a', 'Verifying'), surge], w.deps);
    assert.deepEqual(outcomes(results), ['deleteRebootPod done', 'annotateNode done', 'surge done']);
    assert.equal(w.inFlight.has('a'), false);
  });
});

describe('execute: a lane that claims nothing left running whole past its round (InFlight)', () => {
  it('returns at once; the lane runs its steps in order, its node taken until the last answered; its results and writes come when it settles', async () => {
    const w = world(150);
    const deps = { ...w.deps, cachedNode: cachedIn({ a: 'Cordoned' }) };
    const first = await executeActions([annotate('a', 'Draining'), evict('a', 'p1'), annotate('a', 'Drained')], deps);
    assert.deepEqual(first, [], 'nothing of the lane is reported by the round');
    assert.ok(w.inFlight.has('a'));
    assert.ok(!w.log.includes('end evict p1'), 'the round did not wait for the eviction');

    const second = await executeActions([annotate('a', 'Drained')], deps);
    assert.deepEqual(second, [], 'a round while it runs starts nothing on its node');

    await w.inFlight.idle();
    assert.deepEqual(
      w.log.filter((l) => l.startsWith('start')),
      ['start a Draining', 'start evict p1', 'start a Drained'],
      'its steps in plan order, each once',
    );
    assert.ok(w.log.indexOf('end evict p1') < w.log.indexOf('start a Drained'));
    assert.equal(w.inFlight.has('a'), false);
    assert.deepEqual(w.settled, [0]);
    assert.deepEqual(
      w.writes[0]?.map((x) => `${x.name}@${x.resourceVersion}`),
      ['a@1', 'a@2'],
      'the two patches, for the next round to wait for',
    );
    assert.deepEqual(outcomes(w.inFlight.takeResults()), ['annotateNode done', 'evict done', 'annotateNode done']);
    assert.deepEqual(w.inFlight.takeResults(), [], 'each result is reported once');
  });

  it('runs a lane that takes down a node the caches show up in the round, and only its drain past it', async () => {
    const w = world(150);
    for (const cached of [{ a: 'Pending' }, {}] as Record<string, string>[]) {
      const results = await executeActions([annotate('a', 'Draining'), evict('a', 'p1')], {
        ...w.deps,
        cachedNode: cachedIn(cached),
      });
      assert.deepEqual(
        outcomes(results),
        ['annotateNode done'],
        'the phase that takes the node down is written before the round ends',
      );
      assert.ok(w.inFlight.has('a'), 'its evictions outlive the round');
      await w.inFlight.idle();
    }
  });

  it('runs a lane that takes a node (its lock) in the round', async () => {
    const w = world(30);
    // Pending takes nothing down: only the lock keeps the lane in its round.
    const results = await executeActions([lock('a', 'Pending')], w.deps);
    assert.deepEqual(outcomes(results), ['annotateNode done']);
    assert.equal(w.inFlight.has('a'), false);
  });

  it('runs a lane with a barrier after it in the round', async () => {
    const w = world(30);
    // Records that take nothing down: only the barrier after them keeps them in their round.
    const results = await executeActions([annotate('a', 'released'), annotate('b', 'released'), surge], w.deps);
    assert.deepEqual(outcomes(results), ['annotateNode done', 'annotateNode done', 'surge done']);
    assert.deepEqual(w.inFlight.nodes(), []);
  });

  it('starts nothing on a node whose work finished after the round observed the cluster', async () => {
    const w = world(30);
    const results = await executeActions([annotate('a', 'Drained'), lock('b', 'Pending')], {
      ...w.deps,
      takenWhenObserved: ['a'],
    });
    assert.deepEqual(outcomes(results), ['annotateNode done']);
    assert.ok(!w.log.includes('start a Drained'), 'planned on caches that did not show that work yet');
  });

  it('gives a node back only once the caches show what its work wrote', async () => {
    let show!: () => void;
    const shown = new Promise<void>((r) => (show = r));
    const asked: (readonly Written[])[] = [];
    const settled: number[] = [];
    const inFlight = new InFlight(
      (s) => settled.push(s.written.length),
      (written) => {
        asked.push(written);
        return shown;
      },
    );
    const write: Written = { collection: 'nodes', name: 'a', resourceVersion: '7' };
    inFlight.add(['a'], Promise.resolve({ retryInMs: 0, written: [write] }));
    await sleep(10);
    assert.deepEqual(asked, [[write]], 'its writes are looked for once it has finished');
    assert.ok(inFlight.has('a'), 'and until the caches show them the node stays taken');
    assert.deepEqual(settled, []);
    show();
    await inFlight.idle();
    await sleep(0);
    assert.equal(inFlight.has('a'), false);
    assert.deepEqual(settled, [1]);
  });
});
