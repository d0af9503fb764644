import assert from 'node:assert/strict';
import { PromptEvents } from '../../src/service/prompt.js';
import type { Wait } from '../../src/plan/types.js';

const spec = { kind: 'NodeOp', name: 'patch' } as const;
const waits: Wait[] = [
  { spec, node: 'n-1', code: 'job', reason: 'node n-1: Job running' },
  { spec, code: 'concurrency', reason: 'at most 2 nodes at once' },
];

describe('PromptEvents: which watch events start the next round promptly', () => {
  it('a pod on a node the last plan waits for is prompt; a pod anywhere else keeps the gap', () => {
    const p = new PromptEvents();
    p.planned(waits);
    assert.equal(p.prompt({ collection: 'pods', type: 'delete', node: 'n-1' }), true);
    assert.equal(p.prompt({ collection: 'pods', type: 'update', node: 'n-2' }), false);
    assert.equal(p.prompt({ collection: 'pods', type: 'add' }), false, 'an unbound pod');
  });

  it('every Node and drydock Job change is prompt; PDBs, Deployments and ReplicaSets keep the gap', () => {
    const p = new PromptEvents();
    p.planned([]);
    assert.equal(p.prompt({ collection: 'nodes', type: 'add', node: 'replacement' }), true);
    assert.equal(p.prompt({ collection: 'nodes', type: 'update', node: 'n-9' }), true);
    assert.equal(p.prompt({ collection: 'jobs', type: 'update' }), true);
    for (const collection of ['poddisruptionbudgets', 'deployments', 'replicasets', 'statefulsets', 'openshift'])
      assert.equal(p.prompt({ collection, type: 'update' }), false, collection);
  });

  it('follows the latest plan: a node no longer waited for is no longer prompt', () => {
    const p = new PromptEvents();
    p.planned(undefined);
    assert.equal(p.prompt({ collection: 'pods', type: 'update', node: 'n-1' }), false, 'before the first round');
    p.planned(waits);
    assert.equal(p.prompt({ collection: 'pods', type: 'update', node: 'n-1' }), true);
    p.planned([{ spec, node: 'n-2', code: 'reboot', reason: 'node n-2: waiting for the reboot' }]);
    assert.equal(p.prompt({ collection: 'pods', type: 'update', node: 'n-1' }), false);
    assert.equal(p.prompt({ collection: 'pods', type: 'update', node: 'n-2' }), true);
  });
});
