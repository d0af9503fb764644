import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CloudError, type CloudProvider } from '../../src/cloud/provider.js';
import { executeActions, NO_EVENTS, type KubeApis } from '../../src/execute/index.js';
import type { Action, SpecRef } from '../../src/plan/types.js';

const spec: SpecRef = { kind: 'NodeImage', name: 'worker' };

describe('execute: a failed step holds the rest of its node', () => {
  it('does not delete the Node of an instance the cloud refused to remove (the instance would be orphaned)', async () => {
    const removals: string[] = [];
    const cloud = {
      removeInstance: (groupId: string, id: string): Promise<void> => {
        removals.push(`${groupId}/${id}`);
        return Promise.reject(new CloudError('Throttled', 'rate exceeded', { retryAfterSeconds: 1 }));
      },
    } as unknown as CloudProvider;
    // No Kubernetes client: a deleteNode that ran anyway would fail with a TypeError, not be Deferred.
    const actions: Action[] = [
      { kind: 'removeInstance', spec, reason: 'test', groupId: 'workers', instanceId: 'i-1', node: 'n-1' },
      { kind: 'deleteNode', spec, reason: 'test', node: 'n-1' },
    ];
    const rs = await executeActions(actions, {
      kube: {} as KubeApis,
      cloud: () => cloud,
      fieldManager: 'drydock',
      logger: pino({ level: 'silent' }),
      events: NO_EVENTS,
      now: () => new Date(),
    });
    assert.deepEqual(removals, ['workers/i-1']);
    assert.notEqual(rs[0]?.outcome.kind, 'done');
    assert.deepEqual(rs[1]?.outcome, {
      kind: 'transient',
      code: 'Deferred',
      reason: 'deleteNode n-1: deferred, an earlier step on node n-1 did not succeed',
    });
  });
});
