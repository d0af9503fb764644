import { strict as assert } from 'node:assert';
import { compareIds, instanceId, mergeConfig } from '../../src/cloud/sim/records.js';
import type { SimState } from '../../src/cloud/sim/state.js';
import { smallConfig } from './sim-fixtures.js';

describe('sim cloud records', () => {
  it('instance ids sort in creation order, also past 9999', () => {
    const ids = [10000, 2, 9999, 10, 1].map(instanceId);
    assert.deepEqual(ids.sort(compareIds), ['i-0001', 'i-0002', 'i-0010', 'i-9999', 'i-10000']);
  });

  it('a restart with a changed configuration: definitions from the config, image and instances from the state', () => {
    const saved: SimState = {
      version: 1,
      groups: [
        {
          id: 'workers',
          role: 'worker',
          image: 'os-v7',
          labels: { old: 'x' },
          resources: { cpu: '1', memory: '1Gi', pods: '10' },
          nextInstance: 9,
          instances: [{ id: 'i-0008', image: 'os-v7', state: 'running', createdAt: 0, joins: true, registered: true }],
        },
        {
          id: 'retired',
          role: 'worker',
          image: 'a',
          labels: {},
          resources: { cpu: '1', memory: '1Gi', pods: '10' },
          nextInstance: 1,
          instances: [],
        },
      ],
    };
    const { state, orphans } = mergeConfig(saved, smallConfig(), 1000);
    assert.deepEqual(orphans, ['retired']);
    assert.deepEqual(
      state.groups.map((g) => g.id),
      ['cp', 'retired', 'workers'],
    );
    const workers = state.groups.find((g) => g.id === 'workers');
    assert.equal(workers?.image, 'os-v7');
    assert.deepEqual(workers?.labels, { pool: 'general' });
    assert.deepEqual(
      workers?.instances.map((i) => i.id),
      ['i-0008'],
    );
    assert.equal(workers?.nextInstance, 9);
    // A group new in the configuration gets its initial instances, booting after the delay.
    const cp = state.groups.find((g) => g.id === 'cp');
    assert.deepEqual(
      cp?.instances.map((i) => [i.id, i.state, i.bootAt]),
      [['i-0001', 'pending', 11_000]],
    );
  });
});
