import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function drydock(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), ...args], { encoding: 'utf8', cwd: root });
}

describe('drydock validate', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-validate-'));
    mkdirSync(path.join(dir, 'bad'));
    writeFileSync(
      path.join(dir, 'bad', 'syntax.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: w}\nspec:\n  image: [x\n',
    );
    writeFileSync(path.join(dir, 'bad', 'binary.yaml'), Buffer.from([0x61, 0x00]));
    symlinkSync('/etc/hostname', path.join(dir, 'bad', 'link.yaml'));
    mkdirSync(path.join(dir, 'gated'));
    writeFileSync(
      path.join(dir, 'gated', 'gate.yaml'),
      [
        'apiVersion: drydock.dev/v1alpha1',
        'kind: UpgradeGate',
        'metadata: {name: storage}',
        'spec:',
        '  appliesTo: {targets: [{kind: NodeMaintenance}, {kind: NodeImage}]}',
        '  before:',
        '    - spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}',
        '',
      ].join('\n'),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0 on examples-repo and says it is valid', () => {
    const r = drydock('validate', 'examples-repo');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^examples-repo: valid: \d+ specs in \d+ files \(cluster sandbox\)$/m);
    assert.doesNotMatch(r.stdout, /warning/, 'every example spec is acted on');
  });

  it('warns, file:line first, about every valid spec this build does not act on', () => {
    const gated = path.join(dir, 'gated');
    const r = drydock('validate', gated);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const warnings = r.stdout.split('\n').filter((l) => l.includes(': warning: '));
    assert.deepEqual(
      warnings.map((l) => /^(\S+):\d+:\d+: warning: (\S+): /.exec(l)?.slice(1)),
      [[`${gated}/gate.yaml`, 'UpgradeGate/storage']],
    );
    assert.match(
      r.stdout,
      /UpgradeGate\/storage: UpgradeGate for NodeMaintenance is not acted on by this build: its before and after Jobs do not run for every NodeMaintenance \(they do for every NodeImage\) \[not-supported\]\n {2}hint: do not rely on it/,
    );
    assert.match(r.stdout, /1 spec not acted on by this build \(warnings above\)$/m);
    const gh = drydock('validate', gated, '--format', 'github');
    assert.match(gh.stdout, /^::warning file=\S+gate\.yaml,line=\d+,col=\d+,title=drydock%3A not-supported::/m);
    const json = JSON.parse(drydock('validate', gated, '--format', 'json').stdout) as {
      valid: boolean;
      warnings: { code: string }[];
    };
    assert.equal(json.valid, true);
    assert.deepEqual(
      json.warnings.map((w) => w.code),
      ['not-supported'],
    );
  });

  it("validates the mutex operator's own files, the MCO upgrade gated; warns only of the Jobs' namespace", () => {
    const repo = 'test/fixtures/seeds/mutex-operator';
    const r = drydock('validate', repo);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    // rule.yaml line 12 is `  jobNamespace: node-upgrade-mutex-operator`, its value at column 17.
    assert.deepEqual(
      r.stdout.split('\n').filter((l) => l.includes(': warning: ')),
      [
        `${repo}/rule.yaml:12:17: warning: MutexRule/storage-quiesce: its Jobs run in namespace node-upgrade-mutex-operator, ` +
          'where deploy/rbac.yaml does not let drydock create Jobs (its Role grants them in drydock-system only): ' +
          'the API server would refuse them and the nodes they gate would wait [job-namespace-rbac]',
      ],
    );
    assert.match(
      r.stdout,
      /\n {2}hint: grant drydock's ServiceAccount a Role in node-upgrade-mutex-operator \(jobs: create, get, delete; pods: list\) and a RoleBinding, or set jobNamespace to drydock-system\n/,
    );
    assert.match(r.stdout, /valid: 3 specs in 3 files \(cluster default\); 1 warning above$/m);
    assert.doesNotMatch(r.stdout, /not acted on/);
  });

  it("warns at each gate Job namespace deploy/'s RBAC does not cover, once per namespace, not at its own", () => {
    const repo = path.join(dir, 'jobns');
    mkdirSync(repo);
    const job = '{template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}';
    writeFileSync(
      path.join(repo, 'rule.yaml'),
      [
        'apiVersion: openshift-optional.skrzypek.io/v1alpha1',
        'kind: MutexRule',
        'metadata: {name: inside}',
        'spec:',
        '  jobName: inside',
        '  jobNamespace: drydock-system',
        `  jobSpec: ${job}`,
        '  type: kubernetes',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(repo, 'gate.yaml'),
      [
        'apiVersion: drydock.dev/v1alpha1',
        'kind: UpgradeGate',
        'metadata: {name: storage}',
        'spec:',
        '  appliesTo: {targets: [{kind: NodeImage}]}',
        '  before:',
        `    - {namespace: drydock-system, spec: ${job}}`,
        `    - {namespace: storage, spec: ${job}}`,
        '  after:',
        `    - namespace: storage`,
        `      spec: ${job}`,
        '',
      ].join('\n'),
    );
    const r = drydock('validate', repo);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(
      r.stdout.split('\n').flatMap((l) => /^(\S+): warning: (\S+): .* \[(\S+)\]$/.exec(l)?.slice(1) ?? []),
      [`${repo}/gate.yaml:8:19`, 'UpgradeGate/storage', 'job-namespace-rbac'],
    );
    assert.match(
      r.stdout,
      /its Jobs run in namespace storage, where deploy\/rbac\.yaml does not let drydock create Jobs/,
    );
    assert.match(r.stdout, /or set the Job namespace to drydock-system\n/);
    const json = JSON.parse(drydock('validate', repo, '--format', 'json').stdout) as {
      warnings: { code: string; line: number }[];
    };
    assert.deepEqual(
      json.warnings.map((w) => [w.code, w.line]),
      [['job-namespace-rbac', 8]],
    );
  });

  it('exits 1 and names file and line of every hostile file, with a hint and a summary', () => {
    const bad = path.join(dir, 'bad');
    const r = drydock('validate', bad);
    assert.equal(r.status, 1, r.stderr);
    assert.ok(r.stdout.includes(`${bad}/binary.yaml:1:2: error: `), r.stdout);
    assert.ok(r.stdout.includes(`${bad}/link.yaml:1:1: error: `), r.stdout);
    assert.ok(
      r.stdout.includes(`${bad}/syntax.yaml:6:1: error: `) || r.stdout.includes(`${bad}/syntax.yaml:5:`),
      r.stdout,
    );
    assert.match(r.stdout, /\n {2}hint: \S/);
    assert.match(r.stdout, /: 3 errors in 3 files; nothing is applied until all are fixed\n$/);
  });

  it('--format json prints the errors as JSON', () => {
    const r = drydock('validate', path.join(dir, 'bad'), '--format', 'json');
    assert.equal(r.status, 1);
    const body = JSON.parse(r.stdout) as { valid: boolean; errors: { file: string; line: number; code: string }[] };
    assert.equal(body.valid, false);
    assert.deepEqual(
      body.errors.map((e) => [path.basename(e.file), e.code]),
      [
        ['binary.yaml', 'binary-file'],
        ['link.yaml', 'symlink'],
        ['syntax.yaml', 'yaml-syntax'],
      ],
    );
  });

  it('--format github prints workflow annotations', () => {
    const r = drydock('validate', path.join(dir, 'bad'), '--format', 'github');
    assert.equal(r.status, 1);
    assert.match(r.stdout, /^::error file=[^,]*binary\.yaml,line=1,col=2,title=drydock%3A binary-file::/m);
  });

  it('exits 2 on a missing directory and on a bad flag', () => {
    assert.equal(drydock('validate', path.join(dir, 'missing')).status, 2);
    assert.equal(drydock('validate', 'examples-repo', '--format', 'xml').status, 2);
    assert.equal(drydock('validate', 'examples-repo', '--no-such-flag').status, 2);
  });

  it('defaults DIR to the current directory', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), 'validate'], {
      encoding: 'utf8',
      cwd: path.join(root, 'examples-repo'),
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^\.: valid:/m);
  });

  it('counts every error in its summary, also those a capped report leaves out', () => {
    const many = path.join(dir, 'many');
    mkdirSync(many);
    const fields = Array.from({ length: 250 }, (_, i) => `  f${i}: 1\n`).join('');
    writeFileSync(
      path.join(many, 'image.yaml'),
      `apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: w}\nspec:\n  image: registry.example/os:v1\n${fields}`,
    );
    const r = drydock('validate', many);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /150 more errors in image\.yaml not shown/);
    assert.match(r.stdout, /: 250 errors in 1 file; nothing is applied/);
  });
});
