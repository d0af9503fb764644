/**
 * A cluster without a cloud (Kairos, bare metal) runs drydock without one: the sim provider with
 * no endpoint is no provider, and only a ScalingGroup that needs a cloud says it has none.
 */
import { strict as assert } from 'node:assert';
import { observeCloud } from '../../src/observe/cloud.js';
import { providersFrom } from '../../src/service/options.js';
import { scalingGroup } from '../plan/fixtures.js';

describe('observe: a cluster with no cloud', () => {
  it('the sim provider without --cloud-endpoint configures no provider, and is no error', () => {
    assert.deepEqual(providersFrom('sim', undefined), {});
  });

  it('a repository without ScalingGroups observes no cloud and has no problem', async () => {
    const providers = providersFrom('sim', undefined);
    const seen = await observeCloud({ scalingGroups: [] }, (p) => providers[p]);
    assert.deepEqual(seen, { groups: [], problems: [] });
  });

  it('a ScalingGroup of the sim provider without one is a problem that says which flag to pass', async () => {
    const providers = providersFrom('sim', undefined);
    const seen = await observeCloud({ scalingGroups: [scalingGroup('workers', 'workers')] }, (p) => providers[p]);
    assert.deepEqual(seen.groups, []);
    assert.equal(seen.problems.length, 1);
    assert.equal(seen.problems[0]?.code, 'NoProvider');
    assert.match(
      seen.problems[0]?.message ?? '',
      /no sim provider is configured for ScalingGroup workers; start drydock with --provider sim --cloud-endpoint URL/,
    );
  });
});
