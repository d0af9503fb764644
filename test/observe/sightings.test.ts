import assert from 'node:assert/strict';
import { InstanceSightings } from '../../src/observe/cloud.js';
import type { ObservedCloudGroup } from '../../src/observe/types.js';

const group = (ids: string[], createdAt: string): ObservedCloudGroup => ({
  scalingGroup: 'workers',
  description: {
    groupId: 'workers',
    image: 'img',
    targetSize: ids.length,
    instances: ids.map((id) => ({ id, providerID: `sim://${id}`, image: 'img', state: 'running', createdAt })),
  },
});
const createdAt = (g: ObservedCloudGroup[]): string[] => g[0]!.description.instances.map((i) => i.createdAt);

describe('observe: an instance is never older than this process first saw it', () => {
  const t0 = Date.parse('2026-11-25T00:05:00Z');
  it('a cloud clock a day behind drydock does not age a fresh instance', () => {
    const s = new InstanceSightings();
    const dayBehind = '2026-11-24T00:05:00.000Z';
    assert.deepEqual(createdAt(s.stamp([group(['i-1'], dayBehind)], t0)), ['2026-11-25T00:05:00.000Z']);
    // Later rounds keep the first sighting, so the joinTimeout runs from it.
    assert.deepEqual(createdAt(s.stamp([group(['i-1'], dayBehind)], t0 + 30_000)), ['2026-11-25T00:05:00.000Z']);
  });

  it("keeps the cloud's createdAt when it is the later one, and forgets instances that are gone", () => {
    const s = new InstanceSightings();
    const later = '2026-11-25T00:05:02.000Z';
    assert.deepEqual(createdAt(s.stamp([group(['i-1'], later)], t0)), [later]);
    s.stamp([group([], later)], t0);
    const back = s.stamp([group(['i-1'], '2026-11-24T00:00:00.000Z')], t0 + 60_000);
    assert.deepEqual(createdAt(back), ['2026-11-25T00:06:00.000Z']);
  });
});
