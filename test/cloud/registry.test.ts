import { strict as assert } from 'node:assert';
import {
  createProvider,
  ProviderConfigError,
  SimCloud,
  SimHttpProvider,
  SimProvider,
  type ProviderConfig,
} from '../../src/cloud/index.js';
import { smallConfig } from './sim-fixtures.js';

describe('cloud provider registry', () => {
  it('sim in-process', async () => {
    const cloud = await SimCloud.open({ config: smallConfig() });
    try {
      const provider = createProvider({ provider: 'sim', cloud });
      assert.ok(provider instanceof SimProvider);
      assert.equal(provider.name, 'sim');
      assert.deepEqual(await provider.listGroups(), ['cp', 'workers']);
    } finally {
      await cloud.close();
    }
  });

  it('sim over HTTP', () => {
    const provider = createProvider({ provider: 'sim', url: 'http://127.0.0.1:7070/' });
    assert.ok(provider instanceof SimHttpProvider);
    assert.equal(provider.baseUrl, 'http://127.0.0.1:7070');
  });

  for (const name of ['aws', 'gcp', 'azure'] as const) {
    it(`${name} is built in and needs no configuration (the SDK's default credentials)`, () => {
      const provider = createProvider({ provider: name });
      assert.equal(provider.name, name);
    });
  }

  const invalid: Array<[string, unknown]> = [
    ['sim without url or cloud', { provider: 'sim' }],
    ['an unknown provider', { provider: 'openstack' }],
  ];
  for (const [name, config] of invalid) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => createProvider(config as ProviderConfig),
        (err: unknown) => err instanceof ProviderConfigError && err.code === 'InvalidProviderConfig',
      );
    });
  }
});
