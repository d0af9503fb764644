/**
 * Benchmark: the status writer at scale. One NodeImage whose status lists N node rows, written
 * by the real StatusWriter as a commit pushed to git http-backend: the first commit's size and
 * time, then the cost of a commit where one row changed against one where every row changed.
 * Sizes: DRYDOCK_BENCH_STATUS_NODES, default 5000.
 * Alone: `npx tsc -p . && node dist/test/bench/status.js`.
 */
import { renderStatusDocs } from '../../src/report/status-docs.js';
import type { StatusNodeRow, StatusReport } from '../../src/report/types.js';
import { GitSource, StatusWriter } from '../../src/source/index.js';
import { TEST_USER } from '../support/git-server.js';
import { createFixture } from '../source/fixture.js';
import { recordFigures, sizesFrom, type Figure } from './results.js';

const SOURCE = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';
const REPEAT = 5;

function rows(n: number, phaseOf: (i: number) => string): StatusNodeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    node: `worker-${String(i).padStart(5, '0')}`,
    phase: phaseOf(i),
    instance: `i-${(0x10000000 + i).toString(16)}`,
    image: 'registry.example/node-os:v2.0.0',
    since: '2024-03-01T12:00:00.000Z',
  }));
}

function report(nodeRows: StatusNodeRow[]): StatusReport {
  const done = nodeRows.filter((r) => r.phase === 'Done').length;
  return {
    cluster: 'bench',
    sourceCommit: SOURCE,
    specs: [
      {
        kind: 'NodeImage',
        name: 'worker',
        phase: 'Progressing',
        progress: { done, total: nodeRows.length },
        conditions: [],
        nodes: nodeRows,
      },
    ],
  };
}

function bytesOf(r: StatusReport): number {
  let n = 0;
  for (const text of renderStatusDocs(r).values()) n += Buffer.byteLength(text);
  return n;
}

/** Median wall time of `REPEAT` writes, each alternating between two reports so every one commits. */
async function medianWrite(writer: StatusWriter, a: StatusReport, b: StatusReport): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    const res = await writer.write(i % 2 === 0 ? b : a);
    times.push(performance.now() - t0);
    if (!res.changed) throw new Error('a status write that should have committed did not');
  }
  return times.sort((x, y) => x - y)[Math.floor(REPEAT / 2)] ?? 0;
}

export async function measure(n: number): Promise<Figure[]> {
  const fx = await createFixture();
  try {
    await fx.commit({ 'specs/drydock.yaml': 'cluster: bench\n' }, 1);
    const writer = new StatusWriter({
      source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 }),
      cluster: 'bench',
    });
    const base = report(rows(n, (i) => (i % 3 === 0 ? 'Done' : 'Pending')));
    const t0 = performance.now();
    await writer.write(base);
    const firstMs = performance.now() - t0;
    // One row changes (a node moves on), against every row changing (every node moves on).
    const oneRow = report(rows(n, (i) => (i === 1 ? 'Cordoned' : i % 3 === 0 ? 'Done' : 'Pending')));
    const allRows = report(rows(n, (i) => (i % 3 === 0 ? 'Done' : 'Cordoned')));
    const oneMs = await medianWrite(writer, base, oneRow);
    const allMs = await medianWrite(writer, base, allRows);
    const size = `${n} node rows`;
    const command = `npx tsc -p . && DRYDOCK_BENCH_STATUS_NODES=${n} node dist/test/bench/status.js`;
    const f = (name: string, what: string, value: number, unit: string, target: number | null): Figure => ({
      id: `status.${name}@${n}`,
      what,
      value,
      unit,
      target,
      size,
      command,
    });
    return [
      f(
        'bytes',
        'status documents of the commit (README.md, the spec file and its node files)',
        bytesOf(base),
        'bytes',
        null,
      ),
      f('firstCommitMs', 'first status commit (render, blobs, tree, commit, push)', firstMs, 'ms', null),
      f('oneRowMs', 'a commit where one row changed (median of 5)', oneMs, 'ms', null),
      f('allRowsMs', 'a commit where every row changed (median of 5)', allMs, 'ms', null),
      // Proportional to the change would make this 1 / n; the target is set at 10 / n.
      f('oneRowShare', 'one-row commit ÷ every-row commit, time', oneMs / allMs, '×', 10 / n),
    ];
  } finally {
    await fx.close();
  }
}

export async function run(): Promise<void> {
  for (const n of sizesFrom('DRYDOCK_BENCH_STATUS_NODES', [5000])) recordFigures(await measure(n));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
