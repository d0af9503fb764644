/**
 * While the repository holds specs in the Kairos operator's format, drydock labels Kairos nodes
 * kairos.io/managed=true as the operator does (their osImage names Kairos), so the operator's own
 * examples, which select on that label, find their nodes. Only added, never changed or removed.
 */
import assert from 'node:assert/strict';
import { plan } from '../../../src/plan/index.js';
import type { Action, Plan } from '../../../src/plan/types.js';
import type { ObservedNode } from '../../../src/observe/types.js';
import type { NodeOp } from '../../../src/spec/model.js';
import { at, config, desired, node, observed } from '../fixtures.js';
import { nodeOp } from './fixtures.js';

const KAIROS_OS = 'Kairos ubuntu 24.04 v3.5.0';

function n(name: string, osImage: string, labels: Record<string, string> = {}): ObservedNode {
  return { ...node(name, `sim://g/${name}`, { labels }), osImage };
}

const kairosOp = (o: Partial<NodeOp> = {}): NodeOp =>
  nodeOp('hello', {
    apiVersion: 'operator.kairos.io/v1alpha1',
    followNewNodes: false,
    concurrency: 0,
    nodeSelector: { matchLabels: { 'kairos.io/managed': 'true' } },
    ...o,
  });

function run(op: NodeOp, nodes: ObservedNode[]): Plan {
  return plan(desired({ config: config(10), nodeOps: [op] }), observed({ nodes }), at(0), {
    jobNamespace: 'drydock-system',
  });
}

const labelled = (p: Plan): Record<string, Readonly<Record<string, string | null>>> =>
  Object.fromEntries(
    p.actions
      .filter((a): a is Extract<Action, { kind: 'labelNode' }> => a.kind === 'labelNode')
      .map((a) => [a.node, a.labels]),
  );

describe('NodeOp planner: Kairos node labels', () => {
  it('labels the Kairos nodes that have no kairos.io/managed label, and no other node', () => {
    const nodes = [
      n('kairos-0', KAIROS_OS),
      n('kairos-1', 'kairos-alpine v3.4.2'),
      n('ubuntu-0', 'Ubuntu 24.04.1 LTS'),
      n('kairos-kept-out', KAIROS_OS, { 'kairos.io/managed': 'false' }),
      n('kairos-done', KAIROS_OS, { 'kairos.io/managed': 'true' }),
    ];
    assert.deepEqual(labelled(run(kairosOp(), nodes)), {
      'kairos-0': { 'kairos.io/managed': 'true' },
      'kairos-1': { 'kairos.io/managed': 'true' },
    });
  });

  it('labels nothing when no spec is in the Kairos format', () => {
    assert.deepEqual(labelled(run(kairosOp({ apiVersion: 'drydock.dev/v1alpha1' }), [n('kairos-0', KAIROS_OS)])), {});
  });

  it('the NodeOp waits for the labels this round, saying so, and starts on the labelled nodes the next', () => {
    const first = run(kairosOp(), [n('kairos-0', KAIROS_OS), n('ubuntu-0', 'Ubuntu 24.04.1 LTS')]);
    const status = first.specs.find((s) => s.spec.kind === 'NodeOp');
    assert.match(status?.waitingFor ?? '', /drydock labels kairos-0 kairos\.io\/managed=true now/);
    const next = run(kairosOp(), [
      n('kairos-0', KAIROS_OS, { 'kairos.io/managed': 'true' }),
      n('ubuntu-0', 'Ubuntu 24.04.1 LTS'),
    ]);
    assert.deepEqual(labelled(next), {});
    assert.deepEqual(
      next.actions.filter((a) => a.kind === 'annotateNode' && 'node' in a && a.node === 'ubuntu-0'),
      [],
    );
    assert.equal(next.specs.find((s) => s.spec.kind === 'NodeOp')?.progress?.total, 1);
  });

  it('with no Kairos node, it says to label them by hand', () => {
    const status = run(kairosOp(), [n('ubuntu-0', 'Ubuntu 24.04.1 LTS')]).specs.find((s) => s.spec.kind === 'NodeOp');
    assert.match(
      status?.waitingFor ?? '',
      /none does here: label them \(kubectl label node <name> kairos\.io\/managed=true\)/,
    );
  });
});
