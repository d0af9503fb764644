import { strict as assert } from 'node:assert';
import { needsAPerson, renderStatusDocs, safeName, summarize, summarizeChange } from '../../src/report/status-docs.js';
import type { StatusReport } from '../../src/report/types.js';
import { parse } from 'yaml';

const SHA = 'abcdef0123456789abcdef0123456789abcdef01';
const NEW = '0123456789abcdef0123456789abcdef01234567';

const report: StatusReport = {
  cluster: 'prod-eu',
  sourceCommit: SHA,
  newestCommit: NEW,
  specs: [
    {
      kind: 'NodeMaintenance',
      name: 'node-7',
      phase: 'Running',
      progress: { done: 2, total: 3 },
      waitingFor: 'PDB default/web | allows 0',
      conditions: [{ type: 'Progressing', status: 'True', reason: 'Draining', message: 'evicting' }],
      nodes: [{ node: 'node-7', phase: 'Draining' }],
      maintenance: {
        nodeName: 'node-7',
        reason: 'disk swap',
        totalPods: 5,
        evictionPods: 3,
        pendingPods: [{ pod: 'default/web-1', pdb: 'default/web' }],
        drainProgress: 66,
        lastUpdate: '2026-03-02T10:00:00.000Z',
      },
    },
    {
      kind: 'NodeImage',
      name: 'worker',
      phase: 'Complete',
      progress: { done: 2, total: 2 },
      conditions: [],
      nodes: [
        { node: 'b', phase: 'UpToDate' },
        { node: 'a', phase: 'UpToDate' },
      ],
    },
  ],
  errors: [{ file: 'specs/x.yaml', line: 3, column: 5, code: 'schema', message: 'unknown field', hint: 'remove it' }],
};

describe('status documents', () => {
  it('lays the report out as README.md, one YAML per spec and errors.yaml', () => {
    const docs = renderStatusDocs(report);
    assert.deepEqual([...docs.keys()].sort(), [
      'README.md',
      'errors.yaml',
      'status/NodeImage/worker.yaml',
      'status/NodeMaintenance/node-7.yaml',
    ]);
    assert.equal(
      docs.get('README.md'),
      [
        '# drydock status: prod-eu',
        '',
        '## Needs a person',
        '',
        '- Commit `0123456` was refused (1 error, below): fix it in a new commit; until then `abcdef0` stays in force.',
        '',
        `Source commit in force: \`${SHA}\``,
        '',
        `Newest commit \`${NEW}\` is not applied: see errors.yaml.`,
        '',
        '| Spec | Phase | Progress | ETA | Waiting for | Source |',
        '| --- | --- | --- | --- | --- | --- |',
        '| [NodeImage/worker](status/NodeImage/worker.yaml) | Complete | 2/2 |  |  | abcdef0 |',
        '| [NodeMaintenance/node-7](status/NodeMaintenance/node-7.yaml) | Running | 2/3 |  | PDB default/web \\| allows 0 | abcdef0 |',
        '',
        '## Errors in 0123456',
        '',
        '- `specs/x.yaml:3:5`: unknown field (remove it)',
        '',
      ].join('\n'),
    );
    assert.equal(
      docs.get('status/NodeMaintenance/node-7.yaml'),
      [
        'kind: NodeMaintenance',
        'name: node-7',
        `sourceCommit: ${SHA}`,
        'phase: Running',
        'progress:',
        '  done: 2',
        '  total: 3',
        'waitingFor: PDB default/web | allows 0',
        'nodeName: node-7',
        'reason: disk swap',
        'totalPods: 5',
        'evictionPods: 3',
        'pendingPods:',
        '  - pod: default/web-1',
        '    pdb: default/web',
        'drainProgress: 66',
        'lastUpdate: 2026-03-02T10:00:00.000Z',
        'conditions:',
        '  - type: Progressing',
        '    status: "True"',
        '    reason: Draining',
        '    message: evicting',
        'nodes:',
        '  - node: node-7',
        '    phase: Draining',
        '',
      ].join('\n'),
    );
    assert.match(
      docs.get('status/NodeImage/worker.yaml') ?? '',
      /nodes:\n {2}- node: a\n {4}phase: UpToDate\n {2}- node: b\n/,
    );
    assert.equal(
      docs.get('errors.yaml'),
      `commit: ${NEW}\ninForce: ${SHA}\nerrors:\n  - file: specs/x.yaml\n    line: 3\n    column: 5\n    code: schema\n    message: unknown field\n    hint: remove it\n`,
    );
  });

  it('omits errors.yaml once the newest commit is in force', () => {
    assert.equal(renderStatusDocs({ cluster: 'c', sourceCommit: SHA, specs: [] }).has('errors.yaml'), false);
  });

  const summaries: Array<[string, StatusReport, string]> = [
    ['refusal and the active spec', report, 'commit 0123456 refused (1 error); NodeMaintenance/node-7 2/3 running'],
    ['everything complete', { cluster: 'c', specs: [report.specs[1]!] }, '1 spec complete'],
    ['nothing', { cluster: 'c', specs: [] }, 'no specs'],
    [
      'a spec not acted on is no headline',
      {
        cluster: 'c',
        specs: [
          {
            kind: 'NodeOp',
            name: 'a',
            phase: 'NotSupported',
            progress: { done: 0, total: 0 },
            conditions: [],
            nodes: [],
          },
          report.specs[1]!,
        ],
      },
      '1 spec complete',
    ],
    [
      'a drained or ended maintenance is settled, no headline',
      {
        cluster: 'c',
        specs: [
          {
            kind: 'NodeMaintenance',
            name: 'a',
            phase: 'Succeeded',
            progress: { done: 3, total: 3 },
            conditions: [],
            nodes: [],
          },
          {
            kind: 'NodeMaintenance',
            name: 'b',
            phase: 'Ended',
            progress: { done: 1, total: 1 },
            conditions: [],
            nodes: [],
          },
        ],
      },
      '2 specs complete',
    ],
  ];
  for (const [name, r, want] of summaries) it(`summarises: ${name}`, () => assert.equal(summarize(r), want));

  it('keeps spec names inside status/<Kind>/', () => {
    assert.deepEqual(['../x', '..', 'a/b', 'ok'].map(safeName), ['.._x', '_..', 'a_b', 'ok']);
  });
});

