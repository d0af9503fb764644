import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SandboxError } from '../../src/sandbox/errors.js';
import { fleetRepoPath, readBranch, readTree, seedFleetRepo } from '../../src/sandbox/fleet-repo.js';
import {
  NodeOpLedger,
  runNodeOpScenario,
  type NodeOpDeps,
  type OperationObject,
} from '../../src/sandbox/scenario-nodeop.js';
import type { NodeView, SandboxSnapshot, SpecView } from '../../src/sandbox/view.js';
import { tempDir } from '../support/git-server.js';

type World = Omit<SandboxSnapshot, 'now' | 'startedAt' | 'headline' | 'steps'> & {
  readonly objects?: readonly OperationObject[];
};

function node(name: string, bootID: string, extra: Partial<NodeView> = {}): NodeView {
  return { name, group: 'workers', ready: true, unschedulable: false, bootID, ...extra };
}
function op(phase: string, done: number, extra: Partial<SpecView> = {}): SpecView {
  return { kind: 'NodeOp', name: 'sandbox-reboot', phase, done, total: 2, ...extra };
}
function obj(kind: 'Job' | 'Pod', name: string, nodeName: string, succeeded = true): OperationObject {
  const step = kind === 'Job' ? 'operation' : 'reboot';
  return { uid: `uid-${name}`, kind, name, node: nodeName, step, succeeded, failed: false };
}
const HELD = { operation: 'NodeOp/sandbox-reboot', unschedulable: true };

describe('sandbox nodeop scenario driver', () => {
  let tmp: ReturnType<typeof tempDir>;
  let bare: string;
  beforeEach(() => {
    tmp = tempDir('drydock-nodeop-');
    const examples = path.join(tmp.dir, 'examples');
    mkdirSync(examples);
    mkdirSync(path.join(tmp.dir, 'git'));
    mkdirSync(path.join(tmp.dir, 'work'));
    writeFileSync(
      path.join(examples, 'worker.yaml'),
      'kind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: os:1\n',
    );
    seedFleetRepo(path.join(tmp.dir, 'git'), examples, path.join(tmp.dir, 'work'));
    bare = fleetRepoPath(path.join(tmp.dir, 'git'));
  });
  afterEach(() => tmp.remove());

  /** Snapshots and watch events from a script; each step sees the tracked head of the real repository. */
  function deps(script: ((head: string) => World)[], timeoutTicks = 100): NodeOpDeps & { watching: () => boolean } {
    let tick = 0;
    let ledger: NodeOpLedger | undefined;
    let watching = false;
    return {
      bare,
      workDir: path.join(tmp.dir, 'work'),
      workerGroups: ['workers'],
      watch: async (l) => {
        ledger = l;
        watching = true;
        return async () => {
          watching = false;
        };
      },
      watching: () => watching,
      async nextSnapshot() {
        const head = readBranch(bare, 'main')?.commit ?? '';
        const step = script[Math.min(tick, script.length - 1)];
        tick += 1;
        assert.ok(step);
        const { objects, ...world } = step(head);
        for (const o of objects ?? []) ledger?.observeObject(o);
        return { now: '', startedAt: '', headline: '', steps: [], ...world };
      },
      setHeadline: () => undefined,
      timeoutMs: timeoutTicks * 1000,
      signal: new AbortController().signal,
      failure: () => undefined,
      log: 'drydock.log',
      now: () => tick * 1000,
    };
  }

  const git = (head: string, source: string) => ({
    branch: 'main',
    head: head.slice(0, 7),
    statusBranch: 'drydock/status',
    statusSource: source.slice(0, 7),
  });

  it('waits for a settled start, pushes the NodeOp, follows it and checks every worker', async () => {
    let base = '';
    const d = deps([
      // the examples' own NodeOpUpgrade still holds a worker
      (head) => ({
        git: git(head, head),
        specs: [{ kind: 'NodeOpUpgrade', name: 'edge-os', phase: 'Progressing', done: 1, total: 2 }],
        nodes: [node('w1', 'a', { operation: 'NodeOp/edge-os' }), node('w2', 'c')],
      }),
      (head) => ((base = head), { git: git(head, head), specs: [], nodes: [node('w1', 'a'), node('w2', 'c')] }),
      (head) => ({ git: git(head, base), specs: [], nodes: [node('w1', 'a'), node('w2', 'c')] }),
      (head) => ({
        git: git(head, head),
        specs: [op('Progressing', 0)],
        nodes: [node('w1', 'a', { ...HELD, phase: 'Updating' }), node('w2', 'c', { ...HELD, phase: 'Rebooting' })],
        objects: [obj('Job', 'j1', 'w1', false), obj('Job', 'j2', 'w2'), obj('Pod', 'r2', 'w2')],
      }),
      (head) => ({
        git: git(head, head),
        specs: [op('Complete', 2)],
        nodes: [node('w1', 'b', { phase: 'Done' }), node('w2', 'd')],
        objects: [obj('Job', 'j1', 'w1'), obj('Pod', 'r1', 'w1')],
      }),
    ]);
    const summary = await runNodeOpScenario(d);
    assert.equal(summary.commit, readBranch(bare, 'main')?.commit);
    assert.equal(summary.workers, 2);
    assert.equal(summary.maxInFlight, 2);
    // pushed at tick 2, checked at tick 5
    assert.equal(summary.durationMs, 3000);
    assert.match(
      readTree(bare, 'main', 'operations').get('operations/sandbox-reboot.yaml') ?? '',
      /rebootOnSuccess: true/,
    );
    assert.equal(d.watching(), false, 'the watch is stopped at the end');
  });

  it('stops at once when the NodeOp halts, with its reason', async () => {
    const d = deps([
      (head) => ({ git: git(head, head), specs: [], nodes: [node('w1', 'a'), node('w2', 'c')] }),
      (head) => ({
        git: git(head, head),
        specs: [op('Halted', 0, { lastError: 'Job j1 on w1 failed' })],
        nodes: [node('w1', 'a'), node('w2', 'c')],
      }),
    ]);
    await assert.rejects(runNodeOpScenario(d), (err: SandboxError) => {
      assert.equal(err.code, 'CheckFailed');
      assert.equal(err.message, 'NodeOp/sandbox-reboot is Halted: Job j1 on w1 failed');
      return true;
    });
    assert.equal(d.watching(), false);
  });

  it('does not pass a Complete status when a worker ran its Job twice, and says so when time runs out', async () => {
    const d = deps(
      [
        (head) => ({ git: git(head, head), specs: [], nodes: [node('w1', 'a'), node('w2', 'c')] }),
        (head) => ({
          git: git(head, head),
          specs: [op('Complete', 2)],
          nodes: [node('w1', 'b'), node('w2', 'd')],
          objects: [
            obj('Job', 'j1', 'w1'),
            obj('Job', 'j1-again', 'w1'),
            obj('Pod', 'r1', 'w1'),
            obj('Job', 'j2', 'w2'),
            obj('Pod', 'r2', 'w2'),
          ],
        }),
      ],
      5,
    );
    await assert.rejects(runNodeOpScenario(d), (err: SandboxError) => {
      assert.equal(err.code, 'Timeout');
      assert.deepEqual(err.data.problems, ['node w1 had 2 operation Jobs, expected 1']);
      return true;
    });
  });
});
