import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import Fastify from 'fastify';
import {
  coalesce,
  GitSource,
  Sync,
  verifyWebhook,
  webhookPlugin,
  type WebhookHeaders,
  type WebhookVerdict,
} from '../../src/source/index.js';
import { TEST_USER } from '../support/git-server.js';
import { useFixture, type Fixture } from './fixture.js';

const SECRET = 'hook-secret-42';
const BODY = Buffer.from('{"ref":"refs/heads/main"}');
const sig = (body: Buffer, secret = SECRET): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('webhook verification', () => {
  const cases: Array<{ name: string; headers: WebhookHeaders; body?: Buffer; want: WebhookVerdict }> = [
    {
      name: 'GitHub, valid',
      headers: { 'x-hub-signature-256': sig(BODY), 'x-github-event': 'push' },
      want: { ok: true, provider: 'github', event: 'push' },
    },
    {
      name: 'GitHub, other secret',
      headers: { 'x-hub-signature-256': sig(BODY, 'nope') },
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    {
      name: 'GitHub, body changed',
      headers: { 'x-hub-signature-256': sig(BODY) },
      body: Buffer.from('{"ref":"x"}'),
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    {
      name: 'GitHub, not hex',
      headers: { 'x-hub-signature-256': 'sha256=zz' },
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    {
      name: 'GitHub, sha1 only',
      headers: { 'x-hub-signature-256': `sha1=${'0'.repeat(40)}` },
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    {
      name: 'GitLab, valid',
      headers: { 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Push Hook' },
      want: { ok: true, provider: 'gitlab', event: 'Push Hook' },
    },
    {
      name: 'GitLab, wrong',
      headers: { 'x-gitlab-token': 'hook-secret-43' },
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    {
      name: 'GitLab, empty',
      headers: { 'x-gitlab-token': '' },
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    { name: 'generic, valid', headers: { 'x-drydock-signature': sig(BODY) }, want: { ok: true, provider: 'generic' } },
    {
      name: 'generic, wrong',
      headers: { 'x-drydock-signature': sig(BODY, 'x') },
      want: { ok: false, status: 401, reason: 'bad-signature' },
    },
    {
      name: 'no signature at all',
      headers: { 'content-type': 'application/json' },
      want: { ok: false, status: 401, reason: 'missing-signature' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(verifyWebhook(c.headers, c.body ?? BODY, SECRET), c.want);
    });
  }
});

describe('coalesce: one run in flight, at most one queued', () => {
  it('turns a burst of triggers during a run into exactly one more run', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const c = coalesce(async () => {
      runs += 1;
      await new Promise<void>((r) => {
        release = r;
      });
    });
    const first = c.trigger();
    const burst = [c.trigger(), c.trigger(), c.trigger()];
    assert.equal(runs, 1);
    release();
    await first;
    await new Promise((r) => setImmediate(r));
    assert.equal(runs, 2);
    release();
    await Promise.all(burst);
    assert.equal(runs, 2);
    assert.equal(c.busy, false);
  });
});

describe('webhook route against git http-backend', function () {
  this.timeout(30_000);
  let fx: Fixture;
  useFixture((f) => (fx = f));

  it('fetches on a valid signature; answers 401 and fetches nothing otherwise', async () => {
    await fx.commit({ 'a.yaml': 'a\n' }, 1);
    const sync = new Sync({
      source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 }),
      load: async (tree) => ({ ok: false, files: (await tree.list()).map((e) => e.path), errors: [] }),
    });
    await sync.run();
    const fetches: Promise<void>[] = [];
    const runner = coalesce(async () => {
      await sync.run();
    });
    const app = Fastify();
    await app.register(webhookPlugin, { secret: SECRET, trigger: () => fetches.push(runner.trigger()) });
    const tip = await fx.commit({ 'b.yaml': 'b\n' }, 2);
    const served = fx.server.requestCount;

    for (const headers of [
      {},
      { 'x-hub-signature-256': sig(BODY, 'wrong') },
      { 'x-gitlab-token': 'wrong' },
      { 'x-drydock-signature': sig(Buffer.from('other')) },
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/webhook',
        headers: { 'content-type': 'application/json', ...headers },
        payload: BODY,
      });
      assert.equal(res.statusCode, 401);
    }
    assert.equal(fetches.length, 0);
    assert.equal(fx.server.requestCount, served, 'no request reached the Git server');

    const ok = await app.inject({
      method: 'POST',
      url: '/webhook',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig(BODY) },
      payload: BODY,
    });
    assert.equal(ok.statusCode, 202);
    await Promise.all(fetches);
    assert.equal(sync.commits.newest?.commit, tip);
    await app.close();
  });
});
