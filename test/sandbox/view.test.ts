import { strict as assert } from 'node:assert';
import {
  formatDuration,
  gitSyncState,
  progressBar,
  renderChanges,
  renderView,
  type GitView,
  type SandboxSnapshot,
} from '../../src/sandbox/view.js';
import { refusal } from '../../src/sandbox/snapshot.js';
import { renderErrors } from '../../src/report/status-docs.js';
import type { StatusReport } from '../../src/report/types.js';

const base: SandboxSnapshot = {
  now: '2024-01-01T00:03:12Z',
  startedAt: '2024-01-01T00:00:00Z',
  headline: 'running',
  steps: [],
  specs: [],
  nodes: [],
};

describe('sandbox view', () => {
  describe('formatDuration', () => {
    const cases: [number, string][] = [
      [0, '0s'],
      [999, '0s'],
      [45_000, '45s'],
      [192_000, '3m12s'],
      [3_720_000, '1h2m'],
      [-5_000, '0s'],
    ];
    for (const [ms, text] of cases) it(`${ms}ms → ${text}`, () => assert.equal(formatDuration(ms), text));
  });

  describe('progressBar', () => {
    const cases: [number, number, number, string][] = [
      [0, 6, 6, '[░░░░░░]'],
      [2, 6, 6, '[██░░░░]'],
      [5, 6, 4, '[███░]'],
      [6, 6, 4, '[████]'],
      [9, 6, 4, '[████]'],
      [0, 0, 4, '[░░░░]'],
    ];
    for (const [done, total, width, bar] of cases) {
      it(`${done}/${total} in ${width} → ${bar}`, () => assert.equal(progressBar(done, total, width), bar));
    }
  });

  describe('gitSyncState', () => {
    const git: GitView = { branch: 'main', statusBranch: 'drydock/status' };
    const cases: [string, GitView, string][] = [
      ['empty repo', git, 'main: no commits yet'],
      ['no status yet', { ...git, head: '1a2b3c4' }, "waiting for drydock's first status commit on drydock/status"],
      [
        'in sync',
        { ...git, head: '1a2b3c4', statusHead: '9f8e7d6', statusSource: '1a2b3c4d5e' },
        'in sync: drydock/status reports on main 1a2b3c4',
      ],
      [
        'behind',
        { ...git, head: '1a2b3c4', statusHead: '9f8e7d6', statusSource: '0000aaa1111bbbb' },
        'syncing: main is at 1a2b3c4, drydock/status still reports on 0000aaa',
      ],
    ];
    for (const [name, input, text] of cases) it(name, () => assert.equal(gitSyncState(input), text));
  });

  describe('renderView', () => {
    it('draws steps while starting, then specs and nodes as columns', () => {
      const lines = renderView({
        ...base,
        steps: [
          {
            title: 'control plane',
            status: 'done',
            startedAt: '2024-01-01T00:00:00Z',
            endedAt: '2024-01-01T00:00:30Z',
          },
          { title: 'sim cloud', status: 'running', startedAt: '2024-01-01T00:03:00Z', detail: '4/9 nodes joined' },
          { title: 'drydock', status: 'pending' },
        ],
        specs: [
          {
            kind: 'NodeImage',
            name: 'worker',
            phase: 'Progressing',
            done: 2,
            total: 6,
            waitingFor: 'PDB demo/web allows 0 disruptions',
          },
        ],
        nodes: [
          {
            name: 'worker-0',
            group: 'workers',
            image: 'v2',
            ready: true,
            unschedulable: false,
            phase: 'Done',
            phaseSince: '2024-01-01T00:02:00Z',
          },
          {
            name: 'worker-1',
            group: 'workers',
            image: 'v1',
            ready: true,
            unschedulable: true,
            phase: 'Draining',
            phaseSince: '2024-01-01T00:03:00Z',
          },
        ],
      });
      assert.deepEqual(lines, [
        'drydock sandbox · up 3m12s · running',
        '',
        '  ✓  control plane  30s',
        '  …  sim cloud      12s  4/9 nodes joined',
        '  ·  drydock',
        '',
        '  NodeImage/worker  [██████░░░░░░░░░░░░░░]  2/6  Progressing  waiting: PDB demo/web allows 0 disruptions',
        '',
        '  NODE      GROUP    IMAGE  STATE           OPERATION  PHASE     SINCE  REASON',
        '  worker-0  workers  v2     Ready           -          Done      1m12s',
        '  worker-1  workers  v1     Ready,cordoned  -          Draining  12s',
      ]);
    });

    it('node operations (NodeOp, NodeOpUpgrade, inPlace) show progress, their nodes by phase, and who holds each node', () => {
      const lines = renderView(
        {
          ...base,
          specs: [
            {
              kind: 'NodeImage',
              name: 'edge',
              phase: 'Progressing',
              done: 1,
              total: 2,
              nodePhases: { Updating: 1 },
            },
            {
              kind: 'NodeOp',
              name: 'rotate-logs',
              phase: 'Progressing',
              done: 2,
              total: 5,
              nodePhases: { Pending: 1, Rebooting: 1, Updating: 1 },
              waitingFor: 'concurrency 2 reached',
            },
            {
              kind: 'NodeOpUpgrade',
              name: 'os',
              phase: 'Halted',
              done: 1,
              total: 4,
              nodePhases: { Failed: 1, Pending: 2 },
              lastError: 'job kube-system/os-w3 failed',
            },
          ],
          nodes: [
            {
              name: 'edge-0',
              image: 'v2',
              ready: true,
              unschedulable: true,
              operation: 'NodeImage/edge',
              phase: 'Updating',
              phaseSince: '2024-01-01T00:03:00Z',
              job: 'kube-system/edge-0-upd',
            },
            {
              name: 'w1',
              group: 'workers',
              image: 'v1',
              ready: false,
              unschedulable: true,
              operation: 'NodeOp/rotate-logs',
              phase: 'Rebooting',
              phaseSince: '2024-01-01T00:02:12Z',
              job: 'kube-system/rl-w1',
            },
            {
              name: 'w3',
              group: 'workers',
              image: 'v1',
              ready: true,
              unschedulable: false,
              operation: 'NodeOpUpgrade/os',
              phase: 'Failed',
              phaseSince: '2024-01-01T00:01:00Z',
              reason: 'job failed',
              job: 'kube-system/os-w3',
            },
          ],
        },
        140,
      );
      assert.deepEqual(lines, [
        'drydock sandbox · up 3m12s · running',
        '',
        '  NodeImage/edge      [██████████░░░░░░░░░░]  1/2  Progressing  1 Updating',
        '  NodeOp/rotate-logs  [████████░░░░░░░░░░░░]  2/5  Progressing  1 Pending, 1 Updating, 1 Rebooting · waiting: concurrency 2 reached',
        '  NodeOpUpgrade/os    [█████░░░░░░░░░░░░░░░]  1/4  Halted       2 Pending, 1 Failed · job kube-system/os-w3 failed',
        '',
        '  NODE    GROUP    IMAGE  STATE              OPERATION           PHASE      SINCE  REASON',
        '  edge-0  -        v2     Ready,cordoned     NodeImage/edge      Updating   12s    job kube-system/edge-0-upd',
        '  w1      workers  v1     NotReady,cordoned  NodeOp/rotate-logs  Rebooting  1m0s   job kube-system/rl-w1',
        '  w3      workers  v1     Ready              NodeOpUpgrade/os    Failed     2m12s  job failed',
      ]);
    });

    it('hides the steps once all are done and wraps long lines at a space, never cutting a word', () => {
      const lines = renderView(
        {
          ...base,
          steps: [{ title: 'control plane', status: 'done' }],
          problem: 'the API server is not reachable: connection refused',
        },
        30,
      );
      assert.deepEqual(lines, [
        'drydock sandbox · up 3m12s ·',
        '  running',
        '',
        '  ! the API server is not',
        '      reachable: connection',
        '      refused',
      ]);
    });
  });

  describe('renderChanges', () => {
    it('says everything the first time, then only what changed', () => {
      const first: SandboxSnapshot = {
        ...base,
        nodesRead: true,
        specs: [{ kind: 'NodeImage', name: 'worker', phase: 'Progressing', done: 0, total: 6 }],
        nodes: [
          { name: 'worker-0', group: 'workers', image: 'v1', ready: true, unschedulable: false },
          { name: 'worker-1', group: 'workers', image: 'v1', ready: true, unschedulable: false },
        ],
      };
      assert.deepEqual(renderChanges(undefined, first), [
        '[3m12s] running',
        '[3m12s] NodeImage/worker [░░░░░░░░░░░░░░░░░░░░] 0/6 Progressing',
        '[3m12s] node worker-0 found (workers, v1)',
        '[3m12s] node worker-1 found (workers, v1)',
      ]);
      const second: SandboxSnapshot = {
        ...first,
        now: '2024-01-01T00:03:20Z',
        nodes: [
          { name: 'worker-1', group: 'workers', image: 'v1', ready: true, unschedulable: true, phase: 'Cordoned' },
          { name: 'worker-6', group: 'workers', image: 'v2', ready: false, unschedulable: false },
        ],
      };
      assert.deepEqual(renderChanges(first, second), [
        '[3m20s] node worker-1 Cordoned Ready,cordoned',
        '[3m20s] node worker-6 joined (workers, v2)',
        '[3m20s] node worker-0 removed',
      ]);
      assert.deepEqual(renderChanges(second, second), []);
    });

    it("a node operation's step is one line naming the operation and its Job; a spec line when its nodes move on", () => {
      const spec = { kind: 'NodeOp', name: 'rotate-logs', phase: 'Progressing', done: 0, total: 2 };
      const node = { name: 'w1', group: 'workers', image: 'v1', ready: true, unschedulable: true };
      const updating: SandboxSnapshot = {
        ...base,
        nodesRead: true,
        specs: [{ ...spec, nodePhases: { Updating: 1, Pending: 1 } }],
        nodes: [{ ...node, operation: 'NodeOp/rotate-logs', phase: 'Updating', job: 'kube-system/rl-w1' }],
      };
      const rebooting: SandboxSnapshot = {
        ...updating,
        specs: [{ ...spec, nodePhases: { Rebooting: 1, Pending: 1 } }],
        nodes: [
          { ...node, ready: false, operation: 'NodeOp/rotate-logs', phase: 'Rebooting', job: 'kube-system/rl-w1' },
        ],
      };
      assert.deepEqual(renderChanges(updating, rebooting), [
        '[3m12s] NodeOp/rotate-logs [░░░░░░░░░░░░░░░░░░░░] 0/2 Progressing 1 Pending, 1 Rebooting',
        '[3m12s] node w1 Rebooting NotReady,cordoned (NodeOp/rotate-logs, job kube-system/rl-w1)',
      ]);
    });

    it('a node has joined only when a look before it did not find it (a resumed sandbox finds its nodes)', () => {
      const node = { name: 'worker-0', group: 'workers', image: 'v1', ready: true, unschedulable: false };
      const notLooked: SandboxSnapshot = { ...base, headline: 'h' };
      const lookedEmpty: SandboxSnapshot = { ...notLooked, nodesRead: true };
      const withNode: SandboxSnapshot = { ...lookedEmpty, nodes: [node] };
      assert.deepEqual(renderChanges(notLooked, withNode), ['[3m12s] node worker-0 found (workers, v1)']);
      assert.deepEqual(renderChanges(lookedEmpty, withNode), ['[3m12s] node worker-0 joined (workers, v1)']);
    });
  });

  describe('a refused commit, from the errors.yaml drydock writes', () => {
    const IN_FORCE = '2bdd2320000000000000000000000000000000aa';
    const REFUSED = '44c13e30000000000000000000000000000000bb';
    const error = (file: string) => ({
      file,
      line: 7,
      column: 10,
      code: 'schema',
      message: 'image must be a string',
      hint: 'quote it',
    });
    const refusedBy = (errors: ReturnType<typeof error>[]): GitView => {
      const report: StatusReport = {
        cluster: 'sandbox',
        sourceCommit: IN_FORCE,
        newestCommit: REFUSED,
        specs: [],
        errors,
      };
      const refused = refusal(renderErrors(report));
      assert.ok(refused);
      // What RepoReader reads: the tracked branch's head, the status commit and its Drydock-Source.
      return {
        branch: 'main',
        head: '44c13e3',
        statusBranch: 'drydock/status',
        statusHead: '9f8e7d6',
        statusSource: IN_FORCE,
        refused,
      };
    };

    it('reads as refused, names the commit in force, one error in the singular, once in the change log', () => {
      const snapshot: SandboxSnapshot = { ...base, git: refusedBy([error('images/worker.yaml')]) };
      assert.deepEqual(renderView(snapshot, 200).slice(2), [
        '  git   refused: main 44c13e3 is not applied; 2bdd232 stays in force',
        '  ! commit 44c13e3 refused (1 error; errors.yaml on drydock/status): fix it in a new commit',
        '      images/worker.yaml:7:10: image must be a string',
      ]);
      assert.deepEqual(renderChanges(undefined, snapshot).slice(1), [
        '[3m12s] git refused: main 44c13e3 is not applied; 2bdd232 stays in force',
        '[3m12s] ! commit 44c13e3 refused: images/worker.yaml:7:10: image must be a string',
      ]);
      assert.deepEqual(renderChanges(snapshot, { ...snapshot, now: '2024-01-01T00:04:00Z' }), []);
    });

    it('several errors: "fix them", the first three shown and how many more errors.yaml holds', () => {
      const git = refusedBy(['a', 'b', 'c', 'd', 'e'].map((f) => error(`${f}.yaml`)));
      assert.deepEqual(renderView({ ...base, git }, 200).slice(3), [
        '  ! commit 44c13e3 refused (5 errors; errors.yaml on drydock/status): fix them in a new commit',
        '      a.yaml:7:10: image must be a string',
        '      b.yaml:7:10: image must be a string',
        '      c.yaml:7:10: image must be a string',
        '      … 2 more errors in errors.yaml',
      ]);
    });

    it('a newer commit after the refused one is a sync under way again', () => {
      const git = { ...refusedBy([error('images/worker.yaml')]), head: '5555aaa' };
      assert.equal(gitSyncState(git), 'syncing: main is at 5555aaa, drydock/status still reports on 2bdd232');
    });
  });

  it('says how long ago drydock fetched, from its metrics', () => {
    const git: GitView = {
      branch: 'main',
      head: '1a2b3c4',
      statusBranch: 'drydock/status',
      statusHead: '9f8e7d6',
      statusSource: '1a2b3c4',
      lastFetchSeconds: 2.4,
    };
    assert.deepEqual(renderView({ ...base, git }).slice(2), [
      '  git   in sync: drydock/status reports on main 1a2b3c4 · drydock fetched 2s ago',
    ]);
  });
});
