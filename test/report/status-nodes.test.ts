import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { readSpecDocs, ROWS_PER_FILE } from '../../src/report/status-nodes.js';
import type { NodeRow } from '../../src/plan/types.js';
import type { StatusReport } from '../../src/report/types.js';
import { specStatus } from '../support/spec-status.js';

function rows(n: number, phaseOf: (i: number) => NodeRow['phase'] = () => 'Pending'): NodeRow[] {
  return Array.from({ length: n }, (_, i) => ({ node: `worker-${String(i).padStart(5, '0')}`, phase: phaseOf(i) }));
}

const APPROVAL = { stage: 'start', name: 'worker-start', file: 'approvals/worker-start.yaml' } as const;

function report(nodes: NodeRow[]): StatusReport {
  return {
    cluster: 'c',
    sourceCommit: 'abc',
    specs: [
      specStatus('NodeImage', 'worker', { progress: { done: 0, total: nodes.length }, nodes, approvals: [APPROVAL] }),
    ],
  };
}

const SPEC = 'status/NodeImage/worker.yaml';

describe('status node rows across files', () => {
  it('keeps up to ROWS_PER_FILE rows in the spec file itself', () => {
    const docs = renderStatusDocs(report(rows(ROWS_PER_FILE)));
    assert.deepEqual([...docs.keys()].sort(), ['README.md', SPEC]);
    const doc = parse(docs.get(SPEC) ?? '') as { nodes: NodeRow[]; nodeFiles?: unknown };
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
      const part = parse(docs.get(`status/NodeImage/worker/${name}`) ?? '') as { nodes: NodeRow[] };
      assert.ok(part.nodes.length > 40 && part.nodes.length < 130, `${name}: ${part.nodes.length} rows`);
    }
    assert.equal([...docs.keys()].filter((p) => p.startsWith('status/NodeImage/worker/')).length, 64);
    const back = readSpecDocs(docs).get(SPEC) as Record<string, unknown> | undefined;
    assert.deepEqual(back?.nodes, all);
    assert.deepEqual(back?.approvals, [APPROVAL]);
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

describe('status node rows rendered again from the last render', () => {
  /** A cluster name never rendered before: nothing remembered, the text from scratch. */
  let fresh = 0;
  const fromScratch = (nodes: NodeRow[]): ReadonlyMap<string, string> =>
    renderStatusDocs({ ...report(nodes), cluster: `fresh-${fresh++}` });
  const specFiles = (docs: ReadonlyMap<string, string>): Map<string, string> =>
    new Map([...docs].filter(([p]) => p.startsWith('status/')));

  /** Seeded (mulberry32), so a failure repeats. */
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  type Step = (nodes: NodeRow[], rnd: () => number) => NodeRow[];
  const PHASES: readonly NodeRow['phase'][] = ['Pending', 'Cordoned', 'Draining', 'Done', 'Failed'];
  const at = (nodes: NodeRow[], rnd: () => number): number => Math.floor(rnd() * nodes.length);
  const steps: Record<string, Step> = {
    'one row changes': (n, rnd) => {
      const i = at(n, rnd);
      return n.map((r, j) => (j === i ? { ...r, phase: PHASES[Math.floor(rnd() * PHASES.length)] ?? 'Pending' } : r));
    },
    'a row gains a message': (n, rnd) => {
      const i = at(n, rnd);
      return n.map((r, j) => (j === i ? { ...r, message: 'drain: PDB web allows 0' } : r));
    },
    'the same fields in another order': (n, rnd) => {
      const i = at(n, rnd);
      return n.map((r, j) => (j === i ? { phase: r.phase, node: r.node } : r));
    },
    'a row leaves': (n, rnd) => n.filter((_, j) => j !== at(n, rnd)),
    'rows arrive': (n, rnd) => [...n, ...rows(1 + Math.floor(rnd() * 40)).map((r) => ({ ...r, node: `new-${rnd()}` }))],
    'a node listed twice': (n, rnd) => [
      ...n,
      { ...(n[at(n, rnd)] ?? { node: 'x', phase: 'Pending' }), message: 'listed twice' },
    ],
    'the duplicate goes again': (n) => n.filter((r) => r.message !== 'listed twice'),
    'the input order changes': (n) => [...n].reverse(),
    'nothing changes': (n) => [...n],
  };

  for (const [size, seed] of [
    [30, 1],
    [190, 2], // crosses 100 rows (the spec's file) and 200 (two node files to four) as rows come and go
    [400, 3],
  ] as const) {
    it(`gives the text rendered from scratch after each of 60 random changes, from ${size} rows`, () => {
      const rnd = random(seed);
      const names = Object.keys(steps);
      let nodes = rows(size);
      renderStatusDocs(report(nodes));
      for (let k = 0; k < 60; k++) {
        const name = names[Math.floor(rnd() * names.length)] ?? 'nothing changes';
        nodes = steps[name]?.(nodes, rnd) ?? nodes;
        const cached = specFiles(renderStatusDocs(report(nodes)));
        assert.deepEqual(cached, specFiles(fromScratch(nodes)), `after step ${k}: ${name} (${nodes.length} rows)`);
      }
    });
  }
});
