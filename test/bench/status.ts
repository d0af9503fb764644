/**
 * Benchmark: the status writer at scale. One NodeImage whose status lists N node rows, written
 * by the real StatusWriter as a commit pushed to git http-backend: the first commit's size and
 * time, the cost of a commit where one row changed against one where every row changed, and,
 * the figure that says whether a one-row commit costs in proportion to the change or to the
 * fleet, a one-row commit at N rows against one at SMALL rows, both written in the same run to
 * the same server, one after the other, with each commit's time broken down into its parts.
 * Sizes: DRYDOCK_BENCH_STATUS_NODES, default 5000.
 * Alone: `npx tsc -p . && node dist/test/bench/status.js`.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import type { NodeRow } from '../../src/plan/types.js';
import type { StatusReport } from '../../src/report/types.js';
import { specStatus } from '../support/spec-status.js';
import { GitSource, StatusWriter, type WriteTimings } from '../../src/source/index.js';
import { tempDir, TEST_USER } from '../support/git-server.js';
import { createFixture } from '../source/fixture.js';
import { recordFigures, sizesFrom, type Figure } from './results.js';

const SOURCE = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';
const REPEAT = 5;
/** The small fleet a one-row commit at N rows is held against: its rows fit in the spec's own file. */
const SMALL = 50;
/** One-row commits at each size, taken in turns. */
const ONE_ROW_REPEAT = 15;
/**
 * One-row commit at N rows ÷ at SMALL rows. Proportional to the change would make it 1; the
 * report reaches the writer whole each round, so each row is still compared with its last
 * render (a few milliseconds at 5,000), and 1.2 leaves that pass a fifth of a commit's cost.
 */
const FLEET_RATIO_TARGET = 1.2;

function rows(n: number, phaseOf: (i: number) => NodeRow['phase']): NodeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    node: `worker-${String(i).padStart(5, '0')}`,
    phase: phaseOf(i),
    instance: `i-${(0x10000000 + i).toString(16)}`,
    image: 'registry.example/node-os:v2.0.0',
    since: '2024-03-01T12:00:00.000Z',
  }));
}

function report(cluster: string, nodeRows: NodeRow[]): StatusReport {
  const done = nodeRows.filter((r) => r.phase === 'Done').length;
  return {
    cluster,
    sourceCommit: SOURCE,
    specs: [specStatus('NodeImage', 'worker', { progress: { done, total: nodeRows.length }, nodes: nodeRows })],
  };
}

/** The fleet as first written, and the same fleet with one node moved on (not to Done: progress stays). */
const baseRows = (n: number): NodeRow[] => rows(n, (i) => (i % 3 === 0 ? 'Done' : 'Pending'));
const oneRowMoved = (n: number): NodeRow[] => rows(n, (i) => (i === 1 ? 'Cordoned' : i % 3 === 0 ? 'Done' : 'Pending'));

function bytesOf(r: StatusReport): number {
  let n = 0;
  for (const text of renderStatusDocs(r).values()) n += Buffer.byteLength(text);
  return n;
}

/**
 * Time the in-process Git server spends on requests (from a request's arrival to the end of
 * its response: git http-backend started, refs advertised, the pack received and indexed),
 * seen through Node's HTTP diagnostics channels, so a push splits into drydock's side and the
 * server's.
 */
function startServerClock(): { take(): { ms: number; requests: number } } {
  const started = new Map<IncomingMessage, number>();
  let ms = 0;
  let requests = 0;
  subscribe('http.server.request.start', (m) =>
    started.set((m as { request: IncomingMessage }).request, performance.now()),
  );
  subscribe('http.server.response.finish', (m) => {
    const req = (m as { request: IncomingMessage }).request;
    const t = started.get(req);
    if (t === undefined) return;
    started.delete(req);
    ms += performance.now() - t;
    requests += 1;
  });
  return {
    take() {
      const out = { ms, requests };
      ms = 0;
      requests = 0;
      return out;
    },
  };
}

/** One commit's cost: wall time, its parts, and the CPU time of this process. */
interface Sample extends WriteTimings {
  readonly totalMs: number;
  readonly serverMs: number;
  readonly requests: number;
  readonly cpuMs: number;
}

type Server = ReturnType<typeof startServerClock>;

let clock: Server | undefined;
/** One subscription per process, however many sizes are measured. */
const serverClock = (): Server => (clock ??= startServerClock());

