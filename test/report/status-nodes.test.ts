import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { readSpecDocs, ROWS_PER_FILE } from '../../src/report/status-nodes.js';
import type { StatusNodeRow, StatusReport } from '../../src/report/types.js';

function rows(n: number, phaseOf: (i: number) => string = () => 'Pending'): StatusNodeRow[] {
  return Array.from({ length: n }, (_, i) => ({ node: `worker-${String(i).padStart(5, '0')}`, phase: phaseOf(i) }));
}

function report(nodes: StatusNodeRow[]): StatusReport {
  return {
    cluster: 'c',
    sourceCommit: 'abc',
    specs: [
      {
        kind: 'NodeImage',
        name: 'worker',
        phase: 'Progressing',
        progress: { done: 0, total: nodes.length },
        conditions: [],
        nodes,
        approvals: [],
      },
    ],
  };
}

const SPEC = 'status/NodeImage/worker.yaml';

describe('status node rows across files', () => {
  it('keeps up to ROWS_PER_FILE rows in the spec file itself', () => {
    const docs = renderStatusDocs(report(rows(ROWS_PER_FILE)));
    assert.deepEqual([...docs.keys()].sort(), ['README.md', SPEC]);
    const doc = parse(docs.get(SPEC) ?? '') as { nodes: StatusNodeRow[]; nodeFiles?: unknown };
    assert.equal(doc.nodes.length, ROWS_PER_FILE);
    assert.equal(doc.nodeFiles, undefined);
  });

  it('puts more rows into files of about a hundred that the spec file names, and reads them back whole', () => {
    const all = rows(5000);
    const docs = renderStatusDocs(report(all));
    const summary = parse(docs.get(SPEC) ?? '') as Record<string, unknown>;
    assert.equal(summary.nodes, undefined);
    const names = summary.nodeFiles as string[];
    assert.equal(names.length, 64); // the power of two that keeps files at or under 100 rows on average
    for (const name of names) {
      const part = parse(docs.get(`status/NodeImage/worker/${name}`) ?? '') as { nodes: StatusNodeRow[] };
      assert.ok(part.nodes.length > 40 && part.nodes.length < 130, `${name}: ${part.nodes.length} rows`);
    }
    assert.equal([...docs.keys()].filter((p) => p.startsWith('status/NodeImage/worker/')).length, 64);
    const back = readSpecDocs(docs).get(SPEC);
    assert.deepEqual(back?.nodes, all);
    assert.deepEqual(back?.approvals, []);
    assert.equal(back?.nodeFiles, undefined);
    assert.deepEqual([...readSpecDocs(docs).keys()], [SPEC]);
  });

  it('changes one file when one row changes, and keeps a node in its file while others come and go', () => {
    const before = renderStatusDocs(report(rows(5000)));
    const after = renderStatusDocs(report(rows(5000, (i) => (i === 1234 ? 'Cordoned' : 'Pending'))));
    const changed = [...after].filter(([p, text]) => before.get(p) !== text).map(([p]) => p);
    assert.equal(changed.length, 1);
    assert.match(after.get(changed[0] ?? '') ?? '', /node: worker-01234\n {4}phase: Cordoned/);
    const fewer = renderStatusDocs(report(rows(5000).filter((r) => r.node !== 'worker-00007')));
    // the progress total changes the spec file and README.md too; of the node files, only one
    const moved = [...fewer].filter(([p, text]) => p.includes('/worker/') && before.get(p) !== text);
    assert.equal(moved.length, 1);
  });
});
