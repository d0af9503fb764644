import { strict as assert } from 'node:assert';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GitSource, StatusWriter, type WriteResult } from '../../src/source/index.js';
import type { StatusReport } from '../../src/report/types.js';
import { specStatus } from '../support/spec-status.js';
import { runStatus } from '../../src/cli/actions/status.js';
import { git, gitEnv, tempDir, TEST_USER, withUser } from '../support/git-server.js';
import { createFixture, type Fixture } from './fixture.js';

const SOURCE = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';

const report = (done: number): StatusReport => ({
  cluster: 'prod-eu',
  sourceCommit: SOURCE,
  specs: [
    specStatus('NodeImage', 'worker', {
      progress: { done, total: 10 },
      waitingFor: 'PDB default/web allows 0 disruptions',
      nodes: [{ node: 'n1', phase: 'Done' }],
    }),
  ],
});

/** What a write did, without where its time went. */
const outcome = async (res: Promise<WriteResult>): Promise<Omit<WriteResult, 'timings'>> => {
  const { timings: _, ...rest } = await res;
  return rest;
};

async function eventuallyTrue(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('StatusWriter against git http-backend', function () {
  this.timeout(30_000);
  let fx: Fixture;
  let clone: { dir: string; remove: () => void };
  beforeEach(async () => {
    fx = await createFixture();
    await fx.commit({ 'specs/drydock.yaml': 'cluster: prod-eu\n' }, 1);
    clone = tempDir('drydock-reader-');
  });
  afterEach(async () => {
    clone.remove();
    await fx.close();
  });

  const writer = (opts: { retries?: number } = {}): StatusWriter =>
    new StatusWriter({
      source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 }),
      cluster: 'prod-eu',
      now: () => new Date('2024-03-01T12:00:00Z'),
      retryDelayMs: 5,
      ...opts,
    });

  /** Native git's view of the remote's status branch. */
  const nativeShow = async (format: string, ref = 'origin/drydock/status'): Promise<string> => {
    await git(clone.dir, ['fetch', '-q', withUser(fx.url), '+refs/heads/*:refs/remotes/origin/*']);
    return git(clone.dir, ['log', '-1', `--format=${format}`, ref]);
  };

  it('creates the orphan branch; native git reads the commit, its trailers and files; main is untouched', async () => {
    await git(clone.dir, ['init', '-q', '--bare']);
    const mainBefore = await git(fx.work, ['rev-parse', 'HEAD']);
    const res = await writer().write(report(3));
    assert.equal(res.changed, true);
    assert.equal(await nativeShow('%H'), res.commit);
    assert.equal(await nativeShow('%P'), '');
    assert.equal(await nativeShow('%an <%ae>'), 'drydock <drydock@localhost>');
    assert.equal(
      await nativeShow('%B'),
      `status: NodeImage/worker 3/10 progressing (source 1a2b3c4)\n\nDrydock-Source: ${SOURCE}\nDrydock-Cluster: prod-eu`,
    );
    assert.equal(await nativeShow('%(trailers:key=Drydock-Source,valueonly)'), SOURCE);
    const files = await git(clone.dir, ['ls-tree', '-r', '--name-only', 'origin/drydock/status']);
    assert.deepEqual(files.split('\n'), ['README.md', 'status/NodeImage/worker.yaml']);
    const doc = await git(clone.dir, ['show', 'origin/drydock/status:status/NodeImage/worker.yaml']);
    assert.match(doc, /^sourceCommit: 1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d$/m);
    assert.equal(await git(clone.dir, ['rev-parse', 'origin/main']), mainBefore);
  });

  it('commits only when content changed', async () => {
    await git(clone.dir, ['init', '-q', '--bare']);
    const w = writer();
    const first = await w.write(report(3));
    assert.deepEqual(await outcome(w.write(report(3))), { commit: first.commit, changed: false });
    const second = await w.write(report(4));
    assert.equal(second.changed, true);
    // Where the time went: a commit pushed; nothing pushed when nothing changed.
    assert.ok(second.timings.pushMs > 0 && second.timings.renderMs > 0, JSON.stringify(second.timings));
    assert.equal((await w.write(report(4))).timings.pushMs, 0);
    assert.equal(await nativeShow('%P'), first.commit);
    // The second commit says what changed since the first.
    assert.equal(await nativeShow('%s'), 'status: NodeImage/worker 4/10 replaced (source 1a2b3c4)');
    // A writer started later (a restart) sees the same content and writes nothing either.
    assert.deepEqual(await outcome(writer().write(report(4))), { commit: second.commit, changed: false });
  });

  it('in a fleet, commits the same content again once the heartbeat is due, so the branch shows it is alive', async () => {
    let now = Date.parse('2024-03-01T12:00:00Z');
    const w = new StatusWriter({
      source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 }),
      cluster: 'prod-eu',
      now: () => new Date(now),
      heartbeatMs: () => 600_000,
    });
    const first = await w.write(report(3));
    now += 599_000;
    assert.deepEqual(await outcome(w.write(report(3))), { commit: first.commit, changed: false });
    now += 1_000;
    const beat = await w.write(report(3));
    assert.equal(beat.changed, true);
    assert.notEqual(beat.commit, first.commit);
  });

  it("a writer started later (a restart) reads back the tip's spec statuses as written, none before the branch exists", async () => {
    assert.deepEqual(await writer().readSpecs(), []);
    const ended = specStatus('NodeMaintenance', 'disk', {
      phase: 'Ended',
      maintenance: {
        nodeName: 'n1',
        reason: 'replace disk',
        totalPods: 2,
        evictionPods: 1,
        pendingPods: [],
        drainProgress: 100,
        endedAt: '2024-03-01T11:59:00.000Z',
      },
    });
    const written = { ...report(3), specs: [...report(3).specs, ended] };
    await writer().write(written);
    // Each status as the planner gave it: the report's source commit is not one of its fields.
    assert.deepEqual(await writer().readSpecs(), written.specs);
  });

  it('a push the server refused is pushed by the next write, even of the same report', async () => {
    await git(clone.dir, ['init', '-q', '--bare']);
    const hook = path.join(fx.bare, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "read-only for now" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const w = writer({ retries: 0 });
    await assert.rejects(w.write(report(5)));
    rmSync(hook);
    // The same report again (the rollout did not move while the server refused): it must land.
    const res = await w.write(report(5));
    assert.equal(res.changed, true);
    assert.equal(await nativeShow('%H'), res.commit);
    assert.deepEqual(await outcome(w.write(report(5))), { commit: res.commit, changed: false });
  });

  it('re-applies on the new tip when another writer moved the branch, without forcing', async () => {
    const a = writer();
    await a.write(report(1));
    // Another writer (a second replica) advances the branch with native git.
    await git(clone.dir, ['clone', '-q', '--branch', 'drydock/status', withUser(fx.url), 'other']);
    const other = `${clone.dir}/other`;
    await git(other, ['commit', '-q', '--allow-empty', '-m', 'status: from elsewhere'], gitEnv(9));
    await git(other, ['push', '-q', 'origin', 'drydock/status'], gitEnv(9));
    const theirs = await git(other, ['rev-parse', 'HEAD']);

    const res = await a.write(report(2));
    assert.equal(res.changed, true);
    await git(other, ['fetch', '-q', 'origin']);
    assert.equal(await git(other, ['rev-parse', 'origin/drydock/status']), res.commit);
    assert.equal(
      await git(other, ['rev-parse', `${res.commit}^`]),
      theirs,
      'the new commit sits on the other writer’s tip',
    );
  });

  it('drydock status prints the README table, or JSON, and exits 2 before the branch exists', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const opts = { repo: fx.url, statusBranch: 'drydock/status', format: 'text', cacheDir: fx.cacheRoot } as const;
    const env = { DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password };
    assert.equal(
      await runStatus(
        opts,
        (s) => out.push(s),
        (s) => err.push(s),
        env,
      ),
      2,
    );
    assert.match(
      err.join(''),
      /has no branch drydock\/status yet: drydock writes it once it has run against this repository; if its drydock.yaml names another statusBranch/,
    );
    await writer().write(report(3));
    assert.equal(
      await runStatus(
        opts,
        (s) => out.push(s),
        (s) => err.push(s),
        env,
      ),
      0,
    );
    assert.match(
      out.join(''),
      /\| \[NodeImage\/worker\]\(status\/NodeImage\/worker\.yaml\) \| Progressing \| 3\/10 \| {2}\| PDB default\/web allows 0 disruptions \| 1a2b3c4 \|/,
    );
    out.length = 0;
    assert.equal(
      await runStatus(
        { ...opts, format: 'json' },
        (s) => out.push(s),
        (s) => err.push(s),
        env,
      ),
      0,
    );
    const { statusCommit, ...rest } = JSON.parse(out.join('')) as Record<string, unknown>;
    assert.match(String(statusCommit), /^[0-9a-f]{40}$/);
    assert.deepEqual(rest, {
      cluster: 'prod-eu',
      sourceCommit: SOURCE,
      specs: [
        {
          kind: 'NodeImage',
          name: 'worker',
          revision: 'r1',
          sourceCommit: SOURCE,
          phase: 'Progressing',
          progress: { done: 3, total: 10 },
          waitingFor: 'PDB default/web allows 0 disruptions',
          counts: { failures: 0 },
          conditions: [],
          nodes: [{ node: 'n1', phase: 'Done' }],
        },
      ],
      errors: null,
    });
  });

  it('drydock status --watch prints each status commit as it lands, oldest first, until stopped', async () => {
    const w = writer();
    await w.write(report(3));
    const out: string[] = [];
    const stop = new AbortController();
    const env = { DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password };
    const opts = {
      repo: fx.url,
      statusBranch: 'drydock/status',
      format: 'text',
      cacheDir: fx.cacheRoot,
      watch: true,
      interval: '100ms',
    } as const;
    const running = runStatus(
      opts,
      (s) => out.push(s),
      () => undefined,
      env,
      stop.signal,
    );
    await eventuallyTrue(() => out.join('').includes('watching '));
    await w.write(report(4));
    await w.write(report(6));
    const line =
      /^\d{4}-\d\d-\d\dT[\d:.]+Z [0-9a-f]{7} status: NodeImage\/worker (\d+)\/10 replaced \(source 1a2b3c4\)$/;
    await eventuallyTrue(
      () =>
        out
          .join('')
          .split('\n')
          .filter((l) => line.test(l)).length === 2,
    );
    stop.abort();
    assert.equal(await running, 0);
    const landed = out
      .join('')
      .split('\n')
      .flatMap((l) => line.exec(l)?.[1] ?? []);
    assert.deepEqual(landed, ['4', '6'], 'each commit once, oldest first; the README of 3/10 came before');
    assert.match(out[0] ?? '', /\| 3\/10 \|/);
  });

  it('writes and reads the status branch of a local repository in place', async () => {
    const local = new GitSource({ repo: fx.work });
    const res = await new StatusWriter({ source: local, cluster: 'prod-eu' }).write(report(5));
    assert.equal(await git(fx.work, ['rev-parse', 'drydock/status']), res.commit);
    assert.equal(
      await git(fx.work, ['symbolic-ref', 'HEAD']),
      'refs/heads/main',
      'the checked-out branch is untouched',
    );
    const out: string[] = [];
    const code = await runStatus(
      { repo: fx.work, statusBranch: 'drydock/status', format: 'text' },
      (s) => out.push(s),
      () => undefined,
      {},
    );
    assert.equal(code, 0);
    assert.match(out.join(''), /\| 5\/10 \|/);
  });

  it('drydock status reads a local clone, whose status branch is origin/drydock/status, and its hint works', async () => {
    const work = `${clone.dir}/fleet`;
    await git(clone.dir, ['clone', '-q', withUser(fx.url), 'fleet']);
    const run = async (statusBranch: string): Promise<{ code: number; out: string; err: string }> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runStatus(
        { repo: work, statusBranch, format: 'text' },
        (s) => out.push(s),
        (s) => err.push(s),
        {},
      );
      return { code, out: out.join(''), err: err.join('') };
    };
    // Cloned before drydock wrote anything: the error says what to run and what exists.
    const before = await run('drydock/status');
    assert.equal(before.code, 2);
    assert.match(
      before.err,
      /has no branch drydock\/status, nor origin\/drydock\/status: run `git fetch origin` in it/,
    );
    assert.match(before.err, /\(branches here: [^)]*origin\/main\)/);
    await writer().write(report(7));
    // The hint, followed: fetch, and the remote-tracking branch is read.
    await git(work, ['fetch', '-q', 'origin']);
    const after = await run('drydock/status');
    assert.equal(after.code, 0, after.err);
    assert.match(after.out, /\| 7\/10 \|/);
    // Named the way `git log origin/drydock/status` names it, too.
    const named = await run('origin/drydock/status');
    assert.equal(named.code, 0, named.err);
    assert.match(named.out, /\| 7\/10 \|/);
  });

  it('refuses to write over the status of another cluster on the same branch', async () => {
    await writer().write(report(1));
    const other = new StatusWriter({
      source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 }),
      cluster: 'prod-us',
    });
    await assert.rejects(other.write({ ...report(1), cluster: 'prod-us' }), {
      code: 'invalid-option',
      message: /holds the status of cluster prod-eu, not prod-us; give each cluster its own --status-branch/,
    });
  });
});