describe('status README: what needs a person leads', () => {
  const spec = (name: string, o: Partial<StatusReport['specs'][number]>) => ({
    kind: 'NodeImage',
    name,
    phase: 'Progressing',
    progress: { done: 0, total: 3 },
    conditions: [],
    nodes: [],
    ...o,
  });
  const cases: Array<[string, StatusReport, string[]]> = [
    [
      'nothing: a calm line instead of a section',
      { cluster: 'c', sourceCommit: SHA, specs: [spec('a', { phase: 'Complete' })] },
      [],
    ],
    [
      'a refused commit with two errors: "fix them", the commit in force named',
      {
        cluster: 'c',
        sourceCommit: SHA,
        newestCommit: NEW,
        specs: [],
        errors: [
          { file: 'a.yaml', line: 1, column: 1, code: 'schema', message: 'm', hint: 'h' },
          { file: 'b.yaml', line: 2, column: 1, code: 'schema', message: 'm', hint: 'h' },
        ],
      },
      [
        `Commit \`${NEW.slice(0, 7)}\` was refused (2 errors, below): fix them in a new commit; until then \`${SHA.slice(0, 7)}\` stays in force.`,
      ],
    ],
    [
      'an approval after the canary: the wait, and the command that writes the file',
      {
        cluster: 'c',
        sourceCommit: SHA,
        specs: [
          spec('worker', {
            phase: 'Waiting',
            waitingFor: 'approval needed (after the canary wave): merge approvals/worker-after-canary.yaml',
          }),
        ],
      },
      [
        '**NodeImage/worker** waits for an approval: approval needed (after the canary wave): merge approvals/worker-after-canary.yaml; `drydock approve NodeImage/worker --stage afterCanary` writes the file.',
      ],
    ],
    [
      'a halted rollout with what to do, then its failed node',
      {
        cluster: 'c',
        sourceCommit: SHA,
        specs: [
          spec('worker', {
            phase: 'Halted',
            waitingFor:
              "rollout halted: w-1: join timeout; fix the cause, then remove the node's drydock.dev/ annotations",
            nodes: [{ node: 'w-1', phase: 'Failed', message: 'join timeout' }],
          }),
        ],
      },
      [
        "**NodeImage/worker** is halted: rollout halted: w-1: join timeout; fix the cause, then remove the node's drydock.dev/ annotations",
        'Node `w-1` failed (NodeImage/worker): join timeout; look at it, then remove its drydock.dev/ annotations to retry.',
      ],
    ],
  ];
  for (const [name, r, want] of cases) {
    it(name, () => {
      assert.deepEqual(needsAPerson(r), want);
      const readme = renderStatusDocs(r).get('README.md') ?? '';
      // Right under the title, before the commit line and the table.
      const lead = readme.split('\n').slice(2, 4 + want.length);
      assert.deepEqual(
        lead,
        want.length === 0
          ? ['Nothing needs a person now.', '']
          : ['## Needs a person', '', ...want.map((w) => `- ${w}`)],
      );
    });
  }
});

