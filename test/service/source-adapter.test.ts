import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { GitSource, readStatusFiles, StatusWriter, Sync } from '../../src/source/index.js';
import { desiredSourceFromSync, reportFromSnapshot, statusBranchSink } from '../../src/service/source-adapter.js';
import type { StatusSnapshot } from '../../src/service/status.js';
import { TEST_USER } from '../support/git-server.js';
import { useFixture, type Fixture } from '../source/fixture.js';

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: test\n';

const snapshot = (sourceCommit: string): StatusSnapshot => ({
  cluster: 'test',
  sourceCommit,
  loadErrors: [],
  specs: [
    {
      spec: { kind: 'NodeImage', name: 'worker' },
      revision: 'r1',
      phase: 'Waiting',
      progress: { done: 1, total: 3 },
      failures: 0,
      conditions: [],
      nodes: [{ node: 'n1', phase: 'UpToDate' }],
      pending: [],
      waitingFor: 'window weeknights opens 22:00',
    },
  ],
  waits: [],
  problems: [{ source: 'cloud', code: 'throttled', message: 'rate limited' }],
});

describe('the Git source plugged into the service', function () {
  this.timeout(30_000);
  let fx: Fixture;
  useFixture((f) => (fx = f));

  const source = (): GitSource =>
    new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, path: 'specs', retries: 0 });

  it('after a restart on a refused tip, the first sync knows both: the restored commit in force and the refused tip', async () => {
    const good = await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    const src = source();
    await statusBranchSink(new StatusWriter({ source: src, cluster: 'test' })).write(snapshot(good));
    const bad = await fx.commit({ 'specs/x.yaml': 'kind: [\n' }, 2);

    const fresh = source();
    const writer = new StatusWriter({ source: fresh, cluster: 'test' });
    const sync = new Sync({ source: fresh, restore: async () => (await writer.readApplied())?.sourceCommit });
    const desired = desiredSourceFromSync({ sync });
    const first = await desired.sync();
    assert.equal(first.commit, bad);
    assert.equal(first.load.ok, false);
    assert.equal(desired.commits.inForce?.commit, good);
    assert.equal(desired.commits, sync.commits, "the service reads Sync's own record, not a copy");
    const again = await desired.sync();
    assert.equal(again.commit, bad);
    assert.equal(desired.commits.inForce?.commit, good);
  });

  it('throws the typed fetch error when the remote is gone', async () => {
    await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    const desired = desiredSourceFromSync({ sync: new Sync({ source: source() }) });
    await desired.sync();
    await fx.server.stop();
    await assert.rejects(desired.sync(), { name: 'GitSourceError', code: 'unreachable' });
  });

  it('offers a webhook route only with a secret, and it triggers on a valid signature', async () => {
    assert.equal(desiredSourceFromSync({ sync: new Sync({ source: source() }) }).webhook, undefined);
    const desired = desiredSourceFromSync({ sync: new Sync({ source: source() }), webhookSecret: 's3cret' });
    let notified = 0;
    const route = desired.webhook?.(() => void (notified += 1));
    assert.ok(route);
    assert.equal(route.path, '/webhook');
    const body = Buffer.from('{}');
    assert.equal((await route.handle({ 'x-drydock-signature': 'sha256=00' }, body)).status, 401);
    const sig = `sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`;
    assert.equal((await route.handle({ 'x-drydock-signature': sig }, body)).status, 202);
    assert.equal(notified, 1);
  });

  it('maps the service snapshot onto the status report', async () => {
    const good = await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    assert.deepEqual(reportFromSnapshot(snapshot(good)), {
      cluster: 'test',
      sourceCommit: good,
      specs: snapshot(good).specs,
      notes: ['cloud: rate limited'],
    });
    const src = source();
    const writer = new StatusWriter({ source: src, cluster: 'test' });
    await statusBranchSink(writer).write(snapshot(good));
    const tip = await src.resolveOwn('drydock/status');
    assert.ok(tip);
    assert.match(
      (await readStatusFiles(src, tip)).get('README.md') ?? '',
      /\| Waiting \| 1\/3 \| {2}\| window weeknights opens 22:00 \|/,
    );
  });
});
