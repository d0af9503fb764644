/**
 * Cases that pin what the table tests left loose (the budget is checked again when a node is
 * cordoned, the service wakes at the earliest wait), and properties of one planning round over
 * generated clusters and specs (fast-check): whatever the world, the plan is the same for the
 * same input, says why for every action, never takes more nodes down than the budget has room
 * for, starts no more nodes than the budget and concurrency allow, never touches a node another
 * operation holds, and wakes at the earliest wait still ahead.
 */
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { plan, type Plan } from '../../src/plan/index.js';
import type { ObservedNode } from '../../src/observe/types.js';
import type { Instance } from '../../src/cloud/provider.js';
import {
  at,
  cloudGroup,
  config,
  deepFreeze,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  providerID,
  scalingGroup,
} from './fixtures.js';
import { LOCK, V1, V2 } from './helpers.js';

const sg = scalingGroup('workers', 'workers');
const FOREIGN = 'NodeOp/patch@r1';
const FOREIGN_SPEC = 'NodeOp/patch';

const lockedAs = (phase: string, since: number, extra: Record<string, string> = {}) => ({
  [ANNOTATIONS.operation]: LOCK,
  [ANNOTATIONS.phase]: phase,
  [ANNOTATIONS.phaseSince]: iso(since),
  ...extra,
});

/** Nodes a round takes down: annotated Cordoned this round. */
const cordoned = (p: Plan): string[] =>
  p.actions.flatMap((a) =>
    a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Cordoned' ? [a.node] : [],
  );
const started = (p: Plan): string[] =>
  p.actions.flatMap((a) =>
    a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending' ? [a.node] : [],
  );

describe('plan: the budget is checked again when a node is cordoned', () => {
  it('a started node whose replacement is Ready waits when another operation took the budget since', () => {
    // worker-0 was started when the budget had room; since then a NodeOp drains other-0.
    const nodes = [
      node('worker-0', providerID('workers', 'i-0'), {
        annotations: lockedAs('Pending', 0, { [ANNOTATIONS.replacedBy]: 'i-9' }),
      }),
      node('worker-9', providerID('workers', 'i-9'), { readySince: 60 }),
      node('other-0', 'sim://elsewhere/o-0', {
        unschedulable: true,
        annotations: { [ANNOTATIONS.operation]: FOREIGN, [ANNOTATIONS.phase]: 'Draining' },
      }),
    ];
    const o = observed({
      nodes,
      cloudGroups: [cloudGroup('workers', V2, [instance('workers', 'i-0', V1), instance('workers', 'i-9', V2, 5)], 2)],
    });
    const d = desired({ config: config(1), scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] });
    const p = plan(d, o, at(300));
    assert.deepEqual(cordoned(p), []);
    assert.ok(!p.actions.some((a) => a.kind === 'cordon'), 'no cordon while the budget is taken');
    assert.deepEqual(
      p.waits.filter((w) => w.node === 'worker-0').map((w) => w.code),
      ['budget'],
    );
  });

  it('two started nodes with Ready replacements and a budget lowered to one: only the first is cordoned', () => {
    const nodes = [
      node('worker-0', providerID('workers', 'i-0'), {
        annotations: lockedAs('Pending', 0, { [ANNOTATIONS.replacedBy]: 'i-8' }),
      }),
      node('worker-1', providerID('workers', 'i-1'), {
        annotations: lockedAs('Pending', 0, { [ANNOTATIONS.replacedBy]: 'i-9' }),
      }),
      node('worker-8', providerID('workers', 'i-8'), { readySince: 60 }),
      node('worker-9', providerID('workers', 'i-9'), { readySince: 60 }),
    ];
    const instances = [
      instance('workers', 'i-0', V1),
      instance('workers', 'i-1', V1),
      instance('workers', 'i-8', V2, 5),
      instance('workers', 'i-9', V2, 5),
    ];
    const o = observed({ nodes, cloudGroups: [cloudGroup('workers', V2, instances, 4)] });
    const d = desired({
      config: config(1),
      scalingGroups: [sg],
      nodeImages: [nodeImage('workers', V2, { maxSurge: 2 })],
    });
    const p = plan(d, o, at(300));
    assert.deepEqual(cordoned(p), ['worker-0']);
    assert.deepEqual(
      p.waits.filter((w) => w.node === 'worker-1').map((w) => w.code),
      ['budget'],
    );
  });
});

describe('plan: wakeAt is the earliest wait that ends by itself', () => {
  it('two replacements booting with different deadlines: the service wakes at the first', () => {
    const nodes = [
      node('worker-0', providerID('workers', 'i-0'), {
        annotations: lockedAs('Pending', 0, { [ANNOTATIONS.replacedBy]: 'i-8' }),
      }),
      node('worker-1', providerID('workers', 'i-1'), {
        annotations: lockedAs('Pending', 0, { [ANNOTATIONS.replacedBy]: 'i-9' }),
      }),
    ];
    // i-8 was created at t=100, i-9 at t=5: join deadlines 700 and 605 (joinTimeout 600s).
    const instances = [
      instance('workers', 'i-0', V1),
      instance('workers', 'i-1', V1),
      instance('workers', 'i-8', V2, 100),
      instance('workers', 'i-9', V2, 5),
    ];
    const o = observed({ nodes, cloudGroups: [cloudGroup('workers', V2, instances, 4)] });
    const d = desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, { maxSurge: 2 })] });
    const p = plan(d, o, at(300));
    assert.deepEqual(
      p.waits.filter((w) => w.code === 'join').map((w) => w.until),
      [iso(700), iso(605)],
    );
    assert.equal(p.wakeAt, iso(605));
  });
});

