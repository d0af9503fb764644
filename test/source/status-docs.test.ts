import { strict as assert } from 'node:assert';
import { needsAPerson, renderStatusDocs, safeName, summarize, summarizeChange } from '../../src/report/status-docs.js';
import type { ApprovalWanted, SpecStatus } from '../../src/plan/types.js';
import type { StatusReport } from '../../src/report/types.js';
import { parse } from 'yaml';
import { specStatus } from '../support/spec-status.js';

/** The Approval file a wait asks for, as the planner names it. */
function wanted(kind: ApprovalWanted['target']['kind'], name: string, stage: ApprovalWanted['stage']): ApprovalWanted {
  return {
    stage,
    path: `approvals/${name}-${stage === 'start' ? 'start' : 'after-canary'}.yaml`,
    target: { kind, name, revision: 'r1', ...(kind === 'NodeOp' ? {} : { image: 'img:v2' }) },
  };
}

const SHA = 'abcdef0123456789abcdef0123456789abcdef01';
const NEW = '0123456789abcdef0123456789abcdef01234567';

const report: StatusReport = {
  cluster: 'prod-eu',
  sourceCommit: SHA,
  newestCommit: NEW,
  specs: [
    specStatus('NodeMaintenance', 'node-7', {
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
    }),
    specStatus('NodeImage', 'worker', {
      phase: 'Complete',
      progress: { done: 2, total: 2 },
      nodes: [
        { node: 'b', phase: 'UpToDate' },
        { node: 'a', phase: 'UpToDate' },
      ],
    }),
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
        'revision: r1',
        `sourceCommit: ${SHA}`,
        'phase: Running',
        'progress:',
        '  done: 2',
        '  total: 3',
        'waitingFor: PDB default/web | allows 0',
        'counts:',
        '  failures: 0',
        // medik8s' status fields and shapes first (pendingPods are pod names, totalpods in lower case) ...
        'drainProgress: 66',
        'lastUpdate: 2026-03-02T10:00:00.000Z',
        'pendingPods:',
        '  - web-1',
        'totalpods: 5',
        'evictionPods: 3',
        'errorOnLeaseCount: 0',
        // ... then drydock's detail under its own names.
        'nodeName: node-7',
        'reason: disk swap',
        'pendingPodDetails:',
        '  - pod: default/web-1',
        '    pdb: default/web',
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
          specStatus('NodeOp', 'a', {
            phase: 'NotSupported',
            progress: { done: 0, total: 0 },
          }),
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
          specStatus('NodeMaintenance', 'a', {
            phase: 'Succeeded',
            progress: { done: 3, total: 3 },
          }),
          specStatus('NodeMaintenance', 'b', {
            phase: 'Ended',
            progress: { done: 1, total: 1 },
          }),
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
  const spec = (name: string, o: Partial<SpecStatus>): SpecStatus =>
    specStatus('NodeImage', name, { progress: { done: 0, total: 3 }, ...o });
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
            approvalWanted: wanted('NodeImage', 'worker', 'afterCanary'),
          }),
        ],
      },
      [
        '**NodeImage/worker** waits for an approval: approval needed (after the canary wave): merge approvals/worker-after-canary.yaml; `drydock approve NodeImage/worker --stage afterCanary` writes the file.' +
          '\n\n  Merge `approvals/worker-after-canary.yaml` with exactly this content:\n\n  ```yaml\n' +
          '  # Approves NodeImage/worker at image img:v2, stage afterCanary.\n' +
          '  # It counts once merged into the tracked branch; the author of that commit is the approver.\n' +
          '  # Another image needs a new approval: this one does not carry over.\n' +
          '  apiVersion: drydock.dev/v1alpha1\n  kind: Approval\n  metadata:\n    name: worker-after-canary\n' +
          '  spec:\n    target:\n      kind: NodeImage\n      name: worker\n    image: img:v2\n    stage: afterCanary\n  ```',
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
      // Right under the title, before the commit line and the table (an item may run over lines).
      const lines = (
        want.length === 0
          ? ['Nothing needs a person now.', '']
          : ['## Needs a person', '', ...want.map((w) => `- ${w}`)]
      )
        .join('\n')
        .split('\n');
      assert.deepEqual(readme.split('\n').slice(2, 2 + lines.length), lines);
    });
  }
});

describe('status: an approval wait is told by its structured field, not its words', () => {
  const r: StatusReport = {
    cluster: 'c',
    sourceCommit: SHA,
    specs: [
      // Words of an approval wait, but the plan names no approval file: nothing to approve.
      specStatus('NodeMaintenance', 'echo', {
        phase: 'Running',
        progress: { done: 0, total: 1 },
        waitingFor: 'approval needed (before the first node): the words of a reason, not a wait for a file',
      }),
      // Worded otherwise, but the plan asks for the afterCanary file: the command names that stage.
      specStatus('NodeOp', 'patch', {
        phase: 'Waiting',
        progress: { done: 1, total: 4 },
        waitingFor: 'sign-off wanted before the first node of the rest',
        approvalWanted: wanted('NodeOp', 'patch', 'afterCanary'),
      }),
    ],
  };

  it('needs a person: only the spec whose plan wants a file, at the stage the plan names', () => {
    const lines = needsAPerson(r);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(
      lines[0] ?? '',
      /^\*\*NodeOp\/patch\*\* waits for an approval: .*`drydock approve NodeOp\/patch --stage afterCanary`/,
    );
    assert.match(lines[0] ?? '', /Merge `approvals\/patch-after-canary.yaml` with exactly this content/);
  });

  it('the ETA is a dash only where a person must act', () => {
    const rows = (renderStatusDocs(r).get('README.md') ?? '').split('\n').filter((l) => l.startsWith('| ['));
    assert.deepEqual(
      rows.map((l) => l.split(' | ')[3]),
      ['', '—'],
    );
  });
});

describe('status commit subject: what changed since the last report', () => {
  const base: StatusReport = {
    cluster: 'c',
    sourceCommit: SHA,
    specs: [
      specStatus('NodeImage', 'worker', {
        phase: 'Waiting',
        progress: { done: 1, total: 12 },
        waitingFor: '11 node(s) queued: the canary wave of 1 node(s) soaks until 10:12',
      }),
    ],
  };
  const next = (o: Partial<SpecStatus>, r: Partial<StatusReport> = {}): StatusReport => ({
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
          specStatus('NodeImage', 'edge', {
            phase: 'Pending',
            progress: { done: 0, total: 2 },
          }),
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
          specStatus('NodeMaintenance', 'w-2', {
            phase: 'Ended',
            progress: { done: 0, total: 0 },
          }),
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
        specs: Array.from({ length: 9 }, (_, i) =>
          specStatus('NodeImage', `image-number-${i}`, {
            phase: 'Pending',
            progress: { done: 0, total: 1 },
          }),
        ),
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
      specStatus('NodeImage', 'worker', {
        progress: { done: 1, total: 3 },
        eta: '2026-03-02T10:41:30.000Z',
        nodes: [
          { node: 'w2', phase: 'Outdated', eta: '2026-03-02T10:41:30.000Z' },
          { node: 'w1', phase: 'Draining', eta: '2026-03-02T10:20:00.000Z' },
          { node: 'w0', phase: 'Done' },
        ],
      }),
      specStatus('NodeOp', 'patch', {
        phase: 'Waiting',
        progress: { done: 0, total: 2 },
        waitingFor: 'approval needed (before the first node): merge approvals/patch-start.yaml',
        approvalWanted: wanted('NodeOp', 'patch', 'start'),
      }),
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
