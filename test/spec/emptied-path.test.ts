import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTreeReader } from '../../src/source/index.js';
import { loadFromDirectory, loadFromSource } from '../../src/spec/index.js';
import { git, gitEnv, tempDir } from '../support/git-server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: c\npaths: [images, approvals]\n';
const IMAGE = [
  'apiVersion: drydock.dev/v1alpha1',
  'kind: NodeImage',
  'metadata: {name: workers}',
  'spec: {image: "registry.example/node-os:v1.0.0"}',
  '',
].join('\n');
const APPROVAL = [
  'apiVersion: drydock.dev/v1alpha1',
  'kind: Approval',
  'metadata: {name: go}',
  'spec: {target: {kind: NodeImage, name: workers}, image: "registry.example/node-os:v1.0.0", stage: start}',
  '',
].join('\n');

/** A work tree whose commits are given as path → content (null deletes); resolves to each commit id. */
async function history(dir: string, commits: readonly Record<string, string | null>[]): Promise<string[]> {
  await git(dir, ['init', '-q', '-b', 'main']);
  const ids: string[] = [];
  for (const [tick, files] of commits.entries()) {
    for (const [p, content] of Object.entries(files)) {
      const abs = path.join(dir, p);
      if (content === null) rmSync(abs);
      else {
        mkdirSync(path.dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
    await git(dir, ['add', '-A'], gitEnv(tick));
    await git(dir, ['commit', '-q', '--allow-empty', '-m', `change ${tick}`], gitEnv(tick));
    ids.push(await git(dir, ['rev-parse', 'HEAD']));
  }
  return ids;
}

describe('a path drydock.yaml lists that a commit emptied', () => {
  let work: ReturnType<typeof tempDir>;
  beforeEach(() => {
    work = tempDir('drydock-emptied-');
  });
  afterEach(() => work.remove());

  it('loads with a warning at the path once its last file is deleted', async () => {
    const [, emptied] = await history(work.dir, [
      { 'drydock.yaml': CONFIG, 'images/w.yaml': IMAGE, 'approvals/go.yaml': APPROVAL },
      { 'approvals/go.yaml': null },
    ]);
    const r = await loadFromSource(createTreeReader({ gitdir: path.join(work.dir, '.git'), commit: emptied ?? '' }));
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.desired.nodeImages.length, 1);
    assert.deepEqual(
      (r.warnings ?? []).map((w) => [w.file, w.line, w.message]),
      [
        [
          'drydock.yaml',
          4,
          'path "approvals" holds no files any more (Git keeps no empty folders); it is read as empty',
        ],
      ],
    );
  });

  it('stays an error when the path is in no earlier commit (a typo)', async () => {
    const [, tip] = await history(work.dir, [
      {
        'drydock.yaml': 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: c\npaths: [images]\n',
        'images/w.yaml': IMAGE,
      },
      { 'drydock.yaml': 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: c\npaths: [images, aprovals]\n' },
    ]);
    const r = await loadFromSource(createTreeReader({ gitdir: path.join(work.dir, '.git'), commit: tip ?? '' }));
    assert.equal(r.ok, false);
    assert.deepEqual(r.ok ? [] : r.errors.map((e) => e.message), ['path "aprovals" does not exist']);
    assert.equal(r.warnings, undefined);
  });

  it('is a warning in a working copy whose last commit still had it, and validate passes saying so', async () => {
    await history(work.dir, [{ 'drydock.yaml': CONFIG, 'images/w.yaml': IMAGE, 'approvals/go.yaml': APPROVAL }]);
    rmSync(path.join(work.dir, 'approvals'), { recursive: true });
    const r = await loadFromDirectory(work.dir);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.warnings?.[0]?.message.startsWith('path "approvals" holds no files any more'), true);

    const run = spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), 'validate', work.dir], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /drydock\.yaml:4:\d+: warning: path "approvals" holds no files any more/);
    assert.match(run.stdout, /valid: 1 spec in 2 files \(cluster c\); 1 warning above/);
  });

  it('stays an error in a directory outside any repository', async () => {
    mkdirSync(path.join(work.dir, 'images'));
    writeFileSync(path.join(work.dir, 'drydock.yaml'), CONFIG);
    writeFileSync(path.join(work.dir, 'images', 'w.yaml'), IMAGE);
    const r = await loadFromDirectory(work.dir);
    assert.equal(r.ok, false);
  });
});
