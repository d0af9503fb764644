/**
 * The GCP provider through the real Compute client (REST transport) against a local server
 * answering with the Compute API's documented shapes: the exact requests of every interface
 * call, long-running operations, pagination, and error mapping (429/503 with Retry-After,
 * quota, not found, a failed operation).
 */
import { strict as assert } from 'node:assert';
import { CloudError, createProvider, GcpProvider, gceProviderID, parseGceProviderID } from '../../src/cloud/index.js';
import { staticGcpAuth } from '../support/gcp-fake.js';
import { startHttpRecorder, type HttpRecorder } from '../support/http-recorder.js';

const API = 'https://www.googleapis.com/compute/v1';
const PROJECT = 'proj-123456';
const ZONE = 'europe-west3-a';
const ZONAL = `projects/${PROJECT}/zones/${ZONE}/instanceGroupManagers/workers`;
const REGIONAL = `projects/${PROJECT}/regions/europe-west3/instanceGroupManagers/workers`;
const V1 = 'projects/images-prj/global/images/node-os-v1';
const V2 = 'projects/images-prj/global/images/node-os-v2';
const BASE = `/compute/v1/projects/${PROJECT}`;

function template(name: string, image: string): Record<string, unknown> {
  return {
    kind: 'compute#instanceTemplate',
    id: '123',
    name,
    selfLink: `${API}/projects/${PROJECT}/global/instanceTemplates/${name}`,
    properties: {
      machineType: 'e2-standard-4',
      disks: [{ boot: true, autoDelete: true, initializeParams: { sourceImage: `${API}/${image}`, diskSizeGb: '50' } }],
      labels: { pool: 'general' },
    },
  };
}

function managed(
  name: string,
  tmpl: string,
  currentAction = 'NONE',
  instanceStatus = 'RUNNING',
): Record<string, unknown> {
  return {
    instance: `${API}/projects/${PROJECT}/zones/${ZONE}/instances/${name}`,
    id: '9',
    currentAction,
    instanceStatus,
    version: { instanceTemplate: `${API}/projects/${PROJECT}/global/instanceTemplates/${tmpl}` },
  };
}

function mig(tmpl: string, targetSize: number, updatePolicy = 'OPPORTUNISTIC'): Record<string, unknown> {
  const url = `${API}/projects/${PROJECT}/global/instanceTemplates/${tmpl}`;
  return {
    name: 'workers',
    instanceTemplate: url,
    versions: [{ instanceTemplate: url }],
    targetSize,
    updatePolicy: { type: updatePolicy },
  };
}

/** A running operation that is DONE at its first wait. */
function operation(
  s: HttpRecorder,
  name: string,
  scope: string,
  result: Record<string, unknown> = {},
): Record<string, unknown> {
  s.route('POST', `${BASE}/${scope}/operations/${name}/wait`, { body: { name, status: 'DONE', ...result } });
  const where =
    scope === 'global'
      ? {}
      : scope.startsWith('zones/')
        ? { zone: `${API}/projects/${PROJECT}/${scope}` }
        : { region: `${API}/projects/${PROJECT}/${scope}` };
  return { kind: 'compute#operation', name, status: 'RUNNING', ...where };
}

const calls = (s: HttpRecorder): string[] => s.requests.map((r) => `${r.method} ${r.path}`);

