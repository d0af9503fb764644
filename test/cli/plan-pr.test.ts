/**
 * `drydock plan --base --head` as a person or CI runs it: a real clone of examples-repo with a
 * branch that changes the worker image, no cluster credentials (a pull request from a fork).
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('drydock plan --base --head (a pull request, no cluster access)', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], {
      cwd: repo,
      encoding: 'utf8',
    }).trim();
  // KUBECONFIG points at nothing: the live part must be skipped, not fail.
  const drydock = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), 'plan', '--repo', repo, ...args], {
      encoding: 'utf8',
      env: { ...process.env, KUBECONFIG: path.join(repo, 'absent') },
    });

  before(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'drydock-plan-pr-'));
    cpSync(path.join(root, 'examples-repo'), repo, { recursive: true });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'base');
    git('checkout', '-qb', 'worker-v2');
    const file = path.join(repo, 'images/worker.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .replace('node-os:v1.0.0', 'node-os:v2.0.0')
        .replace('required: none', 'required: start'),
    );
    git('commit', '-qam', 'worker v2');
    git('checkout', '-qb', 'broken');
    writeFileSync(file, readFileSync(file, 'utf8').replace('maxSurge: 1', 'maxSurge: lots'));
    git('commit', '-qam', 'broken');
    git('checkout', '-q', 'main');
    git('checkout', '-qb', 'gated');
    // Valid, with one warning validate prints: line 8 names a namespace deploy/'s RBAC does not cover.
    writeFileSync(
      path.join(repo, 'policies/quiesce.yaml'),
      [
        'apiVersion: drydock.dev/v1alpha1',
        'kind: UpgradeGate',
        'metadata: {name: quiesce}',
        'spec:',
        '  appliesTo: {targets: [{kind: NodeImage}]}',
        '  before:',
        '    - spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}',
        '      namespace: storage',
        '',
      ].join('\n'),
    );
    git('add', '-A');
    git('commit', '-qm', 'gated');
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  it('text: the change in words, the approval file, and the live part said skipped', () => {
    const r = drydock('--base', 'main', '--head', 'worker-v2');
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^ {2}NodeImage worker: image registry\.example\/node-os:v1\.0\.0 → registry\.example\/node-os:v2\.0\.0; rollout\.approval\.required none → start \(nodes affected: live part skipped\)$/m,
    );
    assert.match(r.stdout, /^ {2}approvals\/worker-start\.yaml \(NodeImage\/worker, stage start\):$/m);
    assert.match(r.stdout, /^ {6}image: registry\.example\/node-os:v2\.0\.0$/m);
    assert.match(r.stdout, /^Live part skipped: no cluster or cloud access \(cannot read kubeconfig/m);
  });

  it('a commit and HEAD work as refs in a local clone', () => {
    const base = git('rev-parse', 'main');
    git('checkout', '-q', 'worker-v2');
    const r = drydock('--base', base.slice(0, 10), '--head', 'HEAD', '--format', 'json');
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      base: { commit: string };
      changes: { kind: string; name: string; change: string }[];
    };
    assert.equal(report.base.commit, base);
    assert.deepEqual(
      report.changes.map((c) => `${c.change} ${c.kind}/${c.name}`),
      ['changed NodeImage/worker'],
    );
  });

  it('a revision git spells with ~N and ^N steps works as --base (HEAD~1, worker-v2^), others say what to pass', function () {
    // Seven runs of the CLI, each a process start and a spec load.
    this.timeout(60_000);
    const base = git('rev-parse', 'main');
    git('checkout', '-q', 'worker-v2');
    for (const rev of ['HEAD~1', 'HEAD^', 'worker-v2^1', 'broken~2', 'broken^^']) {
      const r = drydock('--base', rev, '--head', 'HEAD', '--format', 'json');
      assert.equal(r.status, 0, `${rev}: ${r.stderr}`);
      assert.equal((JSON.parse(r.stdout) as { base: { commit: string } }).base.commit, base, rev);
    }
    const before = drydock('--base', 'HEAD~5', '--head', 'HEAD');
    assert.equal(before.status, 2);
    assert.match(before.stderr, /HEAD~5 does not exist in .*: commit [0-9a-f]{7} has no parent/);
    const other = drydock('--base', 'HEAD@{1}', '--head', 'HEAD');
    assert.equal(other.status, 2);
    assert.match(other.stderr, /followed by ~N or \^N steps; for other revision syntax pass the commit it names/);
  });

  it('github: workflow annotations on the changed file and on the approval to add', () => {
    const r = drydock('--base', 'main', '--head', 'worker-v2', '--format', 'github');
    assert.equal(r.status, 0, r.stderr);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::'));
    assert.deepEqual(
      annotations.map((l) => /^::(\w+) file=([^,]+),line=(\d+)/.exec(l)?.slice(1)),
      [
        ['notice', 'images/worker.yaml', '3'],
        ['warning', 'approvals/worker-start.yaml', '1'],
      ],
    );
  });

  it('an invalid head: its errors as annotations, exit 1', () => {
    const r = drydock('--base', 'main', '--head', 'broken', '--format', 'github');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /^::error file=images\/worker\.yaml,line=\d+,col=\d+,title=drydock%3A [\w-]+::.*maxSurge/m);
  });

  it('markdown: one comment that starts with the marker', () => {
    const r = drydock('--base', 'main', '--head', 'worker-v2', '--format', 'markdown');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.split('\n')[0], '<!-- drydock-plan -->');
  });

  it("shows the head's warnings as validate prints them, in every format; they block nothing", function () {
    // Four runs of the command: one per format.
    this.timeout(60_000);
    const where = 'policies/quiesce.yaml:8:18';
    const text = drydock('--base', 'main', '--head', 'gated');
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^Warnings in the head \(1 warning; they refuse nothing\):$/m);
    assert.match(
      text.stdout,
      new RegExp(
        `^${where}: warning: UpgradeGate/quiesce: its Jobs run in namespace storage, where deploy/rbac\\.yaml does not let drydock create Jobs .* \\[job-namespace-rbac\\]\\n {2}hint: grant drydock's ServiceAccount a Role in storage`,
        'm',
      ),
    );
    const md = drydock('--base', 'main', '--head', 'gated', '--format', 'markdown');
    assert.equal(md.status, 0, md.stderr);
    assert.match(
      md.stdout,
      new RegExp(
        `#### Warnings in the head\\n\\n- \`${where}\`: UpgradeGate/quiesce: its Jobs run in namespace storage,`,
      ),
    );
    const gh = drydock('--base', 'main', '--head', 'gated', '--format', 'github');
    assert.equal(gh.status, 0, gh.stderr);
    assert.match(
      gh.stdout,
      /^::warning file=policies\/quiesce\.yaml,line=8,col=18,title=drydock%3A job-namespace-rbac::/m,
    );
    const json = JSON.parse(drydock('--base', 'main', '--head', 'gated', '--format', 'json').stdout) as {
      warnings: { code: string; file: string; line: number }[];
    };
    assert.deepEqual(
      json.warnings.map((w) => [w.code, w.file, w.line]),
      [['job-namespace-rbac', 'policies/quiesce.yaml', 8]],
    );
  });

  it('a ref that does not exist, or --base without --head: exit 2 and what to fix', () => {
    const missing = drydock('--base', 'main', '--head', 'nope');
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no branch nope/);
    const half = drydock('--base', 'main');
    assert.equal(half.status, 2);
    assert.match(half.stderr, /--base and --head go together/);
  });
});
