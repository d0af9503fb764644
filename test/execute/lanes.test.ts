import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CloudProvider } from '../../src/cloud/provider.js';
import { executeActions, type EventRecorder, type KubeApis } from '../../src/execute/index.js';
import { LANES_AT_ONCE } from '../../src/execute/execute.js';
import { laneOf, laneSteps, segments } from '../../src/execute/lanes.js';
import type { Action } from '../../src/plan/types.js';
import { annotate, evict, recordingDeps, spec, surge as surgeOf } from './plan-actions.js';

const surge = surgeOf(2);

/** A fake API server (unit test of the executor's ordering): each call takes `ms` and is logged. */
function recorder(ms: number, fail: (node: string, phase: string) => boolean = () => false) {
  const log: string[] = [];
  let open = 0;
  let widest = 0;
  const call = async (what: string, failing: boolean): Promise<void> => {
    log.push(`start ${what}`);
    open++;
    widest = Math.max(widest, open);
    await sleep(ms);
    open--;
    log.push(`end ${what}`);
    if (failing) throw Object.assign(new Error('server error'), { code: 500 });
  };
  const kube = {
    core: {
      patchNode: ({ name, body }: { name: string; body: { metadata: { annotations: Record<string, string> } } }) => {
        const phase = body.metadata.annotations['drydock.dev/phase'] ?? '?';
        return call(`${name} ${phase}`, fail(name, phase));
      },
      createNamespacedPodEviction: ({ name }: { name: string }) => call(`evict ${name}`, false),
      deleteNode: ({ name }: { name: string }) => call(`delete ${name}`, false),
    },
  } as unknown as KubeApis;
  const cloud = { addCapacity: () => call('surge', false) } as unknown as CloudProvider;
  // Events take as long as a call, so a lane that waited for them would show it.
  const written: Promise<void>[] = [];
  const events: EventRecorder = {
    record: (e) => {
      const w = call(`event ${e.reason} ${e.involved.name}`, false);
      written.push(w);
      return w;
    },
  };
  const deps = recordingDeps(kube, cloud);
  /** Resolves once every Event recorded so far has been written. */
  const eventsWritten = async (): Promise<void> => void (await Promise.all(written));
  return { log, deps, events, eventsWritten, widest: () => widest };
}

