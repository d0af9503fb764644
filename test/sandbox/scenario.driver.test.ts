import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CloudProvider, GroupDescription, Instance } from '../../src/cloud/provider.js';
import type { SandboxError } from '../../src/sandbox/errors.js';
import { fleetRepoPath, readBranch, seedFleetRepo } from '../../src/sandbox/fleet-repo.js';
import { runUpgradeScenario, type ScenarioDeps } from '../../src/sandbox/scenario.js';
import type { NodeView, SandboxSnapshot, SpecView } from '../../src/sandbox/view.js';
import { tempDir } from '../support/git-server.js';

const V1 = 'os:1.0.0';
const V2 = 'os:1.0.1';

function node(name: string, image: string, extra: Partial<NodeView> = {}): NodeView {
  return { name, group: 'workers', image, ready: true, unschedulable: false, ...extra };
}
function spec(phase: string, done: number, extra: Partial<SpecView> = {}): SpecView {
  return { kind: 'NodeImage', name: 'worker', phase, done, total: 2, ...extra };
}
function instance(id: string, image: string): Instance {
  return { id, providerID: `sim://workers/${id}`, image, state: 'running', createdAt: '2024-01-01T00:00:00Z' };
}

/** A cloud that only answers describeGroup, from a fixed list. */
function cloudWith(instances: () => readonly Instance[]): CloudProvider {
  const fail = (): never => {
    throw new Error('the scenario must only read the cloud');
  };
  return {
    name: 'sim',
    listGroups: async () => ['workers'],
    describeGroup: async (groupId): Promise<GroupDescription> => ({
      groupId,
      image: V2,
      targetSize: 2,
      instances: instances(),
    }),
    setGroupImage: fail,
    addCapacity: fail,
    removeInstance: fail,
    instanceForProviderID: () => undefined,
  };
}

