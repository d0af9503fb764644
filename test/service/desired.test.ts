import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import type { CloudProvider } from '../../src/cloud/provider.js';
import { DesiredTracker, revisionSource, type DesiredRevision } from '../../src/service/desired.js';
import { createMetrics } from '../../src/service/metrics.js';
import { CommitsInForce } from '../../src/source/in-force.js';
import type { DesiredState } from '../../src/spec/model.js';

const valid = (commit: string, groups: { groupId: string; provider: string }[] = []): DesiredRevision => ({
  commit,
  load: { ok: true, desired: { scalingGroups: groups } as unknown as DesiredState, files: ['a.yaml'] },
});
const refused = (commit: string): DesiredRevision => ({
  commit,
  load: {
    ok: false,
    errors: [{ file: 'a.yaml', line: 1, column: 1, message: 'bad', hint: 'fix', code: 'schema' }],
    files: ['a.yaml'],
  },
});

function world() {
  const revisions: (DesiredRevision | Error)[] = [];
  let newCommits = 0;
  const metrics = createMetrics({ defaultMetrics: false });
  const tracker = new DesiredTracker({
    source: revisionSource(async () => {
      const next = revisions.shift();
      if (!next) throw new Error('nothing queued');
      if (next instanceof Error) throw next;
      return next;
    }),
    logger: pino({ level: 'silent' }),
    metrics,
    clock: () => 1_000,
    onNewCommit: () => void newCommits++,
  });
  return { tracker, revisions, metrics, newCommits: () => newCommits };
}

describe('service desired-state tracker', () => {
  it('keeps the last valid commit in force when a newer one is refused, and asks for a round on each new commit only', async () => {
    const w = world();
    w.revisions.push(valid('c1'), valid('c1'), refused('c2'));
    await w.tracker.sync();
    await w.tracker.sync();
    assert.equal(w.newCommits(), 1, 'the same commit again is no news');
    await w.tracker.sync();
    assert.equal(w.newCommits(), 2);
    assert.equal(w.tracker.inForce?.commit, 'c1');
    assert.equal(w.tracker.newest?.commit, 'c2');
    assert.deepEqual(w.tracker.commits(), { sourceCommit: 'c1', newestCommit: 'c2' });
  });

  it("reads the source's own record: a commit it restored is in force from the first sync, beside the refused tip", async () => {
    const commits = new CommitsInForce();
    let newCommits = 0;
    const metrics = createMetrics({ defaultMetrics: false });
    const tracker = new DesiredTracker({
      // As Sync after a restart on a refused tip: the tip loaded, the commit in force read back.
      source: {
        commits,
        sync: async () => {
          commits.loaded(refused('c2'));
          commits.restored({ commit: 'c1', desired: {} as DesiredState, files: [] });
          return refused('c2');
        },
      },
      logger: pino({ level: 'silent' }),
      metrics,
      clock: () => 1_000,
      onNewCommit: () => void newCommits++,
    });
    await tracker.sync();
    assert.deepEqual(tracker.commits(), { sourceCommit: 'c1', newestCommit: 'c2' });
    assert.equal(newCommits, 1);
    const invalid = (await metrics.errors.get()).values.find((v) => v.labels.code === 'InvalidCommit');
    assert.equal(invalid?.value, 1);
  });

  it('survives an unreachable source: the commit in force stays, the failure is counted', async () => {
    const w = world();
    w.revisions.push(valid('c1'), new Error('unreachable'));
    await w.tracker.sync();
    await w.tracker.sync();
    assert.equal(w.tracker.inForce?.commit, 'c1');
    const counted = (await w.metrics.errors.get()).values.find((v) => v.labels.kind === 'git');
    assert.equal(counted?.value, 1);
  });

  it("finds a group's cloud in the spec in force, or the only one configured", async () => {
    const aws = { name: 'aws' } as unknown as CloudProvider;
    const sim = { name: 'sim' } as unknown as CloudProvider;
    const w = world();
    assert.deepEqual(w.tracker.commits(), {});
    assert.equal(w.tracker.providerOf('g1', { aws }), aws, 'no commit yet: the only cloud');
    assert.equal(w.tracker.providerOf('g1', { aws, sim }), undefined, 'two clouds, no spec: none');
    w.revisions.push(valid('c1', [{ groupId: 'g1', provider: 'sim' }]));
    await w.tracker.sync();
    assert.equal(w.tracker.providerOf('g1', { aws, sim }), sim);
    assert.equal(w.tracker.providerOf('gone', { aws, sim }), undefined);
  });
});
