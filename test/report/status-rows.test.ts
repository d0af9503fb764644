import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { renderSpecDoc } from '../../src/report/status-docs.js';
import type { NodeRow, PendingNode, SpecStatus } from '../../src/plan/types.js';
import type { StatusReport } from '../../src/report/types.js';
import { specStatus } from '../support/spec-status.js';

/** What renderSpecDoc wrote before rows were rendered one by one: the whole document at once. */
function wholeDocument(report: StatusReport, spec: SpecStatus): string {
  return stringify(
    {
      kind: spec.spec.kind,
      name: spec.spec.name,
      revision: spec.revision,
      sourceCommit: report.sourceCommit ?? null,
      phase: spec.phase,
      progress: spec.progress,
      ...(spec.waitingFor !== undefined ? { waitingFor: spec.waitingFor } : {}),
      counts: { failures: spec.failures },
      conditions: spec.conditions,
      nodes: [...spec.nodes].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)),
      ...(spec.pending.length > 0 ? { extra: { pending: spec.pending } } : {}),
    },
    { lineWidth: 0, sortMapEntries: false },
  );
}

const awkward: NodeRow[] = [
  { node: 'w-2', phase: 'Failed', message: 'job drydock-op-w-2 failed:\n  exit 1\nsee logs' },
  { node: 'w-1', phase: 'Done', instance: 'i-1', image: 'registry.example/os:v2', since: '2024-03-01T12:00:00.000Z' },
  { node: 'w-3', phase: 'Pending', message: 'a: b # not a comment, "quoted" and \'single\'' },
  { node: 'yes', phase: 'Joining', instance: 'null', message: '' },
];

const joining: PendingNode[] = [{ groupId: 'g', instanceId: 'i-9', providerID: 'sim://i-9', goal: 'Join' }];

function spec(nodes: NodeRow[], pending: PendingNode[] = []): SpecStatus {
  return specStatus('NodeImage', 'worker', {
    progress: { done: 1, total: nodes.length },
    waitingFor: 'PDB default/web allows 0 disruptions',
    nodes,
    pending,
  });
}

describe('renderSpecDoc renders node rows one by one', () => {
  const report: StatusReport = { cluster: 'c', sourceCommit: 'abc', specs: [] };
  for (const [name, s] of [
    ['awkward rows', spec(awkward)],
    ['no rows', spec([])],
    ['rows then extra', spec(awkward.slice(0, 2), joining)],
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
