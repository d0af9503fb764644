import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { renderSpecDoc } from '../../src/report/status-docs.js';
import type { SpecReport, StatusNodeRow, StatusReport } from '../../src/report/types.js';

/** What renderSpecDoc wrote before rows were rendered one by one: the whole document at once. */
function wholeDocument(report: StatusReport, spec: SpecReport): string {
  return stringify(
    {
      kind: spec.kind,
      name: spec.name,
      sourceCommit: report.sourceCommit ?? null,
      phase: spec.phase,
      progress: spec.progress,
      ...(spec.waitingFor !== undefined ? { waitingFor: spec.waitingFor } : {}),
      conditions: spec.conditions,
      nodes: [...spec.nodes].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)),
      ...(spec.extra ? { extra: spec.extra } : {}),
    },
    { lineWidth: 0, sortMapEntries: false },
  );
}

const awkward: StatusNodeRow[] = [
  { node: 'w-2', phase: 'Failed', message: 'job drydock-op-w-2 failed:\n  exit 1\nsee logs' },
  { node: 'w-1', phase: 'Done', instance: 'i-1', image: 'registry.example/os:v2', since: '2024-03-01T12:00:00.000Z' },
  { node: 'w-3', phase: 'Pending', message: 'a: b # not a comment, "quoted" and \'single\'' },
  { node: 'yes', phase: 'null', message: '' },
];

function spec(nodes: StatusNodeRow[], extra?: Record<string, unknown>): SpecReport {
  return {
    kind: 'NodeImage',
    name: 'worker',
    phase: 'Progressing',
    progress: { done: 1, total: nodes.length },
    waitingFor: 'PDB default/web allows 0 disruptions',
    conditions: [],
    nodes,
    ...(extra ? { extra } : {}),
  };
}

describe('renderSpecDoc renders node rows one by one', () => {
  const report: StatusReport = { cluster: 'c', sourceCommit: 'abc', specs: [] };
  for (const [name, s] of [
    ['awkward rows', spec(awkward)],
    ['no rows', spec([])],
    ['rows then extra', spec(awkward.slice(0, 2), { waves: [1, 2], pending: { a: 'b' } })],
  ] as const) {
    it(`writes exactly what the whole document's stringify wrote: ${name}`, () => {
      assert.equal(renderSpecDoc(report, s), wholeDocument(report, s));
    });
  }

  it('stays exact when one row changes between renders (the remembered rows are not stale)', () => {
    const first = spec(awkward);
    renderSpecDoc(report, first);
    const changed = spec(awkward.map((r) => (r.node === 'w-3' ? { ...r, phase: 'Cordoned' } : r)));
    const text = renderSpecDoc(report, changed);
    assert.equal(text, wholeDocument(report, changed));
    assert.match(text, /node: w-3\n {4}phase: Cordoned/);
  });
});
