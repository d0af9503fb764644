import { strict as assert } from 'node:assert';
import type { V1Node } from '@kubernetes/client-node';
import { metricValue, nodeViews, refusal, specView } from '../../src/sandbox/snapshot.js';

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
    ];
    assert.deepEqual(nodeViews(nodes), [
      { name: 'control-plane-i-0', group: 'control-plane', image: 'os:1', ready: false, unschedulable: false },
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
    ]);
  });

  const cases: [string, string, string, ReturnType<typeof specView>][] = [
    [
      'a status file',
      'status/NodeImage/worker.yaml',
      'phase: Progressing\nprogress: {done: 2, total: 6}\nwaitingFor: PDB demo/web allows 0 disruptions\nsourceCommit: 1a2b3c4\n',
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
    [
      'counts instead of progress',
      'status/NodeOp/os-patch.yaml',
      'phase: Complete\ncounts: {done: 3, total: 3}\n',
      { kind: 'NodeOp', name: 'os-patch', phase: 'Complete', done: 3, total: 3 },
    ],
    [
      'an empty file',
      'status/NodeImage/x.yaml',
      '',
      { kind: 'NodeImage', name: 'x', phase: 'Unknown', done: 0, total: 0 },
    ],
    [
      'broken YAML',
      'status/NodeImage/x.yaml',
      'phase: [',
      {
        kind: 'NodeImage',
        name: 'x',
        phase: 'Unknown',
        done: 0,
        total: 0,
        lastError: 'status/NodeImage/x.yaml is not valid YAML',
      },
    ],
    ['not a status file', 'README.md', '# status', undefined],
    [
      'the document names its spec',
      'status/NodeImage/a_b.yaml',
      'kind: NodeImage\nname: a/b\nphase: Complete\nprogress: {done: 1, total: 1}\n',
      { kind: 'NodeImage', name: 'a/b', phase: 'Complete', done: 1, total: 1 },
    ],
  ];
  for (const [name, file, text, expected] of cases) it(name, () => assert.deepEqual(specView(file, text), expected));

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
