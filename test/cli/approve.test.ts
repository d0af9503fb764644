/**
 * `drydock approve` round trip on a real clone: the file it writes validates with the loader,
 * and the planner counts it for exactly the image that waits (not another), at the stage asked.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findApproval, imageTarget } from '../../src/plan/approval.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { loadFromDirectory } from '../../src/spec/index.js';
import type { MetricHalt } from '../../src/plan/types.js';
import type { DesiredState } from '../../src/spec/model.js';
import { specStatus } from '../support/spec-status.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const V2 = 'registry.example/node-os:v2.0.0';

async function load(dir: string): Promise<DesiredState> {
  const r = await loadFromDirectory(dir);
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
  return r.desired;
}

describe('drydock approve', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], {
      cwd: repo,
      encoding: 'utf8',
    }).trim();
  const approve = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), 'approve', ...args, '--dir', repo], {
      encoding: 'utf8',
      cwd: repo,
    });
  const worker = () => path.join(repo, 'images/worker.yaml');
  const written = () => path.join(repo, 'approvals/worker-after-canary.yaml');

  /** The status branch as drydock writes it: the worker's document, at `revision`, waiting for its approval. */
  function statusAt(revision: string, metricHalt?: MetricHalt): void {
    git('checkout', '-q', '--orphan', 'drydock/status');
    git('rm', '-rqf', '.');
    const spec = specStatus('NodeImage', 'worker', {
      revision,
      phase: 'Waiting',
      waitingFor: 'approval needed (after the canary wave)',
      ...(metricHalt !== undefined ? { metricHalt } : {}),
    });
    for (const [file, text] of renderStatusDocs({ cluster: 'c', specs: [spec] })) {
      mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
      writeFileSync(path.join(repo, file), text);
    }
    git('add', '-A');
    git('commit', '-qm', 'status');
    git('checkout', '-q', '-f', 'main');
  }

  beforeEach(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'drydock-approve-'));
    cpSync(path.join(root, 'examples-repo'), repo, { recursive: true });
    writeFileSync(
      worker(),
      readFileSync(worker(), 'utf8')
        .replace('node-os:v1.0.0', 'node-os:v2.0.0')
        .replace('required: none', 'required: afterCanary'),
    );
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'worker v2, approval after canary');
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('writes the file for the revision the status branch waits on; it validates and the planner counts it for that image only', async () => {
    const image = (await load(repo)).nodeImages.find((i) => i.name === 'worker')!;
    statusAt(image.revision);
    const r = approve('NodeImage/worker');
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^wrote approvals\/worker-after-canary\.yaml: NodeImage\/worker image registry\.example\/node-os:v2\.0\.0, stage afterCanary; approving the revision on the status branch/m,
    );
    const after = await load(repo);
    const counted = findApproval(after, imageTarget(after.nodeImages.find((i) => i.name === 'worker')!), 'afterCanary');
    assert.equal(counted?.name, 'worker-after-canary');
    assert.equal(counted?.image, V2);
    assert.equal(
      findApproval(after, imageTarget(after.nodeImages.find((i) => i.name === 'worker')!), 'start'),
      undefined,
      'the stage asked, not another',
    );
    // The next image is not approved by this file.
    writeFileSync(worker(), readFileSync(worker(), 'utf8').replace('node-os:v2.0.0', 'node-os:v3.0.0'));
    const v3 = await load(repo);
    assert.equal(
      findApproval(v3, imageTarget(v3.nodeImages.find((i) => i.name === 'worker')!), 'afterCanary'),
      undefined,
    );
    assert.equal(approve('NodeImage/worker').status, 1, 'v3 is not what the cluster runs');
  });

  it('a spec a metric gate halted gets the resume file, which the planner counts for that image', async () => {
    const image = (await load(repo)).nodeImages.find((i) => i.name === 'worker')!;
    statusAt(image.revision, {
      breach: 'alert NodeDown firing since 2026-03-02T09:58:00Z',
      since: '2026-03-02T09:58:00Z',
    });
    const r = approve('NodeImage/worker');
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^wrote approvals\/worker-resume\.yaml: NodeImage\/worker image registry\.example\/node-os:v2\.0\.0, stage resume;/m,
    );
    const after = await load(repo);
    const counted = findApproval(after, imageTarget(after.nodeImages.find((i) => i.name === 'worker')!), 'resume');
    assert.equal(counted?.name, 'worker-resume');
    assert.match(
      readFileSync(path.join(repo, 'approvals/worker-resume.yaml'), 'utf8'),
      /^# Resumes the metric halt since 2026-03-02T09:58:00Z: alert NodeDown firing/,
      'each halt gets its own content, so its own commit',
    );
    assert.throws(() => readFileSync(written()), 'no after-canary file');
  });

  it('refuses when the working tree has another revision than the one waiting, and writes nothing', () => {
    statusAt('0123456789abcdef');
    const r = approve('NodeImage/worker');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /the cluster runs revision 0123456789abcdef of NodeImage\/worker .* but this working tree has revision [0-9a-f]{16}/,
    );
    assert.throws(() => readFileSync(written()));
  });

  it("without a status branch approves the working tree's revision and says so; a second run changes nothing", () => {
    const first = approve('NodeImage/worker', '--stage', 'afterCanary');
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /approving the working tree's revision \(no status read: .*drydock\/status/);
    const second = approve('NodeImage/worker', '--stage', 'afterCanary');
    assert.match(second.stdout, /^already written /);
  });

  it("a status file that is no spec status is said so, and the working tree's revision approved", () => {
    git('checkout', '-q', '--orphan', 'drydock/status');
    git('rm', '-rqf', '.');
    mkdirSync(path.join(repo, 'status/NodeImage'), { recursive: true });
    // A hand-made file: it names a revision, but is not what drydock writes (no progress, no counts).
    writeFileSync(
      path.join(repo, 'status/NodeImage/worker.yaml'),
      'kind: NodeImage\nname: worker\nrevision: 0123456789abcdef\n',
    );
    git('add', '-A');
    git('commit', '-qm', 'status');
    git('checkout', '-q', '-f', 'main');
    const r = approve('NodeImage/worker');
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /approving the working tree's revision \(no status read: status\/NodeImage\/worker\.yaml on the status branch is no spec status: progress is not a mapping\)/,
    );
  });

  it('bad targets: what is wrong and how to fix it, exit 2', () => {
    const cases: Array<[string[], RegExp]> = [
      [['worker'], /is not KIND\/NAME with KIND one of NodeImage, NodeOp, NodeOpUpgrade/],
      [['NodeImage/nope'], /NodeImage\/nope is not in the working tree's specs/],
      [['NodeImage/control-plane'], /requires no approval .* pass --stage/],
    ];
    for (const [args, message] of cases) {
      const r = approve(...args);
      assert.equal(r.status, 2, r.stdout);
      assert.match(r.stderr, message);
    }
  });
});
