/**
 * Hostile HTTP at the service's webhook route, over real sockets: every request that is not a
 * fresh, signed JSON push is refused with its own status code, and none of them makes drydock
 * fetch (counted on the real Git server). The service stays healthy afterwards.
 */
import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { coalesce, GitSource, Sync, webhookHandler } from '../../src/source/index.js';
import { startHttp, type HttpServer } from '../../src/service/http.js';
import { TEST_USER } from '../support/git-server.js';
import { useFixture, type Fixture } from '../source/fixture.js';

const SECRET = 'hostile-hook-secret';
const PUSH = Buffer.from('{"ref":"refs/heads/main","after":"0000000000000000000000000000000000000000"}');
const sign = (body: Buffer, secret = SECRET): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const REQUEST_TIMEOUT_MS = 1000;

/** POSTs over a fresh connection; resolves to the status (the server may close before the body is sent). */
function post(url: string, headers: http.OutgoingHttpHeaders, body: Buffer, chunked = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/webhook`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...headers },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err) => (req.writableEnded ? undefined : reject(err)));
    if (!chunked) req.setHeader('content-length', body.length);
    req.end(body);
  });
}

/**
 * A slow client: sends `head` at once, then one byte of `rest` every 200 ms. Resolves to what
 * the server answered and how long it held the connection.
 */
function slowClient(url: string, head: string, rest: string): Promise<{ answer: string; ms: number }> {
  const { port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    let i = 0;
    const drip = setInterval(() => {
      if (i < rest.length && !socket.destroyed) socket.write(rest[i++] ?? '');
    }, 200);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ answer, ms: Date.now() - started });
    });
    socket.write(head);
  });
}

describe('webhook: hostile HTTP', function () {
  this.timeout(60_000);
  let fx: Fixture;
  let server: HttpServer;
  let triggers = 0;
  let fetched: Promise<void>[] = [];
  let served = 0;
  useFixture((f) => (fx = f));

  beforeEach(async () => {
    await fx.commit({ 'a.yaml': 'a: 1\n' }, 1);
    const sync = new Sync({
      source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 }),
      load: async (tree) => ({ ok: false, files: (await tree.list()).map((e) => e.path), errors: [] }),
    });
    await sync.run();
    const runner = coalesce(async () => {
      await sync.run();
    });
    triggers = 0;
    fetched = [];
    server = await startHttp({
      listen: '127.0.0.1:0',
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
      healthy: () => ({ ok: true }),
      readiness: () => ({ ready: true, reasons: [] }),
      webhook: webhookHandler({
        secret: SECRET,
        trigger: () => {
          triggers += 1;
          fetched.push(runner.trigger());
        },
      }),
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    served = fx.server.requestCount;
  });
  afterEach(async () => {
    await Promise.all(fetched);
    await server.close();
  });

  function assertNoFetch(): void {
    assert.equal(triggers, 0, 'no fetch was triggered');
    assert.equal(fx.server.requestCount, served, 'no request reached the Git server');
  }

  it('refuses missing and wrong signatures with 401', async () => {
    assert.equal(await post(server.url, {}, PUSH), 401);
    assert.equal(await post(server.url, { 'x-hub-signature-256': sign(PUSH, 'guess') }, PUSH), 401);
    assert.equal(await post(server.url, { 'x-hub-signature-256': 'sha256=' + '0'.repeat(64) }, PUSH), 401);
    assert.equal(await post(server.url, { 'x-gitlab-token': 'guess' }, PUSH), 401);
    assert.equal(await post(server.url, { 'x-drydock-signature': sign(Buffer.from('other body')) }, PUSH), 401);
    assertNoFetch();
  });

  it('refuses a signed body that is not a JSON object with 400', async () => {
    for (const text of ['{"ref": "refs/heads/main"', 'not json', '[1,2]', '"a string"', '', '\u0000\u0001']) {
      const body = Buffer.from(text);
      assert.equal(await post(server.url, { 'x-hub-signature-256': sign(body) }, body), 400, JSON.stringify(text));
    }
    const form = Buffer.from('nopayload=1');
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature-256': sign(form) };
    assert.equal(await post(server.url, formHeaders, form), 400);
    assertNoFetch();
  });

  it('refuses an oversized body with 413, announced or chunked, before checking it', async () => {
    const huge = Buffer.alloc(6 * 1024 * 1024, 0x20);
    assert.equal(await post(server.url, { 'x-hub-signature-256': sign(huge) }, huge), 413);
    assert.equal(await post(server.url, { 'x-hub-signature-256': sign(huge) }, huge, true), 413);
    assertNoFetch();
  });

  it('cuts off slow clients (headers or body dripping in) with 408 within the request timeout', async () => {
    const slowHeaders = slowClient(server.url, 'POST /webhook HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(100));
    const slowBody = slowClient(
      server.url,
      `POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: ${sign(PUSH)}\r\nContent-Length: ${PUSH.length}\r\n\r\n`,
      PUSH.toString(),
    );
    for (const r of await Promise.all([slowHeaders, slowBody])) {
      assert.match(r.answer, /^HTTP\/1\.1 408/);
      // Node checks deadlines once per interval (at most 1 s here), so allow a few of them.
      assert.ok(r.ms < REQUEST_TIMEOUT_MS + 3000, `held for ${r.ms} ms`);
    }
    assertNoFetch();
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200, 'still serving after the slow clients');
  });

  it('accepts a GitHub delivery once and refuses it replayed with 409, fetching once', async () => {
    const headers = {
      'x-github-event': 'push',
      'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'x-hub-signature-256': sign(PUSH),
    };
    assert.equal(await post(server.url, headers, PUSH), 202);
    await Promise.all(fetched);
    const afterFirst = fx.server.requestCount;
    assert.equal(triggers, 1);
    assert.ok(afterFirst > served, 'the accepted delivery fetched');
    assert.equal(await post(server.url, headers, PUSH), 409);
    assert.equal(await post(server.url, headers, PUSH), 409);
    assert.equal(triggers, 1, 'a replay triggers nothing');
    assert.equal(fx.server.requestCount, afterFirst, 'a replay fetches nothing');
    // Another delivery id is another notification (the signature cannot tell them apart).
    assert.equal(await post(server.url, { ...headers, 'x-github-delivery': 'another-delivery' }, PUSH), 202);
    assert.equal(triggers, 2);
  });

  it('refuses a delivery id no Git host sends (over 128 characters) with 400', async () => {
    const headers = { 'x-github-delivery': 'd'.repeat(129), 'x-hub-signature-256': sign(PUSH) };
    assert.equal(await post(server.url, headers, PUSH), 400);
    assertNoFetch();
  });
});
