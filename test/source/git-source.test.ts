import { strict as assert } from 'node:assert';
import { symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { GitSource, GitSourceError } from '../../src/source/index.js';
import { repoPaused, specPaused } from '../../src/source/pauses.js';
import { git, gitEnv, TEST_USER, withUser } from '../support/git-server.js';
import { useFixture, type Fixture } from './fixture.js';

describe('GitSource against git http-backend', function () {
  this.timeout(30_000);
  let fx: Fixture;
  useFixture((f) => (fx = f));

  const open = (extra: Partial<ConstructorParameters<typeof GitSource>[0]> = {}): GitSource =>
    new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0, ...extra });

  it('fetches the branch although the remote HEAD names a missing branch, then picks up new commits', async () => {
    const first = await fx.commit({ 'specs/a.yaml': 'a: 1\n' }, 1);
    const src = open();
    assert.deepEqual(await src.fetch(), { commit: first, changed: true, rewritten: false });
    assert.deepEqual(await src.fetch(), { commit: first, previous: first, changed: false, rewritten: false });
    const second = await fx.commit({ 'specs/b.yaml': 'b: 2\n' }, 2);
    assert.deepEqual(await src.fetch(), { commit: second, previous: first, changed: true, rewritten: false });
  });

  it('reuses the cache clone across restarts: the old tip is known before the first fetch', async () => {
    const first = await fx.commit({ 'a.yaml': 'a: 1\n' }, 1);
    await open().fetch();
    const second = await fx.commit({ 'a.yaml': 'a: 2\n' }, 2);
    assert.deepEqual(await open().fetch(), { commit: second, previous: first, changed: true, rewritten: false });
  });

  it('follows a force-push to the new tip and says history was rewritten', async () => {
    await fx.commit({ 'a.yaml': 'a: 1\n' }, 1);
    const doomed = await fx.commit({ 'a.yaml': 'a: 2\n' }, 2);
    const src = open();
    await src.fetch();
    await git(fx.work, ['reset', '-q', '--hard', 'HEAD~1']);
    const rewritten = await fx.commit({ 'a.yaml': 'a: 3\n' }, 3, { force: true });
    assert.deepEqual(await src.fetch(), { commit: rewritten, previous: doomed, changed: true, rewritten: true });
  });

  it('reads a commit tree rooted at --path: files, directories, symlinks reported and not followed', async () => {
    await fx.commit({ 'specs/a.yaml': 'a: 1\n', 'specs/sub/b.yaml': 'bb: 22\n', 'outside.yaml': 'x: 1\n' }, 1);
    symlinkSync('../outside.yaml', path.join(fx.work, 'specs', 'link.yaml'));
    const tip = await fx.commit({}, 2);
    const src = open({ path: 'specs' });
    await src.fetch();
    const tree = src.readTree(tip);
    assert.deepEqual(await tree.list(), [
      { path: 'a.yaml', kind: 'file', size: 5 },
      { path: 'link.yaml', kind: 'symlink', size: '../outside.yaml'.length },
      { path: 'sub', kind: 'dir', size: 0 },
      { path: 'sub/b.yaml', kind: 'file', size: 7 },
    ]);
    assert.equal(Buffer.from(await tree.read('sub/b.yaml')).toString(), 'bb: 22\n');
    await assert.rejects(tree.read('link.yaml'), { name: 'SpecSourceError', code: 'ReadFailed' });
    await assert.rejects(tree.readDir('nope'), { code: 'NotFound' });
    await assert.rejects(tree.readDir('a.yaml'), { code: 'NotADirectory' });
    assert.deepEqual((await tree.readFile('a.yaml', 2)).length, 3);
  });

  it('names the commit that gave a file its content, and its author', async () => {
    const added = await fx.commit({ 'approvals/x.yaml': 'image: v1\n' }, 1, {
      author: ['Grace Hopper', 'grace@example.com'],
    });
    await fx.commit({ 'other.yaml': 'o: 1\n' }, 2, { author: ['Bob', 'bob@example.com'] });
    const src = open();
    const { commit } = await src.fetch();
    assert.deepEqual(await src.authorOf('approvals/x.yaml', commit), {
      commit: added,
      name: 'Grace Hopper',
      email: 'grace@example.com',
      at: '2024-01-01T00:01:00.000Z',
    });
    const edited = await fx.commit({ 'approvals/x.yaml': 'image: v2\n' }, 3, { author: ['Bob', 'bob@example.com'] });
    await src.fetch();
    assert.equal((await src.authorOf('approvals/x.yaml', edited))?.name, 'Bob');
    assert.equal(await src.authorOf('approvals/none.yaml', edited), undefined);
    assert.equal(await src.authorOf('approvals/x.yaml', edited, 0), undefined);
  });

  it('names who paused a spec: the commit that set spec.paused, not a later edit beside it; none once resumed', async () => {
    const doc = (image: string, paused: boolean) =>
      `apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: workers}\nspec:\n  image: ${image}\n${paused ? '  paused: true\n' : ''}`;
    const other =
      'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: other}\nspec: {image: x, paused: true}\n';
    await fx.commit({ 'specs/i.yaml': doc('v1', false) }, 1, { author: ['Bob', 'bob@example.com'] });
    const paused = await fx.commit({ 'specs/i.yaml': doc('v1', true) }, 2, { author: ['Alice', 'alice@example.com'] });
    // A later edit of the same file (and another spec's pause beside it) leave the pause Alice's.
    const edited = await fx.commit({ 'specs/i.yaml': `${doc('v2', true)}---\n${other}` }, 3, {
      author: ['Bob', 'bob@example.com'],
    });
    const src = open({ path: 'specs' });
    await src.fetch();
    const holds = specPaused('NodeImage', 'workers');
    assert.deepEqual(await src.setBy('i.yaml', edited, holds), {
      commit: paused,
      name: 'Alice',
      email: 'alice@example.com',
      at: '2024-01-01T00:02:00.000Z',
    });
    assert.equal((await src.setBy('i.yaml', edited, specPaused('NodeImage', 'other')))?.commit, edited);
    const resumed = await fx.commit({ 'specs/i.yaml': doc('v2', false) }, 4);
    await src.fetch();
    assert.equal(await src.setBy('i.yaml', resumed, holds), undefined);
    assert.equal(repoPaused('apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\npaused: true\n'), true);
    assert.equal(repoPaused('apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\n'), false);
  });

  const failures: Array<{ name: string; code: string; make: (fx: Fixture) => GitSource | Promise<GitSource> }> = [
    {
      name: 'wrong password',
      code: 'auth',
      make: (f) =>
        new GitSource({
          repo: f.url,
          credentials: { username: 'alice', password: 'wrong-password-123' },
          cacheRoot: f.cacheRoot,
          retries: 0,
        }),
    },
    {
      name: 'no credentials',
      code: 'auth',
      make: (f) => new GitSource({ repo: f.url, cacheRoot: f.cacheRoot, retries: 0 }),
    },
    {
      name: 'missing branch',
      code: 'branch-missing',
      make: (f) =>
        new GitSource({ repo: f.url, branch: 'gone', credentials: TEST_USER, cacheRoot: f.cacheRoot, retries: 0 }),
    },
    {
      name: 'no repository at the URL',
      code: 'unreachable',
      make: (f) =>
        new GitSource({
          repo: f.server.repoUrl('nothing.git'),
          credentials: TEST_USER,
          cacheRoot: f.cacheRoot,
          retries: 0,
        }),
    },
    {
      name: 'stopped server, after retries',
      code: 'unreachable',
      make: async (f) => {
        const s = new GitSource({
          repo: f.url,
          credentials: TEST_USER,
          cacheRoot: f.cacheRoot,
          retries: 2,
          retryDelayMs: 10,
        });
        await f.server.stop();
        return s;
      },
    },
  ];
  for (const t of failures) {
    it(`fails typed, without secrets: ${t.name} → ${t.code}`, async () => {
      await fx.commit({ 'a.yaml': 'a: 1\n' }, 1);
      const src = await t.make(fx);
      const err: unknown = await src.fetch().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof GitSourceError, `expected a GitSourceError, got ${String(err)}`);
      assert.equal(err.code, t.code);
      const shown = JSON.stringify({ message: err.message, data: err.data, json: err.toJSON() });
      for (const secret of [
        TEST_USER.password,
        'wrong-password-123',
        Buffer.from(`alice:${TEST_USER.password}`).toString('base64'),
      ]) {
        assert.ok(!shown.includes(secret), `secret leaked: ${shown}`);
      }
    });
  }

  it('gives up on a server that accepts and never answers, as unreachable', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const address = silent.address();
    assert.ok(address !== null && typeof address === 'object');
    const src = new GitSource({
      repo: `http://127.0.0.1:${address.port}/r.git`,
      cacheRoot: fx.cacheRoot,
      retries: 0,
      idleTimeoutMs: 300,
    });
    await assert.rejects(src.fetch(), { name: 'GitSourceError', code: 'unreachable' });
    silent.closeAllConnections();
    silent.close();
  });

  it('takes credentials out of the URL and never shows them', async () => {
    const tip = await fx.commit({ 'a.yaml': 'a: 1\n' }, 1);
    const src = new GitSource({ repo: withUser(fx.url), cacheRoot: fx.cacheRoot, retries: 0 });
    assert.equal(src.display, fx.url);
    assert.equal((await src.fetch()).commit, tip);
    const bad = new GitSource({
      repo: withUser(fx.url, { username: 'alice', password: 'leaky-secret' }),
      cacheRoot: fx.cacheRoot,
      retries: 0,
    });
    const err = await bad.fetch().catch((e: unknown) => e);
    assert.ok(err instanceof GitSourceError);
    assert.equal(err.code, 'auth');
    assert.ok(!JSON.stringify([err.message, err.data]).includes('leaky-secret'));
  });

  it('reads a local repository in place', async () => {
    const tip = await fx.commit({ 'a.yaml': 'a: 1\n' }, 1);
    const src = new GitSource({ repo: fx.work });
    assert.deepEqual(await src.fetch(), { commit: tip, changed: true, rewritten: false });
    assert.equal(Buffer.from(await src.readTree(tip).read('a.yaml')).toString(), 'a: 1\n');
    await git(fx.work, ['commit', '-q', '--allow-empty', '-m', 'next'], gitEnv(5));
    const next = await git(fx.work, ['rev-parse', 'HEAD']);
    assert.deepEqual(await src.fetch(), { commit: next, previous: tip, changed: true, rewritten: false });
  });

  it('refuses an address it cannot speak to, before any I/O', () => {
    assert.throws(() => new GitSource({ repo: 'git@example.com:org/repo.git' }), { code: 'invalid-repo' });
    assert.throws(() => new GitSource({ repo: '/definitely/not/a/repo' }), { code: 'invalid-repo' });
  });
});