// ---- properties over generated worlds ----

type NodeState = 'idle' | 'pending' | 'pendingReady' | 'cordoned' | 'draining' | 'failed' | 'foreign';

interface GenWorld {
  readonly states: readonly NodeState[];
  readonly upToDate: readonly boolean[];
  readonly budget: number;
  readonly maxSurge: number;
  readonly concurrency: number;
  readonly now: number;
}

const worldArb: fc.Arbitrary<GenWorld> = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc.record({
    states: fc.array(
      fc.constantFrom<NodeState>(
        'idle',
        'idle',
        'pending',
        'pendingReady',
        'cordoned',
        'draining',
        'failed',
        'foreign',
      ),
      { minLength: n, maxLength: n },
    ),
    upToDate: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    budget: fc.integer({ min: 0, max: 4 }),
    maxSurge: fc.integer({ min: 1, max: 3 }),
    concurrency: fc.integer({ min: 0, max: 3 }),
    now: fc.integer({ min: 60, max: 2000 }),
  }),
);

/** The generated world as planner input: node i on instance i-i; started nodes' replacements are r-i. */
function build(w: GenWorld) {
  const instances: Instance[] = [];
  const nodes: ObservedNode[] = [];
  w.states.forEach((state, i) => {
    const name = `worker-${i}`;
    const pid = providerID('workers', `i-${i}`);
    const image = w.upToDate[i] === true && (state === 'idle' || state === 'foreign') ? V2 : V1;
    instances.push(instance('workers', `i-${i}`, image));
    const replacement = `r-${i}`;
    const ours = (phase: string, extra: Record<string, string> = {}) =>
      lockedAs(phase, 0, { [ANNOTATIONS.replacedBy]: replacement, ...extra });
    let annotations: Record<string, string> = {};
    let unschedulable = false;
    if (state === 'pending' || state === 'pendingReady') annotations = ours('Pending');
    if (state === 'cordoned' || state === 'draining') {
      annotations = ours(state === 'cordoned' ? 'Cordoned' : 'Draining', { [ANNOTATIONS.cordoned]: 'true' });
      unschedulable = true;
    }
    if (state === 'failed') annotations = ours('Failed', { [ANNOTATIONS.reason]: 'generated failure' });
    if (state === 'foreign') {
      annotations = { [ANNOTATIONS.operation]: FOREIGN, [ANNOTATIONS.phase]: 'Draining' };
      unschedulable = true;
    }
    nodes.push(node(name, pid, { annotations, unschedulable }));
    if (state !== 'idle' && state !== 'foreign') {
      // Created at different times, so their join deadlines differ.
      instances.push(instance('workers', replacement, V2, 5 + 40 * i));
      if (state !== 'pending') nodes.push(node(`new-${i}`, providerID('workers', replacement), { readySince: 30 }));
    }
  });
  const o = observed({ nodes, cloudGroups: [cloudGroup('workers', V2, instances, instances.length)] });
  const d = desired({
    config: config(w.budget),
    scalingGroups: [sg],
    nodeImages: [nodeImage('workers', V2, { maxSurge: w.maxSurge, concurrency: w.concurrency })],
  });
  return { d, o, now: at(w.now) };
}

/**
 * Nodes started on a slot handed over: locked in the lane of a node whose instance the round
 * removes, after that removal; each such node hands over one slot at most.
 */
function handedOver(p: Plan): string[] {
  const removedAt = new Map<string, number>();
  const out: string[] = [];
  p.actions.forEach((a, i) => {
    if (a.kind === 'removeInstance' && a.node !== undefined) removedAt.set(a.node, i);
    if (a.kind !== 'annotateNode' || a.annotations[ANNOTATIONS.phase] !== 'Pending' || a.forNode === undefined) return;
    const at = removedAt.get(a.forNode);
    assert.ok(at !== undefined && at < i, `${a.node} locked in ${a.forNode}'s lane, which no removal before it frees`);
    out.push(a.forNode);
  });
  assert.equal(new Set(out).size, out.length, `one slot handed to two nodes: ${out.join(', ')}`);
  return out;
}

/** Down as the cluster shows it, whatever drydock's annotations say: cordoned or NotReady. */
const isDown = (n: ObservedNode): boolean => n.unschedulable || !n.ready;

/**
 * The nodes a round takes down as the cluster would see it once applied: cordoned, drained
 * (a pod evicted or deleted), rebooted, or removed, and not down before.
 */
