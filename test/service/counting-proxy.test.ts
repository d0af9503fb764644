import { strict as assert } from 'node:assert';
import { KubeConfig } from '@kubernetes/client-node';
import { countsOf, readablePath, seenSince, startCountingProxy, type ProxiedRequest } from './counting-proxy.js';

const request = (path: string, extra: Partial<ProxiedRequest> = {}): ProxiedRequest => ({
  method: 'GET',
  path,
  watch: /[?&]watch=true/.test(path),
  lease: path.includes('/apis/coordination.k8s.io/'),
  at: 1_700_000_000_000,
  ...extra,
});

describe('the counting proxy’s report of requests', () => {
  it('keeps how a list or watch was made and elides every other query value', () => {
    assert.equal(
      readablePath('/api/v1/pods?limit=500&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEi&resourceVersion=12'),
      '/api/v1/pods?limit=500&continue=…&resourceVersion=12',
    );
    assert.equal(
      readablePath('/api/v1/nodes?watch=true&resourceVersion=7&token=s3cr3t'),
      '/api/v1/nodes?watch=true&resourceVersion=7&token=…',
    );
    assert.equal(readablePath('/api/v1/namespaces/a/pods/b'), '/api/v1/namespaces/a/pods/b');
  });

  it('reports the requests after a mark, lease renewals left out, without bodies', () => {
    const log = [
      request('/api/v1/nodes?limit=500'),
      request('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/drydock', { method: 'PUT', body: '{}' }),
      request('/api/v1/pods?watch=true&resourceVersion=9', { status: 200 }),
      request('/api/v1/namespaces/default/events', { method: 'POST', body: '{"secret":"x"}', status: 201 }),
    ];
    const mark = countsOf(log.slice(0, 1)).total;
    assert.deepEqual(seenSince(log, mark), [
      {
        method: 'GET',
        path: '/api/v1/pods?watch=true&resourceVersion=9',
        watch: true,
        at: 1_700_000_000_000,
        status: 200,
      },
      { method: 'POST', path: '/api/v1/namespaces/default/events', watch: false, at: 1_700_000_000_000, status: 201 },
    ]);
    assert.deepEqual(countsOf(log), { requests: 3, leases: 1, total: 4 });
  });
});

describe('the counting proxy answering writes itself', () => {
  it('answers what it is told to with 201 and the body, records it, and forwards the rest', async () => {
    const kc = new KubeConfig();
    // Nothing listens upstream: only a forwarded request can fail.
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const proxy = await startCountingProxy(kc, {
      answerLocally: (method, path) => method === 'POST' && path.endsWith('/events'),
    });
    try {
      const body = JSON.stringify({ kind: 'Event', reason: 'DrydockCordon' });
      const event = await fetch(`${proxy.url}/api/v1/namespaces/default/events`, { method: 'POST', body });
      assert.equal(event.status, 201);
      assert.equal(await event.text(), body);
      const forwarded = await fetch(`${proxy.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: '{}' });
      assert.equal(forwarded.status, 502);
      assert.deepEqual(
        proxy.requests.map((r) => [r.method, r.path, r.status, r.body]),
        [
          ['POST', '/api/v1/namespaces/default/events', 201, body],
          ['POST', '/api/v1/namespaces/default/pods', undefined, '{}'],
        ],
      );
    } finally {
      await proxy.close();
    }
  });
});
