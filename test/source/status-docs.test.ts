import { strict as assert } from 'node:assert';
import { renderStatusDocs, safeName, summarize } from '../../src/report/status-docs.js';
import type { StatusReport } from '../../src/report/types.js';

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
      maintenance: { nodeName: 'node-7', reason: 'disk swap', totalPods: 5, evictionPods: 3, pendingPods: [{ pod: 'default/web-1', pdb: 'default/web' }], drainProgress: 66, lastUpdate: '2026-03-02T10:00:00.000Z' },
    },
    { kind: 'NodeImage', name: 'worker', phase: 'Complete', progress: { done: 2, total: 2 }, conditions: [], nodes: [{ node: 'b', phase: 'UpToDate' }, { node: 'a', phase: 'UpToDate' }] },
  ],
  errors: [{ file: 'specs/x.yaml', line: 3, column: 5, code: 'schema', message: 'unknown field', hint: 'remove it' }],
};

describe('status documents', () => {
  it('lays the report out as README.md, one YAML per spec and errors.yaml', () => {
    const docs = renderStatusDocs(report);
    assert.deepEqual([...docs.keys()].sort(), ['README.md', 'errors.yaml', 'status/NodeImage/worker.yaml', 'status/NodeMaintenance/node-7.yaml']);
    assert.equal(
      docs.get('README.md'),
      [
        '# drydock status: prod-eu',
        '',
        `Source commit in force: \`${SHA}\``,
        '',
        `Newest commit \`${NEW}\` is not applied: see errors.yaml.`,
        '',
        '| Spec | Phase | Progress | Waiting for | Source |',
        '| --- | --- | --- | --- | --- |',
        '| [NodeImage/worker](status/NodeImage/worker.yaml) | Complete | 2/2 |  | abcdef0 |',
        '| [NodeMaintenance/node-7](status/NodeMaintenance/node-7.yaml) | Running | 2/3 | PDB default/web \\| allows 0 | abcdef0 |',
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
    assert.match(docs.get('status/NodeImage/worker.yaml') ?? '', /nodes:\n {2}- node: a\n {4}phase: UpToDate\n {2}- node: b\n/);
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
      { cluster: 'c', specs: [{ kind: 'NodeOp', name: 'a', phase: 'NotSupported', progress: { done: 0, total: 0 }, conditions: [], nodes: [] }, report.specs[1]!] },
      '1 spec complete',
    ],
    [
      'a drained or ended maintenance is settled, no headline',
      {
        cluster: 'c',
        specs: [
          { kind: 'NodeMaintenance', name: 'a', phase: 'Succeeded', progress: { done: 3, total: 3 }, conditions: [], nodes: [] },
          { kind: 'NodeMaintenance', name: 'b', phase: 'Ended', progress: { done: 1, total: 1 }, conditions: [], nodes: [] },
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