function takenDown(p: Plan, o: { readonly nodes: readonly ObservedNode[] }): string[] {
  const down = new Set(o.nodes.filter(isDown).map((n) => n.name));
  const out = new Set<string>();
  for (const a of p.actions) {
    const takes = ['cordon', 'evict', 'deletePod', 'createRebootPod', 'removeInstance', 'deleteNode'].includes(a.kind);
    const node = 'node' in a ? a.node : undefined;
    if (takes && node !== undefined && !down.has(node)) out.add(node);
  }
  return [...out].sort();
}

describe('plan: properties of one round over generated clusters and specs', () => {
  const runs = { numRuns: Number(process.env['PLAN_PROPERTY_RUNS'] ?? 300) };

  it('is a pure function: the same input gives a deep-equal plan, and the input is not changed', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { d, o, now } = build(w);
        const first = plan(deepFreeze(d), deepFreeze(o), now);
        assert.deepEqual(plan(d, o, now), first);
      }),
      runs,
    );
  });

  it('every action says why, and belongs to a spec that exists', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { d, o, now } = build(w);
        for (const a of plan(d, o, now).actions) {
          assert.ok(a.reason.trim() !== '', `${a.kind} without a reason`);
          // The one other spec that may act: the foreign lock's own NodeOp, removed from Git, releasing its node.
          const own = a.spec.kind === 'NodeImage' && a.spec.name === 'workers';
          const releasing = `${a.spec.kind}/${a.spec.name}` === FOREIGN_SPEC && a.kind === 'annotateNode';
          assert.ok(own || releasing, `${a.kind} for ${a.spec.kind}/${a.spec.name}`);
        }
      }),
      runs,
    );
  });

  it('never takes more nodes down than the budget has room for', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { d, o, now } = build(w);
        const down = o.nodes.filter(isDown).length;
        const p = plan(d, o, now);
        const taken = takenDown(p, o);
        assert.ok(
          taken.length <= Math.max(0, w.budget - down),
          `takes down ${taken.join(', ')} with ${down} down, budget ${w.budget}`,
        );
      }),
      runs,
    );
  });

  it('starts no more nodes than the budget and the concurrency allow, and only idle outdated ones', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { d, o, now } = build(w);
        const held = o.nodes.filter(
          (n) => n.annotations[ANNOTATIONS.operation] !== undefined && n.annotations[ANNOTATIONS.phase] !== 'Failed',
        ).length;
        const ours = w.states.filter(
          (s) => s === 'pending' || s === 'pendingReady' || s === 'cordoned' || s === 'draining',
        ).length;
        const p = plan(d, o, now);
        const s = started(p);
        // A node started on the slot of one this round removes runs after that removal, in its lane.
        const handed = handedOver(p);
        const fresh = s.length - handed.length;
        assert.ok(fresh <= Math.max(0, w.budget - held), `started ${fresh} with ${held} held, budget ${w.budget}`);
        if (w.concurrency > 0)
          assert.ok(
            fresh + ours <= Math.max(w.concurrency, ours),
            `started ${fresh} beside ${ours}, concurrency ${w.concurrency}`,
          );
        if (handed.length > 0) {
          // One for one, and never to keep more in flight than the limits allow now.
          assert.ok(held <= w.budget, `handed ${handed.length} slot(s) over with ${held} held, budget ${w.budget}`);
          if (w.concurrency > 0)
            assert.ok(
              ours <= w.concurrency,
              `handed ${handed.length} over beside ${ours}, concurrency ${w.concurrency}`,
            );
        }
        for (const name of s) {
          const i = Number(name.slice('worker-'.length));
          assert.equal(w.states[i], 'idle', `${name} started from ${w.states[i]}`);
          assert.equal(w.upToDate[i], false, `${name} already runs ${V2}`);
        }
      }),
      runs,
    );
  });

  it('never acts on a node another operation holds', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { d, o, now } = build(w);
        const foreign = new Set(
          o.nodes.filter((n) => n.annotations[ANNOTATIONS.operation] === FOREIGN).map((n) => n.name),
        );
        for (const a of plan(d, o, now).actions) {
          const target = 'node' in a ? a.node : a.kind === 'copyLabels' ? a.to : undefined;
          // The lock's owner may release its own node (a NodeOp removed from Git); no one else may touch it.
          if (`${a.spec.kind}/${a.spec.name}` === FOREIGN_SPEC) continue;
          assert.ok(target === undefined || !foreign.has(target), `${a.kind} on ${String(target)}, held by ${FOREIGN}`);
        }
      }),
      runs,
    );
  });

  it('wakes at the earliest wait still ahead, and only then', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { d, o, now } = build(w);
        const p = plan(d, o, now);
        const ahead = p.waits.flatMap((x) =>
          x.until !== undefined && Date.parse(x.until) > now.getTime() ? [Date.parse(x.until)] : [],
        );
        assert.equal(p.wakeAt, ahead.length === 0 ? undefined : new Date(Math.min(...ahead)).toISOString());
      }),
      runs,
    );
  });
});
