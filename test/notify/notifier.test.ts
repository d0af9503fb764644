/**
 * The notifier against local HTTP receivers: one message per event and receiver, delivered in
 * the background with retries, a hung receiver holding up nobody, a full queue dropping its
 * oldest, the sent-log keeping a restart from resending, and no secret in any message or log.
 */
import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { createMetrics, type ServiceMetrics } from '../../src/service/metrics.js';
import { Notifier } from '../../src/notify/notifier.js';
import { eventId } from '../../src/notify/events.js';
import { memorySentLog, type SentLog } from '../../src/notify/sent-log.js';
import type { NotificationsConfig, NotifyReceiver } from '../../src/spec/model.js';
import type { SpecStatus } from '../../src/plan/types.js';
import { startReceiver, type Receiver } from './receiver.js';
import { approvalWait, snapshot, spec } from './support.js';

const CANARY_TOKEN = 'T0KEN-canary-3f9a1c';
const CANARY_KEY = 'hmac-canary-b71e22';

describe('notifications: the notifier', function () {
  this.timeout(20_000);
  let dir: string;
  let receivers: Receiver[] = [];
  let logs: string[];
  let metrics: ServiceMetrics;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-notify-'));
    logs = [];
    metrics = createMetrics({ defaultMetrics: false });
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
    rmSync(dir, { recursive: true, force: true });
  });

  async function receiver(name: string, type: NotifyReceiver['type'], events: NotifyReceiver['events']) {
    const r = await startReceiver();
    receivers.push(r);
    // The address carries a token in its path, as Slack's and Teams' do.
    writeFileSync(path.join(dir, `${name}-url`), `${r.url}/hooks/${CANARY_TOKEN}\n`);
    const spec: NotifyReceiver = {
      name,
      type,
      urlFrom: { file: `${name}-url` },
      ...(type === 'webhook' ? { secretFrom: { env: 'DRYDOCK_NOTIFY_KEY' } } : {}),
      events,
    };
    return { r, spec };
  }

  function notifier(
    sentLog: SentLog = memorySentLog([]),
    over: { attemptTimeoutMs?: number; queueLimit?: number; history?: () => readonly SpecStatus[] } = {},
  ) {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    return new Notifier({
      logger: pino({ level: 'debug' }, sink),
      counter: metrics.notifications,
      sentLog,
      secretsDir: dir,
      env: { DRYDOCK_NOTIFY_KEY: CANARY_KEY },
      minBackoffMs: 20,
      maxBackoffMs: 50,
      attemptTimeoutMs: over.attemptTimeoutMs ?? 2_000,
      ...(over.queueLimit !== undefined ? { queueLimit: over.queueLimit } : {}),
      ...(over.history !== undefined ? { history: over.history } : {}),
    });
  }

  const rollout = [
    snapshot([
      spec('w', 'Progressing', [
        ['a', 'Draining'],
        ['b', 'Outdated'],
      ]),
    ]),
    snapshot([
      spec('w', 'Progressing', [
        ['a', 'Failed'],
        ['b', 'Outdated'],
      ]),
    ]),
    snapshot([
      spec('w', 'Progressing', [
        ['a', 'Failed'],
        ['b', 'Done'],
      ]),
    ]),
    snapshot([
      spec('w', 'Complete', [
        ['a', 'Failed'],
        ['b', 'Done'],
      ]),
    ]),
  ];
  const events = (r: Receiver): string[] =>
    r.accepted().map((b) => {
      const p = JSON.parse(b) as { event?: string; text?: string };
      return p.event ?? p.text ?? '';
    });

  async function counter(outcome: string, receiverName: string): Promise<number> {
    const m = await metrics.notifications.get();
    return m.values.find((v) => v.labels.outcome === outcome && v.labels.receiver === receiverName)?.value ?? 0;
  }

  it('one message per event and receiver, each receiver only the events it wants, signed where it verifies', async () => {
    const hook = await receiver('hook', 'webhook', ['started', 'nodeFailed', 'complete']);
    const slack = await receiver('chat', 'slack', ['complete']);
    const config: NotificationsConfig = { receivers: [hook.spec, slack.spec] };
    const n = notifier();
    for (const s of rollout) n.observe({ snapshot: s, config, branch: 'drydock/status', commit: 'c0ffee' });
    await n.idle();
    assert.deepEqual(events(hook.r), ['started', 'nodeFailed', 'complete']);
    assert.deepEqual(events(slack.r), [
      '[prod] NodeImage/w: rollout complete (status commit c0ffee on drydock/status)',
    ]);
    for (const got of hook.r.received) {
      const want = 'sha256=' + createHmac('sha256', CANARY_KEY).update(got.body).digest('hex');
      assert.equal(got.headers['x-drydock-signature'], want);
      assert.match(String(got.headers['x-drydock-event-id']), /^[0-9a-f]{24}$/);
      assert.equal(got.path, `/hooks/${CANARY_TOKEN}`);
    }
    assert.equal(slack.r.received[0]?.headers['x-drydock-signature'], undefined);
    assert.equal(await counter('sent', 'hook'), 3);
    // No secret in any message or log line.
    const everything = [...hook.r.received, ...slack.r.received].map((r) => r.body).join('\n') + logs.join('\n');
    assert.ok(!everything.includes(CANARY_TOKEN), 'the address token leaked');
    assert.ok(!everything.includes(CANARY_KEY), 'the signing key leaked');
  });

  it('a receiver that answers 500, then recovers, gets each message once', async () => {
    const hook = await receiver('hook', 'webhook', ['started', 'complete']);
    hook.r.failNext(3);
    const n = notifier();
    const config = { receivers: [hook.spec] };
    for (const s of rollout) n.observe({ snapshot: s, config });
    await n.idle();
    assert.deepEqual(events(hook.r), ['started', 'complete']);
    assert.equal(hook.r.received.filter((r) => r.status === 500).length, 3);
    assert.equal(await counter('retried', 'hook'), 3);
    assert.ok(logs.some((l) => l.includes('"reason":"HTTP 500"')));
  });

  it('a receiver that hangs holds up no other, and observe never waits', async () => {
    const stuck = await receiver('stuck', 'webhook', ['started', 'complete']);
    const fine = await receiver('fine', 'webhook', ['started', 'complete']);
    stuck.r.hang(true);
    const n = notifier(memorySentLog([]), { attemptTimeoutMs: 60_000 });
    const config = { receivers: [stuck.spec, fine.spec] };
    const t0 = performance.now();
    for (const s of rollout) n.observe({ snapshot: s, config });
    assert.ok(performance.now() - t0 < 50, 'observe returned at once');
    const deadline = Date.now() + 5_000;
    while (fine.r.accepted().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(events(fine.r), ['started', 'complete']);
    assert.equal(stuck.r.received.length, 1, 'the hung receiver is still on its first message');
    await n.stop();
  });

  it('a full queue drops its oldest message, counted and logged', async () => {
    const stuck = await receiver('stuck', 'webhook', ['nodeFailed']);
    stuck.r.hang(true);
    const n = notifier(memorySentLog([]), { attemptTimeoutMs: 60_000, queueLimit: 2 });
    const nodes = ['a', 'b', 'c', 'd', 'e'].map((x): [string, 'Failed'] => [x, 'Failed']);
    n.observe({ snapshot: snapshot([spec('w', 'Progressing', nodes)]), config: { receivers: [stuck.spec] } });
    const deadline = Date.now() + 5_000;
    while ((await counter('dropped', 'stuck')) < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    // a is in flight; b, c, d, e queued behind it in a queue of 2: b and c dropped.
    assert.equal(await counter('dropped', 'stuck'), 2);
    assert.equal(logs.filter((l) => l.includes('notification queue full; oldest message dropped')).length, 2);
    await n.stop();
  });

  it('a restart resends nothing the sent-log has, and sends what it lacks', async () => {
    const hook = await receiver('hook', 'webhook', ['started', 'complete']);
    const config = { receivers: [hook.spec] };
    const log = memorySentLog([]);
    const first = notifier(log);
    first.observe({ snapshot: rollout[0]!, config });
    await first.idle();
    await first.stop();
    // Down while the rollout completed; the new process sees the complete status first.
    const second = notifier(log);
    second.observe({ snapshot: rollout[3]!, config });
    second.observe({ snapshot: rollout[3]!, config });
    await second.idle();
    assert.deepEqual(events(hook.r), ['started', 'complete']);
  });

  it('with no sent-log yet, what the status already shows is history: nothing sent, all recorded', async () => {
    const hook = await receiver('hook', 'webhook', ['started', 'nodeFailed', 'complete']);
    const log = memorySentLog();
    const n = notifier(log);
    n.observe({ snapshot: rollout[1]!, config: { receivers: [hook.spec] } });
    n.observe({ snapshot: rollout[3]!, config: { receivers: [hook.spec] } });
    await n.idle();
    assert.deepEqual(events(hook.r), ['complete']);
    assert.equal(log.ids?.length, 3);
  });

  it('killed after its first round acted, before any status was written: the next leader still sends the start', async () => {
    const hook = await receiver('hook', 'webhook', ['started', 'nodeFailed', 'complete']);
    const config = { receivers: [hook.spec] };
    const log = memorySentLog();
    // Before the round: one spec long complete (history), one about to start.
    const done = spec('old', 'Complete', [['c', 'Done']], { revision: 'rev0' });
    const before = snapshot([
      done,
      spec('w', 'Progressing', [
        ['a', 'Outdated'],
        ['b', 'Outdated'],
      ]),
    ]);
    const first = notifier(log);
    await first.beforeActing(config, before);
    // The round drains a, and the process is killed before its status is written.
    await first.stop();
    assert.deepEqual(
      log.ids,
      [eventId(done.spec, 'rev0', 'started'), eventId(done.spec, 'rev0', 'complete')],
      'the history, written before the round acted',
    );
    const second = notifier(log);
    second.observe({ snapshot: snapshot([done, ...rollout[0]!.specs]), config });
    second.observe({ snapshot: snapshot([done, ...rollout[3]!.specs]), config });
    await second.idle();
    assert.deepEqual(events(hook.r), ['started', 'nodeFailed', 'complete']);
  });

  it('with no sent-log yet, what the status branch held before is history; a wait the round found is news', async () => {
    const hook = await receiver('hook', 'webhook', ['started', 'approval', 'complete']);
    const config = { receivers: [hook.spec] };
    const log = memorySentLog();
    const done = spec('old', 'Complete', [['c', 'Done']], { revision: 'rev0' });
    const asked = approvalWait('held', 'start');
    const held = spec('held', 'Waiting', [['d', 'Outdated']], asked.approval ? { approvalWanted: asked.approval } : {});
    const n = notifier(log, { history: () => [done, held] });
    // The round: a new spec waits for its approval, another is about to start.
    const before = snapshot(
      [done, held, spec('w', 'Waiting', [['a', 'Outdated']]), spec('v', 'Progressing', [['b', 'Outdated']])],
      [asked, approvalWait('w', 'start')],
    );
    await n.beforeActing(config, before);
    n.observe({ snapshot: before, config });
    await n.idle();
    assert.deepEqual(
      hook.r.accepted().map((b) => (JSON.parse(b) as { summary: string }).summary),
      ['NodeImage/w: waiting for an approval (start)'],
    );
    assert.ok(log.ids?.includes(eventId(done.spec, 'rev0', 'complete')), 'the branch held it: history');
  });

  it('a sent-log already there is kept as it is by the round about to act', async () => {
    const hook = await receiver('hook', 'webhook', ['started']);
    const log = memorySentLog(['sent-before']);
    const n = notifier(log);
    await n.beforeActing({ receivers: [hook.spec] }, rollout[0]!);
    n.observe({ snapshot: rollout[0]!, config: { receivers: [hook.spec] } });
    await n.idle();
    assert.deepEqual(events(hook.r), ['started']);
    assert.equal(log.ids?.[0], 'sent-before');
  });

  it('reads nothing and sends nothing while drydock.yaml names no receiver', async () => {
    let loads = 0;
    const log = { load: () => ((loads += 1), Promise.resolve([])), save: () => Promise.resolve() };
    const n = notifier(log);
    await n.beforeActing(undefined, rollout[0]!);
    for (const s of rollout) n.observe({ snapshot: s, config: undefined });
    await n.idle();
    assert.equal(loads, 0);
  });

  it('a receiver whose secret cannot be read is given up on, saying where without the value', async () => {
    const hook = await receiver('hook', 'webhook', ['started']);
    const n = new Notifier({
      logger: pino({ level: 'debug' }, new Writable({ write: (c: Buffer, _e, d) => (logs.push(c.toString()), d()) })),
      counter: metrics.notifications,
      sentLog: memorySentLog([]),
      secretsDir: dir,
      env: {},
      retries: 1,
      minBackoffMs: 10,
    });
    n.observe({ snapshot: rollout[0]!, config: { receivers: [hook.spec] } });
    await n.idle();
    assert.equal(hook.r.received.length, 0);
    assert.equal(await counter('failed', 'hook'), 1);
    assert.ok(logs.some((l) => l.includes('variable DRYDOCK_NOTIFY_KEY is not set')));
  });
});
