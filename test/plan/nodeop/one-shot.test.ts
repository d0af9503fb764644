/**
 * A one-shot NodeOp (followNewNodes false, the Kairos operator's NodeOp) as tables: it runs on
 * the nodes it selected when its revision was first seen, recorded on those nodes, and never on a
 * node that came later, whatever restarts and replacements happen between.
 */
import assert from 'node:assert/strict';
import { plan } from '../../../src/plan/index.js';
import type { Action, Plan } from '../../../src/plan/types.js';
import type { ObservedNode } from '../../../src/observe/types.js';
import { ANNOTATIONS, nodeOpRecordKey, nodeOpSelectionKey } from '../../../src/protocol/keys.js';
import type { NodeOp } from '../../../src/spec/model.js';
import { at, config, desired, iso, node, observed } from '../fixtures.js';
import { nodeOp } from './fixtures.js';

const KEY = nodeOpSelectionKey('hello');
const DONE = { [nodeOpRecordKey('hello')]: 'r1' };
/** When the tests' NodeOp was first seen: ten minutes before now. */
const SEEN = iso(-600);

function n(name: string, o: { createdAt?: number; annotations?: Record<string, string> } = {}): ObservedNode {
  return {
    ...node(name, `sim://g/${name}`, { annotations: o.annotations ?? {} }),
    createdAt: iso(o.createdAt ?? -3600),
  };
}

function run(op: NodeOp, nodes: ObservedNode[]): Plan {
  const d = desired({ config: config(10), nodeOps: [op] });
  return plan(d, observed({ nodes }), at(0), { jobNamespace: 'drydock-system' });
}

const once = (o: Partial<NodeOp> = {}): NodeOp => nodeOp('hello', { concurrency: 0, followNewNodes: false, ...o });
const annotations = (p: Plan): Extract<Action, { kind: 'annotateNode' }>[] =>
  p.actions.filter((a): a is Extract<Action, { kind: 'annotateNode' }> => a.kind === 'annotateNode');
const started = (p: Plan): string[] =>
  annotations(p)
    .filter((a) => a.annotations[ANNOTATIONS.phase] === 'Pending')
    .map((a) => a.node);
const marks = (p: Plan): Record<string, string | null | undefined> =>
  Object.fromEntries(annotations(p).flatMap((a) => (KEY in a.annotations ? [[a.node, a.annotations[KEY]]] : [])));
const status = (p: Plan) => p.specs.find((s) => s.spec.kind === 'NodeOp');

describe('NodeOp planner: one-shot (followNewNodes false)', () => {
  it('first seen: starts on every selected node and records each as selected, with the time', () => {
    const p = run(once(), [n('worker-0'), n('worker-1')]);
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
    assert.deepEqual(marks(p), { 'worker-0': `r1 ${iso(0)}`, 'worker-1': `r1 ${iso(0)}` });
  });

  it('a finished NodeOp stays Complete when a new node joins: the node is recorded as later, nothing starts', () => {
    const nodes = [
      n('worker-0', { annotations: { ...DONE, [KEY]: `r1 ${SEEN}` } }),
      n('worker-1', { annotations: { ...DONE, [KEY]: `r1 ${SEEN}` } }),
      n('worker-2', { createdAt: -60 }),
    ];
    const p = run(once(), nodes);
    assert.deepEqual(started(p), []);
    assert.equal(status(p)?.phase, 'Complete');
    assert.deepEqual(status(p)?.progress, { done: 2, total: 2 });
    assert.deepEqual(marks(p), { 'worker-2': `r1 ${SEEN} later` });
    assert.ok(p.notes.some((x) => /worker-2 came later and does not run it/.test(x.text)));
    // What drydock.dev NodeOps always did, and still do by default: the new node runs it.
    assert.deepEqual(started(run(once({ followNewNodes: true }), nodes)), ['worker-2']);
  });

  it('the time survives every node it ran on being replaced: the later nodes carry it', () => {
    const replacements = [
      n('worker-5', { createdAt: -120, annotations: { [KEY]: `r1 ${SEEN} later` } }),
      n('worker-6', { createdAt: -30 }),
    ];
    const p = run(once(), replacements);
    assert.deepEqual(started(p), []);
    assert.deepEqual(marks(p), { 'worker-6': `r1 ${SEEN} later` });
    assert.equal(status(p)?.phase, 'Waiting');
    assert.match(status(p)?.waitingFor ?? '', /none of the nodes it selected when first seen .* is left/);
  });

  it('drydock stopped between two marks: an unmarked node that existed then is selected, a newer one is not', () => {
    const nodes = [
      n('worker-0', { annotations: { [KEY]: `r1 ${SEEN}` } }),
      n('worker-1', { createdAt: -3600 }),
      n('worker-2', { createdAt: -300 }),
    ];
    const p = run(once(), nodes);
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
    assert.deepEqual(marks(p), { 'worker-1': `r1 ${SEEN}`, 'worker-2': `r1 ${SEEN} later` });
  });

  it('a node this revision holds runs to its end even where it was recorded as later', () => {
    const held = {
      [KEY]: `r1 ${SEEN} later`,
      [ANNOTATIONS.operation]: 'NodeOp/hello@r1',
      [ANNOTATIONS.phase]: 'Updating',
      [ANNOTATIONS.phaseSince]: iso(-10),
    };
    const p = run(once(), [n('worker-0', { createdAt: -60, annotations: held })]);
    assert.deepEqual(status(p)?.progress, { done: 0, total: 1 });
    assert.deepEqual(marks(p), { 'worker-0': `r1 ${SEEN}` });
  });

  it('a new revision is first seen anew: it selects the nodes there are now', () => {
    const nodes = [
      n('worker-0', { annotations: { ...DONE, [KEY]: `r1 ${SEEN}` } }),
      n('worker-1', { createdAt: -60, annotations: { [KEY]: `r1 ${SEEN} later` } }),
    ];
    const p = run(once({ revision: 'r2' }), nodes);
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
    assert.deepEqual(marks(p), { 'worker-0': `r2 ${iso(0)}`, 'worker-1': `r2 ${iso(0)}` });
  });

  it('an unreadable mark (edited with kubectl) counts as none', () => {
    const p = run(once(), [n('worker-0', { annotations: { [KEY]: 'r1 yesterday' } })]);
    assert.deepEqual(started(p), ['worker-0']);
    assert.deepEqual(marks(p), { 'worker-0': `r1 ${iso(0)}` });
  });
});
