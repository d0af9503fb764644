/**
 * End to end, the approval round trip as a person does it: a worker rollout that needs an
 * approval after its canary stops there and says so on the status branch; the person clones
 * the repository, runs `drydock approve NodeImage/worker` (the command line, as a user runs it),
 * commits and pushes the file it wrote; drydock counts it, finishes the rollout and records
 * who approved on the status branch. Real control plane, real Git server, the sim cloud.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { useControlPlane, eventually } from '../support/control-plane.js';
import { git, gitEnv, withUser } from '../support/git-server.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import {
  afterRounds,
  DRYDOCK_BIN,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  nodes,
  startWorldWithDrydock,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
  type NodeView,
} from './world.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The command line as a user runs it, in `cwd`; asynchronous, since the Git server runs in this process. */
function drydockCli(cwd: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [DRYDOCK_BIN, ...args], { cwd, env: { ...process.env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface WorkerDoc {
  revision?: string;
  phase?: string;
  waitingFor?: string;
  progress?: { done: number; total: number };
  approvals?: {
    stage: string;
    name: string;
    file?: string;
    approvedBy?: { name: string; email: string; commit: string };
  }[];
}

const workers = async (w: () => Promise<NodeView[]>): Promise<NodeView[]> =>
  (await w()).filter((n) => n.group === 'workers');

describe('e2e: drydock approve, the round trip on the real control plane', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  const workerDoc = async (): Promise<WorkerDoc | undefined> => {
    const text = await repo?.statusFile('status/NodeImage/worker.yaml');
    return text === undefined ? undefined : (parse(text) as WorkerDoc);
  };
  const workerNodes = (): Promise<NodeView[]> => workers(() => nodes(cp().adminKubeConfig()));

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, drydock } = await startWorldWithDrydock(cp(), dirs));
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('waits after the canary, `drydock approve` writes the file, the merge lets it finish, status names the approver', async () => {
    const fleet = repo;
    assert.ok(fleet);
    const rollout = { canary: { nodes: 1, soak: '1s' }, approval: { required: 'afterCanary' } };
    const change = await fleet.push(
      {
        'images/worker.yaml':
          fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V1, workerRollout: rollout })['images/worker.yaml'] ?? '',
      },
      'images: worker v2, approval after the canary',
    );

    // 1. The canary is replaced and soaks, then the rollout waits for a person, and says which file.
    const waiting = await eventually(
      'the worker rollout waits for its after-canary approval',
      async () => {
        const doc = await workerDoc();
        if (!doc?.waitingFor?.startsWith('approval needed (after the canary wave)'))
          throw new Error(`status: ${JSON.stringify(doc)}`);
        return doc;
      },
      { timeoutMs: 120_000 },
    );
    assert.match(waiting.waitingFor ?? '', /approvals\/worker-after-canary\.yaml/);
    const readme = (await fleet.statusFile('README.md')) ?? '';
    assert.match(readme, /## Needs a person/);
    assert.match(readme, /`drydock approve NodeImage\/worker --stage afterCanary` writes the file/);
    // Held there: one worker on v2 (the canary), the other five untouched, a while later too.
    assert.ok(drydock);
    await afterRounds(drydock);
    const held = await workerNodes();
    assert.equal(held.filter((n) => n.image === IMAGE_V2).length, 1, JSON.stringify(held.map((n) => n.image)));
    assert.equal(held.filter((n) => n.image === IMAGE_V1).length, 5);
    assert.ok(
      held.every((n) => !n.unschedulable),
      'no node is left cordoned while the rollout waits',
    );
    assert.equal((await workerDoc())?.approvals, undefined, 'no approval counted yet');

    // 2. A person: clone, `drydock approve`, commit as themselves, push.
    const clone = tempDir('drydock-e2e-approver-');
    dirs.push(clone);
    await git(clone, ['clone', '-q', withUser(fleet.url), '.']);
    const approve = await drydockCli(clone, ['approve', 'NodeImage/worker']);
    assert.equal(approve.code, 0, approve.stderr);
    assert.match(
      approve.stdout,
      /^wrote clusters\/approvals\/worker-after-canary\.yaml: NodeImage\/worker image registry\.example\/node-os:v2\.0\.0, stage afterCanary; approving the revision on the status branch/,
    );
    const file = readFileSync(path.join(clone, 'clusters/approvals/worker-after-canary.yaml'), 'utf8');
    const approval = parse(file) as { kind: string; spec: { target: unknown; image: string; stage: string } };
    assert.deepEqual(
      { kind: approval.kind, ...approval.spec },
      { kind: 'Approval', target: { kind: 'NodeImage', name: 'worker' }, image: IMAGE_V2, stage: 'afterCanary' },
    );
    // The e2e fleet's drydock.yaml reads only clusters/ and images/, so the file goes under the
    // first of them (an approvals/ at the top would never be read, and never count).
    const approver = gitEnv(50, 'Grace Hopper', 'grace@example.org');
    await git(clone, ['add', '-A'], approver);
    await git(clone, ['commit', '-q', '-m', 'approve NodeImage/worker (afterCanary)'], approver);
    await git(clone, ['push', '-q', 'origin', 'HEAD:main'], approver);
    const approvalCommit = await git(clone, ['rev-parse', 'HEAD']);
    assert.notEqual(approvalCommit, change);

    // 3. drydock counts it: every worker ends on v2, and status records who approved, from which commit.
    await eventually(
      'every worker on v2, none locked',
      async () => {
        const ws = await workerNodes();
        const off = ws.filter(
          (n) =>
            n.image !== IMAGE_V2 ||
            !n.ready ||
            n.unschedulable ||
            (n.annotations['drydock.dev/phase'] ?? 'Done') !== 'Done',
        );
        if (ws.length !== 6 || off.length > 0)
          throw new Error(`${ws.length} workers; not done: ${off.map((n) => n.name).join(', ')}`);
        return true;
      },
      { timeoutMs: 180_000 },
    );
    const done = await eventually(
      'status: complete, with its approver',
      async () => {
        const doc = await workerDoc();
        if (doc?.phase !== 'Complete' || doc.approvals === undefined) throw new Error(`status: ${JSON.stringify(doc)}`);
        return doc;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(done.progress, { done: 6, total: 6 });
    assert.deepEqual(
      (done.approvals ?? []).map((a) => ({ stage: a.stage, name: a.name, file: a.file, by: a.approvedBy })),
      [
        {
          stage: 'afterCanary',
          name: 'worker-after-canary',
          file: 'clusters/approvals/worker-after-canary.yaml',
          by: {
            name: 'Grace Hopper',
            email: 'grace@example.org',
            commit: approvalCommit,
            at: '2024-01-01T00:50:00.000Z',
          },
        },
      ],
    );
    assert.equal(done.revision, waiting.revision, 'the revision approved is the one that waited');
  });
});