async function sample(writer: StatusWriter, r: StatusReport, server: Server): Promise<Sample> {
  server.take();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const res = await writer.write(r);
  const totalMs = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  if (!res.changed) throw new Error('a status write that should have committed did not');
  const { ms: serverMs, requests } = server.take();
  return { ...res.timings, totalMs, serverMs, requests, cpuMs: (used.user + used.system) / 1000 };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The median of each part over the samples (each part's own median, so they need not add up). */
function medians(samples: readonly Sample[]): Sample {
  const of = (k: keyof Sample): number => median(samples.map((s) => s[k]));
  return {
    totalMs: of('totalMs'),
    renderMs: of('renderMs'),
    treeMs: of('treeMs'),
    commitMs: of('commitMs'),
    pushMs: of('pushMs'),
    serverMs: of('serverMs'),
    requests: of('requests'),
    cpuMs: of('cpuMs'),
  };
}

/** Median of `times` writes, alternating between two reports so every one commits. */
async function medianWrite(
  writer: StatusWriter,
  a: StatusReport,
  b: StatusReport,
  server: Server,
  times = REPEAT,
): Promise<Sample> {
  const samples: Sample[] = [];
  for (let i = 0; i < times; i++) samples.push(await sample(writer, i % 2 === 0 ? b : a, server));
  return medians(samples);
}

/** One-row commits at two fleet sizes, taken in turns (which goes first alternates), so load hits both alike. */
async function oneRowInTurns(
  big: { writer: StatusWriter; a: StatusReport; b: StatusReport },
  small: { writer: StatusWriter; a: StatusReport; b: StatusReport },
  server: Server,
): Promise<{ big: Sample; small: Sample }> {
  const bigs: Sample[] = [];
  const smalls: Sample[] = [];
  for (let i = 0; i < ONE_ROW_REPEAT; i++) {
    const pick = <T extends { a: StatusReport; b: StatusReport }>(s: T): StatusReport => (i % 2 === 0 ? s.b : s.a);
    if (i % 2 === 0) {
      smalls.push(await sample(small.writer, pick(small), server));
      bigs.push(await sample(big.writer, pick(big), server));
    } else {
      bigs.push(await sample(big.writer, pick(big), server));
      smalls.push(await sample(small.writer, pick(small), server));
    }
  }
  return { big: medians(bigs), small: medians(smalls) };
}

/** A one-row commit's parts as figures, at `rows` rows. */
function partFigures(s: Sample, rows: number, beside: string, command: string): Figure[] {
  const f = (name: string, what: string, value: number, unit = 'ms'): Figure => ({
    id: `status.oneRow.${name}@${rows}`,
    what: `one-row commit at ${rows} rows${beside}: ${what} (median of ${ONE_ROW_REPEAT})`,
    value,
    unit,
    target: null,
    size: `${rows} node rows`,
    command,
  });
  return [
    f('renderMs', 'render (report to files, each row compared with its last render)', s.renderMs),
    f('treeMs', 'new blobs and trees', s.treeMs),
    f('commitMs', 'message, parent, commit object', s.commitMs),
    f('pushClientMs', "push, drydock's side (object walk, pack, HTTP client)", s.pushMs - s.serverMs),
    f(
      'pushServerMs',
      'push, the server side (git http-backend: refs advertised, pack received and indexed)',
      s.serverMs,
    ),
    f('requests', 'HTTP requests', s.requests, 'requests'),
    f('cpuMs', 'CPU time of this process (with the in-process server, not git http-backend)', s.cpuMs),
  ];
}

export async function measure(n: number): Promise<Figure[]> {
  const server = serverClock();
  const fx = await createFixture();
  const smallCache = tempDir('drydock-bench-cache-');
  try {
    await fx.commit({ 'specs/drydock.yaml': 'cluster: bench\n' }, 1);
    // Each size its own cache clone of the one repository, so neither's objects or caches touch the other's.
    const writer = (cacheRoot: string, cluster: string, branch: string): StatusWriter =>
      new StatusWriter({
        source: new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot, retries: 0 }),
        cluster,
        branch,
      });
    const big = { writer: writer(fx.cacheRoot, 'bench', 'drydock/status'), a: report('bench', baseRows(n)) };
    const small = {
      writer: writer(smallCache.dir, 'small', 'drydock/status-small'),
      a: report('small', baseRows(SMALL)),
    };
    const t0 = performance.now();
    await big.writer.write(big.a);
    const firstMs = performance.now() - t0;
    await small.writer.write(small.a);
    const turns = await oneRowInTurns(
      { ...big, b: report('bench', oneRowMoved(n)) },
      { ...small, b: report('small', oneRowMoved(SMALL)) },
      server,
    );
    // Every row changing (every node moves on), against the one-row commits above.
    const allRows = report(
      'bench',
      rows(n, (i) => (i % 3 === 0 ? 'Done' : 'Cordoned')),
    );
    const all = await medianWrite(big.writer, big.a, allRows, server);
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
    const one = turns.big.totalMs;
    return [
      f(
        'bytes',
        'status documents of the commit (README.md, the spec file and its node files)',
        bytesOf(big.a),
        'bytes',
        null,
      ),
      f('firstCommitMs', 'first status commit (render, blobs, tree, commit, push)', firstMs, 'ms', null),
      f('oneRowMs', `a commit where one row changed (median of ${ONE_ROW_REPEAT})`, one, 'ms', null),
      f('allRowsMs', `a commit where every row changed (median of ${REPEAT})`, all.totalMs, 'ms', null),
      // Proportional to the change would make this 1 / n; the target is set at 10 / n.
      f('oneRowShare', 'one-row commit ÷ every-row commit, time', one / all.totalMs, '×', 10 / n),
      f(
        'oneRowFleetRatio',
        `one-row commit at ${n} rows ÷ one-row commit at ${SMALL} rows, time (same run, same server, in turns)`,
        one / turns.small.totalMs,
        '×',
        FLEET_RATIO_TARGET,
      ),
      f(
        'oneRowFleetCpuRatio',
        `one-row commit at ${n} rows ÷ at ${SMALL} rows, CPU time of this process`,
        turns.big.cpuMs / turns.small.cpuMs,
        '×',
        FLEET_RATIO_TARGET,
      ),
      ...partFigures(turns.big, n, '', command),
      ...partFigures(turns.small, SMALL, `, in turns with ${n} rows`, command),
    ];
  } finally {
    await fx.close();
    smallCache.remove();
  }
}

export async function run(): Promise<void> {
  for (const n of sizesFrom('DRYDOCK_BENCH_STATUS_NODES', [5000])) recordFigures(await measure(n));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