describe('gcp provider (local Compute API)', () => {
  let s: HttpRecorder;
  let provider: GcpProvider;
  before(async () => {
    s = await startHttpRecorder();
  });
  after(() => s.close());
  beforeEach(() => {
    s.reset();
    provider = new GcpProvider({ endpoint: s.url, authClient: staticGcpAuth, pageSize: 1, timeoutMs: 30_000 });
  });

  it('describeGroup reads group, template, every page of instances and each instance once', async () => {
    s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, { body: mig('workers-v1', 2) });
    s.route('GET', `${BASE}/global/instanceTemplates/workers-v1`, { body: template('workers-v1', V1) });
    s.route('POST', /listManagedInstances\?maxResults=1&pageToken=p2$/, {
      body: { managedInstances: [managed('workers-bbbb', 'workers-v1', 'CREATING', 'PROVISIONING')] },
    });
    s.route('POST', /listManagedInstances\?maxResults=1$/, {
      body: { managedInstances: [managed('workers-aaaa', 'workers-v1')], nextPageToken: 'p2' },
    });
    s.route('GET', `${BASE}/zones/${ZONE}/instances/workers-aaaa`, {
      body: { name: 'workers-aaaa', creationTimestamp: '2026-01-01T10:00:00.000-08:00' },
    });
    s.route('GET', `${BASE}/zones/${ZONE}/instances/workers-bbbb`, {
      body: { name: 'workers-bbbb', creationTimestamp: '2026-01-02T10:00:00.000-08:00' },
    });
    const d = await provider.describeGroup(ZONAL);
    assert.deepEqual(d, {
      groupId: ZONAL,
      image: V1,
      targetSize: 2,
      instances: [
        {
          id: 'workers-aaaa',
          providerID: `gce://${PROJECT}/${ZONE}/workers-aaaa`,
          image: V1,
          state: 'running',
          createdAt: '2026-01-01T18:00:00.000Z',
        },
        {
          id: 'workers-bbbb',
          providerID: `gce://${PROJECT}/${ZONE}/workers-bbbb`,
          image: V1,
          state: 'pending',
          createdAt: '2026-01-02T18:00:00.000Z',
        },
      ],
    });
    assert.deepEqual(calls(s), [
      `GET ${BASE}/zones/${ZONE}/instanceGroupManagers/workers`,
      `GET ${BASE}/global/instanceTemplates/workers-v1`,
      `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/listManagedInstances?maxResults=1`,
      `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/listManagedInstances?maxResults=1&pageToken=p2`,
      `GET ${BASE}/zones/${ZONE}/instances/workers-aaaa`,
      `GET ${BASE}/zones/${ZONE}/instances/workers-bbbb`,
    ]);
    assert.equal(s.requests[0]?.headers.authorization, 'Bearer test-token');
    s.requests.length = 0;
    await provider.describeGroup(ZONAL);
    assert.equal(
      calls(s).filter((c) => /instanceTemplates|\/instances\//.test(c)).length,
      0,
      'templates and creation times are read once',
    );
    assert.deepEqual(provider.instanceForProviderID(`gce://${PROJECT}/${ZONE}/workers-aaaa`), {
      groupId: ZONAL,
      instanceId: 'workers-aaaa',
    });
    assert.equal(provider.instanceForProviderID(`gce://${PROJECT}/${ZONE}/other-1`), undefined);
  });

  it('setGroupImage inserts a copy of the template with the image replaced and sets it on the group', async () => {
    s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, { body: mig('workers-v1', 2) });
    s.route('GET', `${BASE}/global/instanceTemplates/workers-v1`, { body: template('workers-v1', V1) });
    s.route('POST', `${BASE}/global/instanceTemplates`, { body: operation(s, 'op-insert', 'global') });
    s.route('POST', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers/setInstanceTemplate`, {
      body: operation(s, 'op-set', `zones/${ZONE}`),
    });
    await provider.setGroupImage(ZONAL, V2);
    const name =
      'workers-v1-d' + (await import('node:crypto')).createHash('sha256').update(V2).digest('hex').slice(0, 8);
    assert.deepEqual(calls(s), [
      `GET ${BASE}/zones/${ZONE}/instanceGroupManagers/workers`,
      `GET ${BASE}/global/instanceTemplates/workers-v1`,
      `POST ${BASE}/global/instanceTemplates`,
      `POST ${BASE}/global/operations/op-insert/wait`,
      `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/setInstanceTemplate`,
      `POST ${BASE}/zones/${ZONE}/operations/op-set/wait`,
    ]);
    const inserted = s.requests[2]?.body as {
      name: string;
      description: string;
      properties: {
        machineType: string;
        disks: { initializeParams: { sourceImage: string; diskSizeGb: string } }[];
        labels: unknown;
      };
    };
    assert.equal(inserted.name, name);
    assert.equal(inserted.properties.disks[0]?.initializeParams.sourceImage, V2);
    assert.equal(inserted.properties.disks[0]?.initializeParams.diskSizeGb, '50', 'the rest is copied');
    assert.equal(inserted.properties.machineType, 'e2-standard-4');
    assert.deepEqual(inserted.properties.labels, { pool: 'general' });
    assert.deepEqual(s.requests[4]?.body, { instanceTemplate: `projects/${PROJECT}/global/instanceTemplates/${name}` });
  });

  it('setGroupImage to the image the group has changes nothing; a PROACTIVE group or an image that is no path is refused', async () => {
    s.route(
      'GET',
      `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`,
      { body: mig('workers-v1', 2) },
      { once: true },
    );
    s.route('GET', `${BASE}/global/instanceTemplates/workers-v1`, { body: template('workers-v1', V1) });
    await provider.setGroupImage(ZONAL, V1);
    assert.deepEqual(
      calls(s).map((c) => c.split(' ')[0]),
      ['GET', 'GET'],
    );
    s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, { body: mig('workers-v1', 2, 'PROACTIVE') });
    await assert.rejects(
      provider.setGroupImage(ZONAL, V2),
      (e: unknown) => e instanceof CloudError && e.code === 'Permanent' && /OPPORTUNISTIC/.test(e.message),
    );
    await assert.rejects(
      provider.setGroupImage(ZONAL, 'ubuntu-2404'),
      (e: unknown) =>
        e instanceof CloudError && e.code === 'Permanent' && /projects\/<project>\/global\/images/.test(e.message),
    );
  });

  it('addCapacity resizes the group by count and waits for the operation', async () => {
    s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, { body: mig('workers-v1', 3) });
    s.route('POST', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers/resize`, {
      body: operation(s, 'op-resize', `zones/${ZONE}`),
    });
    assert.deepEqual(await provider.addCapacity(ZONAL, 2), []);
    assert.deepEqual(calls(s), [
      `GET ${BASE}/zones/${ZONE}/instanceGroupManagers/workers`,
      `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/resize?size=5`,
      `POST ${BASE}/zones/${ZONE}/operations/op-resize/wait`,
    ]);
  });

  it('removeInstance deletes exactly that instance (the target size drops with it); a second time only looks', async () => {
    s.route(
      'POST',
      /listManagedInstances/,
      { body: { managedInstances: [managed('workers-aaaa', 'workers-v1'), managed('workers-bbbb', 'workers-v1')] } },
      { once: true },
    );
    s.route('POST', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers/deleteInstances`, {
      body: operation(s, 'op-del', `zones/${ZONE}`),
    });
    await provider.removeInstance(ZONAL, 'workers-bbbb');
    assert.deepEqual(calls(s), [
      `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/listManagedInstances?maxResults=1`,
      `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/deleteInstances`,
      `POST ${BASE}/zones/${ZONE}/operations/op-del/wait`,
    ]);
    assert.deepEqual(s.requests[1]?.body, {
      instances: [`projects/${PROJECT}/zones/${ZONE}/instances/workers-bbbb`],
      skipInstancesOnValidationError: true,
    });
    s.reset();
    s.route('POST', /listManagedInstances/, {
      body: {
        managedInstances: [managed('workers-aaaa', 'workers-v1'), managed('workers-bbbb', 'workers-v1', 'DELETING')],
      },
    });
    await provider.removeInstance(ZONAL, 'workers-bbbb');
    await provider.removeInstance(ZONAL, 'workers-zzzz');
    assert.deepEqual(
      calls(s).map((c) => c.split('?')[0]),
      [
        `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/listManagedInstances`,
        `POST ${BASE}/zones/${ZONE}/instanceGroupManagers/workers/listManagedInstances`,
      ],
    );
  });

  it('a regional group goes through the regional API and waits on region operations', async () => {
    const R = `${BASE}/regions/europe-west3/instanceGroupManagers/workers`;
    s.route('GET', R, { body: mig('workers-v1', 1) });
    s.route('POST', `${R}/resize`, { body: operation(s, 'op-r', 'regions/europe-west3') });
    s.route('POST', /listManagedInstances/, { body: { managedInstances: [managed('workers-aaaa', 'workers-v1')] } });
    s.route('POST', `${R}/deleteInstances`, { body: operation(s, 'op-d', 'regions/europe-west3') });
    await provider.addCapacity(REGIONAL, 1);
    await provider.removeInstance(REGIONAL, 'workers-aaaa');
    assert.deepEqual(calls(s), [
      `GET ${R}`,
      `POST ${R}/resize?size=2`,
      `POST ${BASE}/regions/europe-west3/operations/op-r/wait`,
      `POST ${R}/listManagedInstances?maxResults=1`,
      `POST ${R}/deleteInstances`,
      `POST ${BASE}/regions/europe-west3/operations/op-d/wait`,
    ]);
  });

  const failures: Array<[string, number, Record<string, string>, unknown, string, number | undefined]> = [
    [
      '429 with Retry-After',
      429,
      { 'retry-after': '7' },
      { error: { code: 429, message: 'Rate Limit Exceeded', errors: [{ reason: 'rateLimitExceeded' }] } },
      'Throttled',
      7,
    ],
    [
      '403 rate limit without Retry-After',
      403,
      {},
      { error: { code: 403, message: 'Rate Limit Exceeded', errors: [{ reason: 'rateLimitExceeded' }] } },
      'Throttled',
      5,
    ],
    [
      '503 with Retry-After',
      503,
      { 'retry-after': '3' },
      { error: { code: 503, message: 'backend unavailable' } },
      'Transient',
      undefined,
    ],
    [
      '403 quota',
      403,
      {},
      { error: { code: 403, message: "Quota 'CPUS' exceeded", errors: [{ reason: 'quotaExceeded' }] } },
      'QuotaExceeded',
      undefined,
    ],
    [
      '404',
      404,
      {},
      { error: { code: 404, message: 'not found', errors: [{ reason: 'notFound' }] } },
      'NotFound',
      undefined,
    ],
    [
      '403 permission',
      403,
      {},
      {
        error: {
          code: 403,
          message: 'Required permission compute.instanceGroupManagers.get',
          errors: [{ reason: 'forbidden' }],
        },
      },
      'Permanent',
      undefined,
    ],
  ];
  for (const [what, status, headers, body, code, retryAfter] of failures) {
    it(`maps ${what} to ${code}`, async () => {
      s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, { status, headers, body });
      await assert.rejects(provider.describeGroup(ZONAL), (e: unknown) => {
        assert.ok(e instanceof CloudError, String(e));
        assert.equal(e.code, code);
        assert.equal(e.data.retryAfterSeconds, retryAfter);
        assert.equal(e.data.groupId, ZONAL);
        assert.match(e.message, new RegExp(`^gcp: describe group ${ZONAL.replace(/\//g, '\\/')}: HTTP ${status}`));
        return true;
      });
      assert.equal(s.requests.length, 1, 'no retries of its own: the planner decides');
    });
  }

  it('a failed operation maps by its error code', async () => {
    s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, { body: mig('workers-v1', 3) });
    const op = operation(s, 'op-q', `zones/${ZONE}`, {
      error: { errors: [{ code: 'QUOTA_EXCEEDED', message: "Quota 'CPUS' exceeded. Limit: 24.0" }] },
      httpErrorStatusCode: 403,
    });
    s.route('POST', /resize/, { body: op });
    await assert.rejects(
      provider.addCapacity(ZONAL, 1),
      (e: unknown) => e instanceof CloudError && e.code === 'QuotaExceeded' && /CPUS/.test(e.message),
    );
  });

  it('a call with no answer within the timeout is Transient', async () => {
    s.route('GET', `${BASE}/zones/${ZONE}/instanceGroupManagers/workers`, () => undefined);
    const never = await startHttpRecorder();
    const slow = new GcpProvider({
      endpoint: never.url,
      authClient: { ...staticGcpAuth, fetch: () => new Promise<Response>(() => undefined) },
      timeoutMs: 200,
    });
    try {
      await assert.rejects(
        slow.describeGroup(ZONAL),
        (e: unknown) => e instanceof CloudError && e.code === 'Transient',
      );
    } finally {
      await never.close();
    }
  });

  it("listGroups lists the project's zonal and regional groups over every page", async () => {
    const lister = new GcpProvider({ endpoint: s.url, authClient: staticGcpAuth, pageSize: 1, project: PROJECT });
    s.route('GET', `${BASE}/aggregated/instanceGroupManagers`, (r) =>
      r.path.includes('pageToken=p2')
        ? { body: { items: { 'regions/europe-west3': { instanceGroupManagers: [{ name: 'workers' }] } } } }
        : {
            body: {
              items: {
                [`zones/${ZONE}`]: { instanceGroupManagers: [{ name: 'workers' }] },
                'zones/europe-west3-b': { warning: { code: 'NO_RESULTS_ON_PAGE' } },
              },
              nextPageToken: 'p2',
            },
          },
    );
    assert.deepEqual(await lister.listGroups(), [REGIONAL, ZONAL]);
    assert.deepEqual(
      calls(s).map((c) => c.replace(/[?&]returnPartialSuccess=\w+/, '')),
      [
        `GET ${BASE}/aggregated/instanceGroupManagers?maxResults=1`,
        `GET ${BASE}/aggregated/instanceGroupManagers?maxResults=1&pageToken=p2`,
      ],
    );
    await assert.rejects(
      provider.listGroups(),
      (e: unknown) => e instanceof CloudError && e.code === 'Permanent' && /no project configured/.test(e.message),
    );
  });

  it('maps providerIDs both ways', () => {
    assert.equal(gceProviderID(PROJECT, ZONE, 'workers-aaaa'), `gce://${PROJECT}/${ZONE}/workers-aaaa`);
    assert.deepEqual(parseGceProviderID(`gce://${PROJECT}/${ZONE}/workers-aaaa`), {
      project: PROJECT,
      zone: ZONE,
      name: 'workers-aaaa',
    });
    for (const foreign of [
      'aws:///eu-central-1a/i-0123456789abcdef0',
      'sim://workers/i-0001',
      `gce://${PROJECT}/workers-aaaa`,
    ])
      assert.equal(parseGceProviderID(foreign), undefined, foreign);
  });

  it('createProvider builds it without configuration (Application Default Credentials on first call)', () => {
    assert.ok(createProvider({ provider: 'gcp' }) instanceof GcpProvider);
  });
});