describe('execute: lanes (one per node, side by side; barriers alone)', () => {
  it('cuts the plan at node-less actions and groups the rest by the node whose step it is', () => {
    const plan: Action[] = [
      annotate('a', 'Pending'),
      annotate('b', 'Pending'),
      annotate('a', 'Cordoned'),
      surge,
      annotate('new', 'Done', 'a'),
      { kind: 'copyLabels', spec, reason: 'test', from: 'b', to: 'new2', labels: { pool: 'x' } },
      { kind: 'cordon', spec, reason: 'test', node: 'a' },
    ];
    assert.equal(laneOf(plan[4] as Action), 'a', "a replacement's Done mark keeps the replaced node's order");
    assert.equal(laneOf(plan[5] as Action), 'b', "labels copied onto a replacement keep the replaced node's order");
    const cut = segments(plan).map((s) => ('barrier' in s ? s.barrier : Object.fromEntries(s.lanes)));
    assert.deepEqual(cut, [{ a: [0, 2], b: [1] }, 3, { a: [4, 6], b: [5] }]);
  });

  it("runs any node's step in the lane it names (forNode); one that touches no node stays a barrier", () => {
    const joined: Action[] = [
      annotate('a', 'released'),
      { kind: 'cordon', spec, reason: 'test', node: 'b', forNode: 'a' },
      { ...surge, forNode: 'a' },
    ];
    assert.equal(laneOf(joined[1] as Action), 'a');
    assert.equal(laneOf(joined[2] as Action), undefined);
    const cut = segments(joined).map((s) => ('barrier' in s ? s.barrier : Object.fromEntries(s.lanes)));
    assert.deepEqual(cut, [{ a: [0, 1] }, 2]);
  });

  it("runs different nodes' steps at once, each node's in plan order, and a barrier after everything before it", async () => {
    const r = recorder(30);
    const plan = [
      annotate('a', 'Pending'),
      annotate('b', 'Pending'),
      annotate('c', 'Pending'),
      annotate('a', 'Cordoned'),
      surge,
      annotate('b', 'Draining'),
    ];
    const results = await executeActions(plan, r.deps);
    assert.deepEqual(
      results.map((x) => x.outcome.kind),
      plan.map(() => 'done'),
    );
    assert.deepEqual(
      results.map((x) => x.action),
      plan,
      'results in plan order',
    );
    const at = (line: string): number => {
      const i = r.log.indexOf(line);
      assert.ok(i >= 0, `${line} in ${r.log.join(', ')}`);
      return i;
    };
    assert.ok(at('start b Pending') < at('end a Pending'), 'b does not wait for a');
    assert.ok(at('start c Pending') < at('end a Pending'), 'c does not wait for a');
    assert.ok(at('end a Pending') < at('start a Cordoned'), "a's steps in order");
    for (const before of ['a Cordoned', 'b Pending', 'c Pending'])
      assert.ok(at(`end ${before}`) < at('start surge'), `the surge waits for ${before}`);
    assert.ok(at('end surge') < at('start b Draining'), 'what follows the surge waits for it');
    assert.equal(r.widest(), 3);
  });

  it(`runs at most ${LANES_AT_ONCE} nodes at once`, async () => {
    const r = recorder(5);
    const plan = Array.from({ length: LANES_AT_ONCE * 2 + 3 }, (_, i) => annotate(`n${i}`, 'Pending'));
    await executeActions(plan, r.deps);
    assert.equal(r.widest(), LANES_AT_ONCE);
  });

  it("holds the replaced node's cordon when its replacement's Done mark failed", async () => {
    const r = recorder(5, (node) => node === 'new');
    const plan: Action[] = [annotate('new', 'Done', 'old'), annotate('old', 'Cordoned'), annotate('other', 'Cordoned')];
    const results = await executeActions(plan, r.deps);
    assert.equal(results[0]?.outcome.kind, 'transient');
    assert.deepEqual(results[1]?.outcome, {
      kind: 'transient',
      code: 'Deferred',
      reason: 'annotateNode old: deferred, an earlier step on node old did not succeed',
    });
    assert.equal(results[2]?.outcome.kind, 'done', 'another node goes on');
    assert.ok(!r.log.includes('start old Cordoned'));
  });

  it('starts nothing more once told to stop; what started finishes', async () => {
    const r = recorder(20);
    let calls = 0;
    const plan = [annotate('a', 'Pending'), annotate('a', 'Cordoned'), annotate('b', 'Pending'), surge];
    // The first two checks (a's and b's first steps) pass; every later one says stop.
    const results = await executeActions(plan, { ...r.deps, shouldContinue: () => ++calls <= 2 });
    assert.deepEqual(
      results.map((x) => `${x.action.kind} ${x.outcome.kind}`),
      ['annotateNode done', 'annotateNode done'],
    );
    assert.ok(!r.log.includes('start surge'));
  });

  it("groups a run of a node's evictions into one step (its drain), and nothing else", () => {
    const plan: Action[] = [
      annotate('a', 'Draining'),
      evict('a', 'p1'),
      evict('a', 'p2'),
      { kind: 'deletePod', spec, reason: 'test', node: 'a', namespace: 'ns', pod: 'p3' },
      { kind: 'deleteNode', spec, reason: 'test', node: 'a' },
      evict('a', 'p4'),
    ];
    assert.deepEqual(laneSteps(plan, [0, 1, 2, 3, 4, 5]), [[0], [1, 2, 3], [4], [5]]);
  });

  it('joins an action planned beside the step before it to that step, but never to a drain', () => {
    const job = (beside: boolean): Action => ({
      kind: 'deleteJob',
      spec,
      reason: 'test',
      node: 'a',
      namespace: 'ns',
      name: 'j',
      ...(beside ? { beside: true as const } : {}),
    });
    const plan: Action[] = [annotate('a', 'Updating'), job(true), job(false), evict('a', 'p1'), job(true)];
    assert.deepEqual(laneSteps(plan, [0, 1, 2, 3, 4]), [[0, 1], [2], [3], [4]]);
  });

  it("sends a node's evictions one after another (pods of one PDB would make the API server retry), after its Draining mark and before its next step", async () => {
    const r = recorder(30);
    const plan: Action[] = [
      annotate('a', 'Draining'),
      evict('a', 'p1'),
      evict('a', 'p2'),
      { kind: 'deleteNode', spec, reason: 'test', node: 'a' },
    ];
    const results = await executeActions(plan, r.deps);
    assert.deepEqual(
      results.map((x) => x.outcome.kind),
      plan.map(() => 'done'),
    );
    assert.deepEqual(r.log, [
      'start a Draining',
      'end a Draining',
      'start evict p1',
      'end evict p1',
      'start evict p2',
      'end evict p2',
      'start delete a',
      'end delete a',
    ]);
  });

  it('writes Events beside the lane, not between its steps, and returns without waiting for them', async () => {
    const r = recorder(30);
    const plan: Action[] = [annotate('a', 'Draining'), evict('a', 'p1'), annotate('a', 'Verifying')];
    await executeActions(plan, { ...r.deps, events: r.events });
    const at = (line: string): number => r.log.indexOf(line);
    assert.ok(at('start event DrydockPhase a') >= 0, `an Event for the phase in ${r.log.join(', ')}`);
    assert.ok(
      at('start evict p1') < at('end event DrydockPhase a'),
      "the eviction does not wait for the phase's Event",
    );
    const ends = (): number => r.log.filter((l) => l.startsWith('end event')).length;
    assert.ok(ends() < 3, `the last step's Event still being written when the run returned: ${r.log.join(', ')}`);
    await r.eventsWritten();
    assert.equal(ends(), 3, 'every Event written in the end');
  });
});
