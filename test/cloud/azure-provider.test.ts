/**
 * The Azure provider through the real @azure/arm-compute client against a local HTTPS server
 * answering with Resource Manager's documented shapes: the exact requests of every interface
 * call, long-running operations (Azure-AsyncOperation polling), nextLink pagination, uniform
 * and flexible orchestration, and error mapping (429/503 with Retry-After, quota, not found).
 */
import { strict as assert } from 'node:assert';
import {
  AzureProvider,
  CloudError,
  azureImageReference,
  azureImageString,
  createProvider,
  parseAzureProviderID,
} from '../../src/cloud/index.js';
import { selfSignedCertificate, startHttpRecorder, type HttpRecorder } from '../support/http-recorder.js';

const SUB = '00000000-1111-2222-3333-444444444444';
const RG = '/subscriptions/' + SUB + '/resourceGroups/cluster-rg';
const VMSS = `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/workers`;
const IMG1 = `${RG}/providers/Microsoft.Compute/galleries/nodes/images/node-os/versions/1.0.0`;
const IMG2 = '/CommunityGalleries/drydock-1234/Images/node-os/Versions/2.0.0';
const staticCredential = {
  getToken: async () => ({ token: 'test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

function scaleSet(
  capacity: number,
  orchestrationMode = 'Uniform',
  mode = 'Manual',
  imageReference: Record<string, string> = { id: IMG1 },
): Record<string, unknown> {
  return {
    id: VMSS,
    name: 'workers',
    location: 'westeurope',
    sku: { name: 'Standard_D4s_v5', tier: 'Standard', capacity },
    properties: {
      orchestrationMode,
      upgradePolicy: { mode },
      virtualMachineProfile: { storageProfile: { imageReference } },
    },
  };
}

function vmssVm(
  instanceId: string,
  provisioningState: string,
  timeCreated: string,
  image = IMG1,
): Record<string, unknown> {
  return {
    id: `${VMSS}/virtualMachines/${instanceId}`,
    name: `workers_${instanceId}`,
    instanceId,
    properties: { provisioningState, timeCreated, storageProfile: { imageReference: { id: image } } },
  };
}

/** Method and path, with the query but without api-version (the client's to choose). */
const paths = (s: HttpRecorder): string[] =>
  s.requests.map((r) => {
    const u = new URL(r.path, 'https://x');
    u.searchParams.delete('api-version');
    return `${r.method} ${u.pathname}${u.search}`;
  });

describe('azure provider (local Resource Manager)', () => {
  let s: HttpRecorder;
  let provider: AzureProvider;
  let ca = '';
  before(async () => {
    const tls = selfSignedCertificate();
    ca = tls.cert;
    s = await startHttpRecorder(tls);
  });
  after(() => s.close());
  beforeEach(() => {
    s.reset();
    provider = new AzureProvider({
      endpoint: s.url,
      credential: staticCredential,
      ca,
      pollIntervalMs: 10,
      timeoutMs: 30_000,
    });
  });

  /** 202 + Azure-AsyncOperation, InProgress once, then Succeeded. */
  function asyncOperation(name: string): { status: number; headers: Record<string, string> } {
    const op = `/subscriptions/${SUB}/providers/Microsoft.Compute/locations/westeurope/operations/${name}`;
    s.route('GET', op, { body: { name, status: 'InProgress' } }, { once: true });
    s.route('GET', op, { body: { name, status: 'Succeeded' } });
    return {
      status: 202,
      headers: { 'azure-asyncoperation': `${s.url}${op}?api-version=2024-11-01`, 'retry-after': '0' },
    };
  }

  it('describeGroup (uniform) reads the model and every page of instances', async () => {
    s.route('GET', VMSS, { body: scaleSet(2) });
    s.route('GET', `${VMSS}/virtualMachines`, (r) =>
      r.path.includes('skiptoken=p2')
        ? { body: { value: [vmssVm('7', 'Creating', '2026-01-02T10:00:00Z')] } }
        : {
            body: {
              value: [vmssVm('3', 'Succeeded', '2026-01-01T10:00:00Z')],
              nextLink: `${s.url}${VMSS}/virtualMachines?api-version=2024-11-01&skiptoken=p2`,
            },
          },
    );
    const d = await provider.describeGroup(VMSS);
    assert.deepEqual(d, {
      groupId: VMSS,
      image: IMG1,
      targetSize: 2,
      instances: [
        {
          id: '3',
          providerID: `azure://${VMSS}/virtualMachines/3`,
          image: IMG1,
          state: 'running',
          createdAt: '2026-01-01T10:00:00.000Z',
        },
        {
          id: '7',
          providerID: `azure://${VMSS}/virtualMachines/7`,
          image: IMG1,
          state: 'pending',
          createdAt: '2026-01-02T10:00:00.000Z',
        },
      ],
    });
    assert.deepEqual(paths(s), [
      `GET ${VMSS}`,
      `GET ${VMSS}/virtualMachines`,
      `GET ${VMSS}/virtualMachines?skiptoken=p2`,
    ]);
    // Without timeCreated, an instance counts from when it was first seen, and keeps that time.
    s.reset();
    s.route('GET', VMSS, { body: scaleSet(1) });
    s.route('GET', `${VMSS}/virtualMachines`, {
      body: { value: [{ ...vmssVm('8', 'Creating', ''), properties: { provisioningState: 'Creating' } }] },
    });
    const before = Date.now();
    const first = (await provider.describeGroup(VMSS)).instances[0]?.createdAt ?? '';
    assert.ok(Date.parse(first) >= before - 1000 && Date.parse(first) <= Date.now(), first);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await provider.describeGroup(VMSS)).instances[0]?.createdAt, first);
    assert.equal(s.requests[0]?.headers.authorization, 'Bearer test-token');
    assert.deepEqual(provider.instanceForProviderID(`azure://${VMSS}/virtualMachines/3`), {
      groupId: VMSS,
      instanceId: '3',
    });
  });

  it("describeGroup (flexible) lists the scale set's VMs by filter", async () => {
    s.route('GET', VMSS, { body: scaleSet(1, 'Flexible') });
    const vmId = `${RG}/providers/Microsoft.Compute/virtualMachines/workers_ab12cd`;
    s.route('GET', `${RG}/providers/Microsoft.Compute/virtualMachines`, {
      body: {
        value: [
          {
            id: vmId,
            name: 'workers_ab12cd',
            properties: {
              provisioningState: 'Succeeded',
              timeCreated: '2026-01-01T10:00:00Z',
              storageProfile: { imageReference: { id: IMG1 } },
            },
          },
        ],
      },
    });
    const d = await provider.describeGroup(VMSS);
    assert.deepEqual(d.instances, [
      {
        id: 'workers_ab12cd',
        providerID: `azure://${vmId}`,
        image: IMG1,
        state: 'running',
        createdAt: '2026-01-01T10:00:00.000Z',
      },
    ]);
    const list = s.requests[1]?.path ?? '';
    assert.match(
      decodeURIComponent(list),
      new RegExp(`\\$filter='virtualMachineScaleSet/id' eq '${VMSS.replace(/\//g, '\\/')}'`),
    );
    assert.deepEqual(provider.instanceForProviderID(`azure://${vmId}`), {
      groupId: VMSS,
      instanceId: 'workers_ab12cd',
    });
  });

  it("setGroupImage patches the model's image reference and waits for the operation; the same image changes nothing", async () => {
    s.route('GET', VMSS, { body: scaleSet(2) }, { once: true });
    s.route('PATCH', VMSS, asyncOperation('op-image'));
    s.route('GET', VMSS, { body: scaleSet(2, 'Uniform', 'Manual', { communityGalleryImageId: IMG2 }) });
    await provider.setGroupImage(VMSS, IMG2);
    const patch = s.requests.find((r) => r.method === 'PATCH');
    assert.deepEqual(patch?.body, {
      properties: { virtualMachineProfile: { storageProfile: { imageReference: { communityGalleryImageId: IMG2 } } } },
    });
    assert.deepEqual(paths(s).slice(0, 2), [`GET ${VMSS}`, `PATCH ${VMSS}`]);
    assert.ok(paths(s).filter((p) => p.includes('/operations/op-image')).length >= 2, 'polled until Succeeded');
    s.requests.length = 0;
    await provider.setGroupImage(VMSS, IMG2);
    assert.deepEqual(paths(s), [`GET ${VMSS}`]);
  });

  it('setGroupImage refuses a scale set Azure would roll itself, and an image it cannot name', async () => {
    s.route('GET', VMSS, { body: scaleSet(2, 'Uniform', 'Rolling') });
    await assert.rejects(
      provider.setGroupImage(VMSS, IMG2),
      (e: unknown) => e instanceof CloudError && e.code === 'Permanent' && /Manual/.test(e.message),
    );
    await assert.rejects(
      provider.setGroupImage(VMSS, 'ubuntu'),
      (e: unknown) => e instanceof CloudError && e.code === 'Permanent' && /Marketplace URN/.test(e.message),
    );
  });

  it('addCapacity patches sku.capacity', async () => {
    s.route('GET', VMSS, { body: scaleSet(3) });
    s.route('PATCH', VMSS, asyncOperation('op-cap'));
    assert.deepEqual(await provider.addCapacity(VMSS, 2), []);
    assert.deepEqual(s.requests.find((r) => r.method === 'PATCH')?.body, {
      sku: { name: 'Standard_D4s_v5', tier: 'Standard', capacity: 5 },
    });
  });

  it('removeInstance deletes exactly that instance; one already deleting or gone is left alone', async () => {
    s.route('GET', VMSS, { body: scaleSet(2) });
    s.route('GET', `${VMSS}/virtualMachines`, {
      body: {
        value: [vmssVm('3', 'Succeeded', '2026-01-01T10:00:00Z'), vmssVm('4', 'Deleting', '2026-01-01T10:00:00Z')],
      },
    });
    s.route('POST', `${VMSS}/delete`, asyncOperation('op-del'));
    await provider.removeInstance(VMSS, '3');
    const del = s.requests.find((r) => r.method === 'POST');
    assert.equal(del?.path.split('?')[0], `${VMSS}/delete`);
    assert.deepEqual(del?.body, { instanceIds: ['3'] });
    s.requests.length = 0;
    await provider.removeInstance(VMSS, '4');
    await provider.removeInstance(VMSS, '99');
    assert.equal(s.requests.filter((r) => r.method !== 'GET').length, 0);
  });

  const failures: Array<[string, number, Record<string, string>, string, string, number | undefined]> = [
    ['429 with Retry-After', 429, { 'retry-after': '9' }, 'TooManyRequests', 'Throttled', 9],
    ['429 without Retry-After', 429, {}, 'SubscriptionRequestsThrottled', 'Throttled', 5],
    ['503 with Retry-After', 503, { 'retry-after': '2' }, 'ServiceUnavailable', 'Transient', undefined],
    ['409 quota', 409, {}, 'QuotaExceeded', 'QuotaExceeded', undefined],
    ['404', 404, {}, 'ResourceNotFound', 'NotFound', undefined],
    ['403', 403, {}, 'AuthorizationFailed', 'Permanent', undefined],
  ];
  for (const [what, status, headers, code, mapped, retryAfter] of failures) {
    it(`maps ${what} (${code}) to ${mapped}`, async () => {
      s.route('GET', VMSS, { status, headers, body: { error: { code, message: `${code} happened` } } });
      await assert.rejects(provider.describeGroup(VMSS), (e: unknown) => {
        assert.ok(e instanceof CloudError, String(e));
        assert.equal(e.code, mapped);
        assert.equal(e.data.retryAfterSeconds, retryAfter);
        assert.equal(e.data.groupId, VMSS);
        assert.match(e.message, /^azure: describe scale set /);
        return true;
      });
      assert.equal(s.requests.length, 1, 'no retries of its own');
    });
  }

  it('a failed operation is mapped by its error code', async () => {
    s.route('GET', VMSS, { body: scaleSet(3) });
    const op = `/subscriptions/${SUB}/providers/Microsoft.Compute/locations/westeurope/operations/op-q`;
    s.route('GET', op, {
      body: {
        name: 'op-q',
        status: 'Failed',
        error: {
          code: 'QuotaExceeded',
          message:
            'Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota',
        },
      },
    });
    s.route('PATCH', VMSS, {
      status: 202,
      headers: { 'azure-asyncoperation': `${s.url}${op}?api-version=2024-11-01`, 'retry-after': '0' },
    });
    await assert.rejects(
      provider.addCapacity(VMSS, 1),
      (e: unknown) => e instanceof CloudError && e.code === 'QuotaExceeded' && /standardDSv5Family/.test(e.message),
    );
  });

  it("listGroups lists the subscription's scale sets over every page", async () => {
    const lister = new AzureProvider({ endpoint: s.url, credential: staticCredential, ca, subscriptionId: SUB });
    const other = `/subscriptions/${SUB}/resourceGroups/other-rg/providers/Microsoft.Compute/virtualMachineScaleSets/gpu`;
    s.route('GET', `/subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachineScaleSets`, (r) =>
      r.path.includes('skiptoken=p2')
        ? { body: { value: [{ id: other, name: 'gpu' }] } }
        : {
            body: {
              value: [{ id: VMSS, name: 'workers' }],
              nextLink: `${s.url}/subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=2024-11-01&skiptoken=p2`,
            },
          },
    );
    assert.deepEqual(await lister.listGroups(), [other, VMSS].sort());
    assert.deepEqual(paths(s), [
      `GET /subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachineScaleSets`,
      `GET /subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachineScaleSets?skiptoken=p2`,
    ]);
    await assert.rejects(
      provider.listGroups(),
      (e: unknown) => e instanceof CloudError && e.code === 'Permanent' && /no subscription configured/.test(e.message),
    );
  });

  it('image strings and providerIDs map both ways', () => {
    for (const image of [
      IMG1,
      IMG2,
      '/SharedGalleries/abc-123/Images/node-os/Versions/1.0.0',
      'Canonical:ubuntu-24_04-lts:server:24.04.202601010',
    ]) {
      const ref = azureImageReference(image);
      assert.ok(ref, image);
      assert.equal(azureImageString(ref), image);
    }
    assert.deepEqual(parseAzureProviderID(`azure://${VMSS}/virtualMachines/3`), { scaleSetId: VMSS, instanceId: '3' });
    assert.deepEqual(parseAzureProviderID(`azure://${RG}/providers/Microsoft.Compute/virtualMachines/workers_ab12cd`), {
      instanceId: 'workers_ab12cd',
    });
    assert.equal(parseAzureProviderID('gce://p/z/n'), undefined);
  });

  it('createProvider builds it without configuration (DefaultAzureCredential on first call)', () => {
    assert.ok(createProvider({ provider: 'azure' }) instanceof AzureProvider);
  });
});