describe('status commit subject: what changed since the last report', () => {
  const base: StatusReport = {
    cluster: 'c',
    sourceCommit: SHA,
    specs: [
      {
        kind: 'NodeImage',
        name: 'worker',
        phase: 'Waiting',
        progress: { done: 1, total: 12 },
        waitingFor: '11 node(s) queued: the canary wave of 1 node(s) soaks until 10:12',
        conditions: [],
        nodes: [],
      },
    ],
  };
  const next = (o: Partial<StatusReport['specs'][number]>, r: Partial<StatusReport> = {}): StatusReport => ({
    ...base,
    ...r,
    specs: [{ ...base.specs[0]!, ...o }],
  });
  const cases: Array<[string, StatusReport, StatusReport | undefined, string]> = [
    ['no previous report (a start): the summary', base, undefined, 'NodeImage/worker 1/12 waiting'],
    [
      'progress, phase, and the end of the soak',
      next({ progress: { done: 6, total: 12 }, phase: 'Progressing', waitingFor: undefined }),
      base,
      'NodeImage/worker 6/12 replaced, progressing, 11 node(s) queued ended',
    ],
    [
      'an inPlace NodeImage counts nodes updated, not replaced',
      next({ strategy: 'inPlace', progress: { done: 2, total: 12 } }),
      { ...base, specs: [{ ...base.specs[0]!, strategy: 'inPlace' }] },
      'NodeImage/worker 2/12 updated',
    ],
    [
      'a new wait, in its gist',
      next({ waitingFor: 'approval needed (after the canary wave): merge approvals/worker-after-canary.yaml' }),
      base,
      'NodeImage/worker waiting: approval needed (after the canary wave)',
    ],
    [
      'a new commit applied and a new spec',
      {
        ...base,
        sourceCommit: NEW,
        specs: [
          ...base.specs,
          {
            kind: 'NodeImage',
            name: 'edge',
            phase: 'Pending',
            progress: { done: 0, total: 2 },
            conditions: [],
            nodes: [],
          },
        ],
      },
      base,
      'applied 0123456; NodeImage/edge new (pending)',
    ],
    [
      'a maintenance first reported once it ended: "ended", not "new (ended)"',
      {
        ...base,
        specs: [
          ...base.specs,
          {
            kind: 'NodeMaintenance',
            name: 'w-2',
            phase: 'Ended',
            progress: { done: 0, total: 0 },
            conditions: [],
            nodes: [],
          },
        ],
      },
      base,
      'NodeMaintenance/w-2 ended',
    ],
    ['a spec removed', { ...base, specs: [] }, base, 'NodeImage/worker removed'],
    [
      'a refused commit',
      next(
        {},
        {
          newestCommit: NEW,
          errors: [{ file: 'x.yaml', line: 1, column: 1, code: 'schema', message: 'm', hint: 'h' }],
        },
      ),
      base,
      'commit 0123456 refused (1 error)',
    ],
    [
      'too much for one line: the rest counted',
      {
        ...base,
        specs: Array.from({ length: 9 }, (_, i) => ({
          kind: 'NodeImage',
          name: `image-number-${i}`,
          phase: 'Pending',
          progress: { done: 0, total: 1 },
          conditions: [],
          nodes: [],
        })),
      },
      { ...base, specs: [] },
      'NodeImage/image-number-0 new (pending); NodeImage/image-number-1 new (pending); NodeImage/image-number-2 new (pending) (+6 more)',
    ],
  ];
  for (const [name, r, prev, want] of cases) it(name, () => assert.equal(summarizeChange(r, prev), want));
});

describe('status: ETA per spec and per node', () => {
  const rolling: StatusReport = {
    cluster: 'c',
    sourceCommit: SHA,
    specs: [
      {
        kind: 'NodeImage',
        name: 'worker',
        phase: 'Progressing',
        progress: { done: 1, total: 3 },
        eta: '2026-03-02T10:41:30.000Z',
        conditions: [],
        nodes: [
          { node: 'w2', phase: 'Outdated', eta: '2026-03-02T10:41:30.000Z' },
          { node: 'w1', phase: 'Draining', eta: '2026-03-02T10:20:00.000Z' },
          { node: 'w0', phase: 'Done' },
        ],
      },
      {
        kind: 'NodeOp',
        name: 'patch',
        phase: 'Waiting',
        progress: { done: 0, total: 2 },
        waitingFor: 'approval needed (before the first node): merge approvals/patch-start.yaml',
        conditions: [],
        nodes: [],
      },
    ],
  };
  const docs = renderStatusDocs(rolling);

  it('the README shows it to the minute in UTC, and a dash where a person must act first', () => {
    const rows = (docs.get('README.md') ?? '').split('\n').filter((l) => l.startsWith('| ['));
    assert.deepEqual(rows, [
      '| [NodeImage/worker](status/NodeImage/worker.yaml) | Progressing | 1/3 | 2026-03-02 10:41 UTC |  | abcdef0 |',
      '| [NodeOp/patch](status/NodeOp/patch.yaml) | Waiting | 0/2 | — | approval needed (before the first node): merge approvals/patch-start.yaml | abcdef0 |',
    ]);
  });

  it("the spec's file has the spec's ETA and each node's", () => {
    const doc = parse(docs.get('status/NodeImage/worker.yaml') ?? '') as {
      eta?: string;
      nodes: { node: string; eta?: string }[];
    };
    assert.equal(doc.eta, '2026-03-02T10:41:30.000Z');
    assert.deepEqual(
      doc.nodes.map((n) => [n.node, n.eta]),
      [
        ['w0', undefined],
        ['w1', '2026-03-02T10:20:00.000Z'],
        ['w2', '2026-03-02T10:41:30.000Z'],
      ],
    );
  });
});