describe('sandbox upgrade scenario driver', () => {
  let tmp: ReturnType<typeof tempDir>;
  let bare: string;
  beforeEach(() => {
    tmp = tempDir('drydock-scenario-');
    const examples = path.join(tmp.dir, 'examples');
    mkdirSync(examples);
    mkdirSync(path.join(tmp.dir, 'git'));
    mkdirSync(path.join(tmp.dir, 'work'));
    writeFileSync(
      path.join(examples, 'worker.yaml'),
      `kind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: ${V1}\n`,
    );
    seedFleetRepo(path.join(tmp.dir, 'git'), examples, path.join(tmp.dir, 'work'));
    bare = fleetRepoPath(path.join(tmp.dir, 'git'));
  });
  afterEach(() => tmp.remove());

  /**
   * Snapshots from a script: each step sees the tracked head (read from the real repository)
   * and returns what the world looks like then.
   */
  function deps(
    script: ((head: string, tick: number) => Omit<SandboxSnapshot, 'now' | 'startedAt' | 'headline' | 'steps'>)[],
    instances: () => readonly Instance[],
    timeoutTicks = 100,
  ): ScenarioDeps & { headlines: string[] } {
    let tick = 0;
    const headlines: string[] = [];
    return {
      bare,
      workDir: path.join(tmp.dir, 'work'),
      groups: [{ groupId: 'workers', nodeImage: 'worker', size: 2 }],
      cloud: cloudWith(instances),
      headlines,
      async nextSnapshot() {
        const head = readBranch(bare, 'main')?.commit ?? '';
        const step = script[Math.min(tick, script.length - 1)];
        tick += 1;
        assert.ok(step);
        return {
          now: '2024-01-01T00:00:00Z',
          startedAt: '2024-01-01T00:00:00Z',
          headline: '',
          steps: [],
          ...step(head, tick),
        };
      },
      setHeadline: (text) => headlines.push(text),
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
    statusHead: 'fffffff',
    statusSource: source.slice(0, 7),
  });

  it('waits for a settled start, pushes the image, follows the rollout and checks the end', async () => {
    let upgraded = false;
    let base = '';
    const d = deps(
      [
        // drydock has not reported yet
        (head) => ({
          git: { branch: 'main', head: head.slice(0, 7), statusBranch: 'drydock/status' },
          specs: [],
          nodes: [node('w1', V1), node('w2', V1)],
        }),
        // settled on the seed commit
        (head) => (
          (base = head),
          { git: git(head, head), specs: [spec('Complete', 2)], nodes: [node('w1', V1), node('w2', V1)] }
        ),
        // the upgrade commit is in; drydock still reports on the old one
        (head) => ({ git: git(head, base), specs: [spec('Complete', 2)], nodes: [node('w1', V1), node('w2', V1)] }),
        (head) => ({
          git: git(head, head),
          specs: [spec('Progressing', 0)],
          nodes: [node('w1', V1, { unschedulable: true, phase: 'Draining' }), node('w2', V1), node('w3', V2)],
        }),
        (head) => ({
          git: git(head, head),
          specs: [spec('Progressing', 1)],
          nodes: [node('w2', V1, { unschedulable: true, phase: 'Cordoned' }), node('w3', V2), node('w4', V2)],
        }),
        (head) => (
          (upgraded = true),
          {
            git: git(head, head),
            specs: [spec('Complete', 2)],
            nodes: [node('w3', V2, { phase: 'Done' }), node('w4', V2)],
          }
        ),
      ],
      () => (upgraded ? [instance('i-3', V2), instance('i-4', V2)] : [instance('i-1', V1), instance('i-2', V1)]),
    );
    const summary = await runUpgradeScenario(d);
    assert.deepEqual(summary.changes, [{ nodeImage: 'worker', file: 'worker.yaml', from: V1, to: V2 }]);
    assert.equal(summary.commit, readBranch(bare, 'main')?.commit);
    assert.equal(summary.nodesReplaced, 2);
    assert.equal(summary.waves, 2);
    // pushed at tick 2, done at tick 6
    assert.equal(summary.durationMs, 4000);
    assert.deepEqual(d.headlines, [
      'scenario upgrade: waiting for drydock to report on the current specs',
      `scenario upgrade: rolling out worker → ${V2}`,
    ]);
  });

  it('stops at once when the rollout halts, with its reason', async () => {
    const d = deps(
      [
        (head) => ({ git: git(head, head), specs: [spec('Complete', 2)], nodes: [node('w1', V1), node('w2', V1)] }),
        (head) => ({
          git: git(head, head),
          specs: [spec('Halted', 0, { lastError: 'drain of w1 timed out: PDB demo/web allows 0 disruptions' })],
          nodes: [node('w1', V1)],
        }),
      ],
      () => [],
    );
    await assert.rejects(runUpgradeScenario(d), (err: SandboxError) => {
      assert.equal(err.code, 'CheckFailed');
      assert.equal(err.message, 'NodeImage/worker is Halted: drain of w1 timed out: PDB demo/web allows 0 disruptions');
      return true;
    });
  });

  it('times out naming what the rollout still waits for', async () => {
    const d = deps(
      [
        (head) => ({ git: git(head, head), specs: [spec('Complete', 2)], nodes: [node('w1', V1), node('w2', V1)] }),
        (head) => ({
          git: git(head, head),
          specs: [spec('Progressing', 1, { waitingFor: 'soak of the canary until 00:02' })],
          nodes: [node('w3', V2), node('w2', V1)],
        }),
      ],
      () => [],
      5,
    );
    await assert.rejects(runUpgradeScenario(d), (err: SandboxError) => {
      assert.equal(err.code, 'Timeout');
      assert.equal(err.data.waitingFor, 'NodeImage/worker Progressing 1/2 (waiting: soak of the canary until 00:02)');
      assert.equal(
        err.message,
        'the upgrade did not finish within 5s; waiting for NodeImage/worker Progressing 1/2 (waiting: soak of the canary until 00:02)',
      );
      return true;
    });
  });
});
