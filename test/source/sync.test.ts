import { strict as assert } from 'node:assert';
import { GitSource, StatusWriter, Sync, type Loader } from '../../src/source/index.js';
import { git, TEST_USER } from '../support/git-server.js';
import { BUILTIN_ROLLOUT } from '../../src/spec/index.js';
import type { DesiredState } from '../../src/spec/model.js';
import { useFixture, type Fixture } from './fixture.js';

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: test\n';
const EMPTY: DesiredState = {
  config: {
    cluster: 'x',
    budget: { maxUnavailable: 1 },
    defaults: { rollout: BUILTIN_ROLLOUT },
    paths: ['.'],
    statusBranch: 'drydock/status',
  },
  scalingGroups: [],
  nodeImages: [],
  autoscalingStrategies: [],
  nodeMaintenances: [],
  nodeOps: [],
  nodeOpUpgrades: [],
  upgradeGates: [],
  maintenanceWindows: [],
  approvals: [],
  mutexTargets: [],
  mutexRunConfigs: [],
};
const BROKEN = 'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: x}\nspec: [unclosed\n';

describe('Sync: a commit is applied whole or not at all', function () {
  this.timeout(30_000);
  let fx: Fixture;
  useFixture((f) => (fx = f));

  const source = (): GitSource =>
    new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, path: 'specs', retries: 0 });

  it('keeps the last valid commit in force when the newest is invalid (real loader), with repo-relative errors', async () => {
    const good = await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    const sync = new Sync({ source: source() });
    const first = await sync.run();
    assert.equal(first.kind, 'applied');
    assert.equal(sync.commits.inForce?.commit, good);
    assert.equal(sync.commits.inForce?.desired.config.cluster, 'test');

    const bad = await fx.commit({ 'specs/bad.yaml': BROKEN }, 2);
    const second = await sync.run();
    assert.equal(second.kind, 'refused');
    assert.ok(second.kind === 'refused');
    assert.equal(second.commit, bad);
    assert.deepEqual(
      second.errors.map((e) => [e.file, e.line, e.code]),
      [['specs/bad.yaml', 5, 'yaml-syntax']],
    );
    assert.equal(sync.commits.inForce?.commit, good);
    assert.equal(sync.commits.newest?.commit, bad);
    assert.equal((await sync.run()).kind, 'unchanged');

    const fixed = await fx.commit({ 'specs/bad.yaml': null }, 3);
    assert.equal((await sync.run()).kind, 'applied');
    assert.equal(sync.commits.inForce?.commit, fixed);
  });

  it('keeps the last valid commit when the server goes away, and reports it typed', async () => {
    const good = await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    const sync = new Sync({ source: source() });
    await sync.run();
    await fx.server.stop();
    const out = await sync.run();
    assert.equal(out.kind, 'fetch-failed');
    assert.ok(out.kind === 'fetch-failed');
    assert.equal(out.error.code, 'unreachable');
    assert.equal(sync.commits.inForce?.commit, good);
  });

  it('after a restart, restores the commit in force from the status branch when the tip is refused', async () => {
    const good = await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    const src = source();
    const writer = new StatusWriter({ source: src, cluster: 'test', now: () => new Date('2024-02-01T00:00:00Z') });
    await writer.write({ cluster: 'test', sourceCommit: good, specs: [] });
    await fx.commit({ 'specs/bad.yaml': BROKEN }, 2);

    // A new process: nothing in memory, the status branch says `good` was in force.
    const fresh = source();
    const freshWriter = new StatusWriter({ source: fresh, cluster: 'test' });
    const sync = new Sync({ source: fresh, restore: async () => (await freshWriter.readApplied())?.sourceCommit });
    const out = await sync.run();
    assert.equal(out.kind, 'refused');
    assert.equal(sync.commits.inForce?.commit, good);
  });

  it('follows a force-push and applies the new tip (injected loader)', async () => {
    // A loader standing in for the real one: valid unless a file is named bad.yaml.
    const seen: string[][] = [];
    const load: Loader = async (tree) => {
      const files = (await tree.list()).filter((e) => e.kind === 'file').map((e) => e.path);
      seen.push(files);
      return files.includes('bad.yaml') ? { ok: false, files, errors: [] } : { ok: true, files, desired: EMPTY };
    };
    const sync = new Sync({ source: source(), load });
    await fx.commit({ 'specs/a.yaml': 'a\n' }, 1);
    await fx.commit({ 'specs/b.yaml': 'b\n' }, 2);
    assert.equal((await sync.run()).kind, 'applied');
    await git(fx.work, ['reset', '-q', '--hard', 'HEAD~1']);
    const rewritten = await fx.commit({ 'specs/c.yaml': 'c\n' }, 3, { force: true });
    const out = await sync.run();
    assert.ok(out.kind === 'applied');
    assert.equal(out.fetch.rewritten, true);
    assert.equal(sync.commits.inForce?.commit, rewritten);
    assert.deepEqual(seen, [
      ['a.yaml', 'b.yaml'],
      ['a.yaml', 'c.yaml'],
    ]);
  });

  it('refuses a commit without the --path directory, saying what to fix', async () => {
    await fx.commit({ 'elsewhere/drydock.yaml': CONFIG }, 1);
    const out = await new Sync({ source: source() }).run();
    assert.ok(out.kind === 'refused');
    assert.deepEqual(
      out.errors.map((e) => [e.file, e.code, e.hint]),
      [['specs', 'path-missing', 'fix --path, or add the directory holding drydock.yaml and the specs']],
    );
  });

  it('keeps the last valid commit when the branch is deleted, reported as branch-missing', async () => {
    const good = await fx.commit({ 'specs/drydock.yaml': CONFIG }, 1);
    const sync = new Sync({ source: source() });
    await sync.run();
    await fx.push([':refs/heads/main']);
    const out = await sync.run();
    assert.ok(out.kind === 'fetch-failed');
    assert.equal(out.error.code, 'branch-missing');
    assert.equal(sync.commits.inForce?.commit, good);
  });
});
