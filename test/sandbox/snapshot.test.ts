import { strict as assert } from 'node:assert';
import type { V1Node } from '@kubernetes/client-node';
import type { ApprovalWanted, SpecStatus } from '../../src/plan/types.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { metricValue, nodeViews, refusal, specViews } from '../../src/sandbox/snapshot.js';
import { specStatus } from '../support/spec-status.js';

describe('sandbox snapshot', () => {
  it('reads a node the way kubectl shows it', () => {
    const nodes: V1Node[] = [
      {
        metadata: {
          name: 'workers-i-2',
          labels: { 'sim.drydock.dev/group': 'workers' },
          annotations: {
            'sim.drydock.dev/image': 'os:1',
            'drydock.dev/phase': 'Draining',
            'drydock.dev/phase-since': '2024-01-01T00:00:00Z',
          },
        },
        spec: { unschedulable: true },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      },
      {
        metadata: { name: 'control-plane-i-0', labels: { 'sim.drydock.dev/group': 'control-plane' } },
        status: { nodeInfo: { osImage: 'os:1' } as never },
      },
      {
        metadata: { name: 'workers-i-1', labels: { 'sim.drydock.dev/group': 'workers' } },
        status: { conditions: [{ type: 'Ready', status: 'False' }] },
      },
      {
        metadata: {
          name: 'workers-i-3',
          labels: { 'sim.drydock.dev/group': 'workers' },
          annotations: {
            'drydock.dev/operation': 'NodeOp/rotate-logs@0123456789abcdef',
            'drydock.dev/phase': 'Rebooting',
            'drydock.dev/job': 'kube-system/rotate-logs-workers-i-3-0123456789',
          },
        },
        spec: { unschedulable: true },
      },
      {
        // Done keeps the lock as a record: nothing holds the node any more.
        metadata: {
          name: 'workers-i-4',
          labels: { 'sim.drydock.dev/group': 'workers' },
          annotations: { 'drydock.dev/operation': 'NodeImage/worker@v2', 'drydock.dev/phase': 'Done' },
        },
      },
    ];
    assert.deepEqual(nodeViews(nodes), [
      {
        name: 'control-plane-i-0',
        group: 'control-plane',
        image: 'os:1',
        ready: false,
        unschedulable: false,
        osImage: 'os:1',
      },
      { name: 'workers-i-1', group: 'workers', ready: false, unschedulable: false },
      {
        name: 'workers-i-2',
        group: 'workers',
        image: 'os:1',
        ready: true,
        unschedulable: true,
        phase: 'Draining',
        phaseSince: '2024-01-01T00:00:00Z',
      },
      {
        name: 'workers-i-3',
        group: 'workers',
        ready: false,
        unschedulable: true,
        phase: 'Rebooting',
        operation: 'NodeOp/rotate-logs',
        job: 'kube-system/rotate-logs-workers-i-3-0123456789',
      },
      { name: 'workers-i-4', group: 'workers', ready: false, unschedulable: false, phase: 'Done' },
    ]);
  });

  /** The status branch's files under status/ for these specs, as drydock writes them. */
  const written = (...specs: SpecStatus[]): Map<string, string> =>
    new Map(
      [...renderStatusDocs({ cluster: 'c', sourceCommit: '1a2b3c4', specs })].filter(([f]) => f.startsWith('status/')),
    );
  const wanted: ApprovalWanted = {
    stage: 'afterCanary',
    path: 'approvals/worker-after-canary.yaml',
    target: { kind: 'NodeImage', name: 'worker', revision: 'r1', image: 'os:v2' },
  };
  const cases: [string, Map<string, string>, ReturnType<typeof specViews>][] = [
    [
      'a status file',
      written(
        specStatus('NodeImage', 'worker', {
          progress: { done: 2, total: 6 },
          waitingFor: 'PDB demo/web allows 0 disruptions',
        }),
      ),
      [
        {
          kind: 'NodeImage',
          name: 'worker',
          phase: 'Progressing',
          done: 2,
          total: 6,
          waitingFor: 'PDB demo/web allows 0 disruptions',
          sourceCommit: '1a2b3c4',
        },
      ],
    ],
    [
      'a wait for an approval: the file it wants, as the status has it',
      written(
        specStatus('NodeImage', 'worker', {
          phase: 'Waiting',
          progress: { done: 1, total: 6 },
          waitingFor: 'approval needed (after the canary wave): merge approvals/worker-after-canary.yaml',
          approvalWanted: wanted,
        }),
      ),
      [
        {
          kind: 'NodeImage',
          name: 'worker',
          phase: 'Waiting',
          done: 1,
          total: 6,
          waitingFor: 'approval needed (after the canary wave): merge approvals/worker-after-canary.yaml',
          approvalWanted: wanted,
          sourceCommit: '1a2b3c4',
        },
      ],
    ],
    [
      "a NodeOp's node rows, counted by phase (done ones are its progress)",
      written(
        specStatus('NodeOp', 'rotate-logs', {
          progress: { done: 2, total: 6 },
          nodes: [
            { node: 'w0', phase: 'Done' },
            { node: 'w1', phase: 'Rebooting', job: 'kube-system/rl-w1' },
            { node: 'w2', phase: 'Updating' },
            { node: 'w3', phase: 'Updating' },
            { node: 'w4', phase: 'Done' },
            { node: 'w5', phase: 'Pending' },
          ],
        }),
      ),
      [
        {
          kind: 'NodeOp',
          name: 'rotate-logs',
          phase: 'Progressing',
          done: 2,
          total: 6,
          sourceCommit: '1a2b3c4',
          nodePhases: { Rebooting: 1, Updating: 2, Pending: 1 },
        },
      ],
    ],
    [
      'a replace rollout with every node up to date: no phases left',
      written(
        specStatus('NodeImage', 'worker', {
          phase: 'Complete',
          progress: { done: 2, total: 2 },
          nodes: [
            { node: 'a', phase: 'UpToDate' },
            { node: 'b', phase: 'Done' },
          ],
        }),
      ),
      [{ kind: 'NodeImage', name: 'worker', phase: 'Complete', done: 2, total: 2, sourceCommit: '1a2b3c4' }],
    ],
    [
      'rows kept in node files beside the spec file: counted, and the node files are no specs',
      written(
        specStatus('NodeImage', 'big', {
          progress: { done: 0, total: 150 },
          nodes: Array.from({ length: 150 }, (_, i) => ({ node: `n${i}`, phase: i < 100 ? 'Outdated' : 'Draining' })),
        }),
      ),
      [
        {
          kind: 'NodeImage',
          name: 'big',
          phase: 'Progressing',
          done: 0,
          total: 150,
          sourceCommit: '1a2b3c4',
          nodePhases: { Outdated: 100, Draining: 50 },
        },
      ],
    ],
    [
      'the document names its spec',
      written(specStatus('NodeImage', 'a/b', { phase: 'Complete', progress: { done: 1, total: 1 } })),
      [{ kind: 'NodeImage', name: 'a/b', phase: 'Complete', done: 1, total: 1, sourceCommit: '1a2b3c4' }],
    ],
    ['not a status file', new Map([['README.md', '# status']]), []],
    [
      'a file drydock did not write: which field is wrong',
      new Map([['status/NodeOp/os-patch.yaml', 'kind: NodeOp\nname: os-patch\nrevision: r\nphase: Complete\n']]),
      [
        {
          kind: 'NodeOp',
          name: 'os-patch',
          phase: 'Unknown',
          done: 0,
          total: 0,
          lastError: 'status/NodeOp/os-patch.yaml is no spec status: progress is not a mapping',
        },
      ],
    ],
    [
      'an empty file',
      new Map([['status/NodeImage/x.yaml', '']]),
      [
        {
          kind: 'NodeImage',
          name: 'x',
          phase: 'Unknown',
          done: 0,
          total: 0,
          lastError: 'status/NodeImage/x.yaml is no spec status: the document is not a mapping',
        },
      ],
    ],
    [
      'broken YAML',
      new Map([['status/NodeImage/x.yaml', 'phase: [']]),
      [
        {
          kind: 'NodeImage',
          name: 'x',
          phase: 'Unknown',
          done: 0,
          total: 0,
          lastError: 'status/NodeImage/x.yaml is no spec status: it is not valid YAML',
        },
      ],
    ],
  ];
  for (const [name, files, expected] of cases) it(name, () => assert.deepEqual(specViews(files), expected));

  describe('refusal', () => {
    const cases: [string, string | undefined, ReturnType<typeof refusal>][] = [
      ['no errors.yaml', undefined, undefined],
      [
        'a refused commit',
        'commit: 1a2b3c4\ninForce: 0000000\nerrors:\n  - {file: images/worker.yaml, line: 7, column: 10, code: schema, message: image must be a string, hint: quote it}\n',
        { commit: '1a2b3c4', errors: ['images/worker.yaml:7:10: image must be a string'] },
      ],
      ['no commit named', 'errors: []\n', undefined],
      ['not YAML', 'commit: [', undefined],
    ];
    for (const [name, text, expected] of cases) it(name, () => assert.deepEqual(refusal(text), expected));
  });

  describe('metricValue', () => {
    const text = [
      '# HELP drydock_git_last_sync_age_seconds Seconds since the Git source was last fetched successfully.',
      '# TYPE drydock_git_last_sync_age_seconds gauge',
      'drydock_git_last_sync_age_seconds 1.532',
      'drydock_git_last_sync_age_seconds_total 9',
      'drydock_leader{} 1',
      'drydock_nodes{phase="Done"} 3',
    ].join('\n');
    const cases: [string, number | undefined][] = [
      ['drydock_git_last_sync_age_seconds', 1.532],
      ['drydock_leader', 1],
      ['drydock_nodes', undefined],
      ['drydock_missing', undefined],
    ];
    for (const [name, value] of cases)
      it(`${name} → ${String(value)}`, () => assert.equal(metricValue(text, name), value));
  });
});
