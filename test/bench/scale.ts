/**
 * Benchmark: drydock idle at scale on the real control plane. KWOK nodes, ten pods per node in
 * Deployments under PDBs; drydock runs in-process (so its CPU and memory are this process's),
 * reaching the API server only through the counting proxy, which runs in a process of its own
 * (relaying the watch streams is not drydock's CPU, nor its buffers drydock's memory). Per size: API requests per idle
 * reconcile (target 0), CPU time per idle reconcile (process.cpuUsage, not wall time), resident
 * memory over the baseline per pod and per node (targets 1 KiB and 10 KiB), time from start to
 * the first plan. Sizes (nodes; pods are ten times as many): DRYDOCK_BENCH_SCALE, default 50.
 * DRYDOCK_BENCH_SCALE_CHURN=1 runs the churn benchmark (churn.ts) on each world after its idle
 * figures, so the largest size is set up once for both; DRYDOCK_BENCH_SCALE_WAVE=N then adds a
 * replace rollout of N more nodes in one wave to the same control plane (scale-wave.ts).
 * Set-up phases, each control-plane process's CPU and memory, and KWOK's lease lag are printed
 * as the run goes.
 * Alone: `npx tsc -p . && node dist/test/bench/scale.js`.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { startControlPlane } from '../../src/sandbox/control-plane/index.js';
import { startIdleWorld } from '../service/idle-world.js';
import { describeSeen, type SeenRequest } from '../service/counting-proxy.js';
import { recordFigures, sizesFrom, type Figure } from './results.js';
import { churnOn } from './churn.js';
import { playWait, waitPlayed, waveOn, waveSize } from './scale-wave.js';
import { componentUsage, describeUsage, residentByMapping, type Usage } from './components.js';
import { nodeHealth, REPLICAS, SCALE_HEARTBEAT } from './scale-world.js';

const ROUNDS = 200;
const SETTLE_MS = 3_000;
const QUIET_MS = 20_000;
/** glibc's malloc settings this run was given (read from the environment at start), as `K=V `. */
const MALLOC_ENV = Object.entries(process.env)
  .filter(([k]) => k.startsWith('MALLOC_'))
  .map(([k, v]) => `${k}=${v ?? ''} `)
  .join('');
/** How to reproduce a size's figures, with the V8 flags and malloc settings this run was given. */
const READY_ENV = process.env.DRYDOCK_BENCH_SCALE_READY
  ? `DRYDOCK_BENCH_SCALE_READY=${process.env.DRYDOCK_BENCH_SCALE_READY} `
  : '';
const COMMAND = (nodes: number) =>
  `npx tsc -p . && ${MALLOC_ENV}${READY_ENV}DRYDOCK_BENCH_SCALE=${nodes} node ${[...process.execArgv, ''].join(' ')}dist/test/bench/scale.js`;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Memory {
  readonly rss: number;
  /** Resident MiB by kind of mapping (components.ts). */
  readonly mappings: ReturnType<typeof residentByMapping>;
  readonly heap: number;
  /** The JS heap V8 has committed (used or not). */
  readonly heapTotal: number;
  /** Memory of C++ objects bound to JS ones (Buffers among them), outside the JS heap. */
  readonly external: number;
  readonly arrayBuffers: number;
  /** MiB committed and used per V8 heap space that grows with work (new, old, code). */
  readonly spaces: Record<string, { readonly committed: number; readonly used: number }>;
}

/** V8's young generation, old generation and code: where committed-but-unused heap sits. */
function heapSpaces(): Memory['spaces'] {
  const out: Record<string, { committed: number; used: number }> = {};
  for (const s of getHeapSpaceStatistics())
    if (['new_space', 'old_space', 'code_space'].includes(s.space_name))
      out[s.space_name] = { committed: s.space_size / 2 ** 20, used: s.space_used_size / 2 ** 20 };
  return out;
}

/** Memory after three garbage collections and a few quiet seconds (V8 uncommits some pages late). */
async function settledMemory(): Promise<Memory> {
  for (let i = 0; i < 3; i++) gc();
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  gc();
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    mappings: residentByMapping(),
    heap: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    spaces: heapSpaces(),
  };
}

/**
 * Creates the workloads from a process of its own (scale-setup.ts), so this process, where
 * drydock runs, holds nothing of the set-up when its baseline is taken. Returns the phases' ms.
 */
function setUpElsewhere(
  kubeconfigPath: string,
  pods: number,
): Promise<{ nodesReady: number; workloads: number; pods: number; podsReady: number }> {
  const script = fileURLToPath(new URL('./scale-setup.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, kubeconfigPath, String(pods)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let last = '';
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{')) last = line;
      else console.log(line);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`workload set-up exited with ${code}`));
      else resolve(JSON.parse(last) as { nodesReady: number; workloads: number; pods: number; podsReady: number });
    });
  });
}

/**
 * With DRYDOCK_BENCH_PROFILE=DIR, a CPU profile of `work` is written to DIR/NAME.cpuprofile
 * (open it in Chrome's DevTools or speedscope): the forced rounds and the quiet period alone,
 * without the minutes of set-up a whole-process --cpu-prof would hold.
 */
async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.DRYDOCK_BENCH_PROFILE;
  if (!dir) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

/**
 * Prints which requests the proxy saw in a phase and splits them: a watch (re)started is an
 * informer's stream being renewed (the API server ends every watch after its timeout, or drops
 * a watcher that fell behind, and the informer watches again), not a request a reconcile made;
 * everything else is charged to the rounds, the figure whose target is 0.
 */
function splitSeen(phase: string, seen: readonly SeenRequest[]): { byRounds: number; watches: number } {
  const watches = seen.filter((r) => r.watch).length;
  console.log(
    `(${phase}: ${seen.length} requests, ${watches} of them watches (re)started, ${seen.length - watches} other)`,
  );
  for (const r of seen) console.log(`  ${describeSeen(r)}`);
  return { byRounds: seen.length - watches, watches };
}

async function until(what: string, timeoutMs: number, ok: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function measureSize(nodes: number): Promise<Figure[]> {
  const pods = nodes * REPLICAS;
  const size = `${nodes} nodes, ${pods} pods, ${pods / REPLICAS} Deployments and PDBs`;
  const cp = await startControlPlane({ log: () => undefined, clientQps: 1000, nodeHeartbeat: SCALE_HEARTBEAT });
  try {
    const admin = cp.adminKubeConfig();
    const tSetup = Date.now();
    const setup: Record<string, number> = {};
    const cpStarted = componentUsage();
    let afterSetup: Record<string, Usage> = {};
    let baseline: Memory = {
      rss: 0,
      mappings: residentByMapping(),
      spaces: {},
      heap: 0,
      heapTotal: 0,
      external: 0,
      arrayBuffers: 0,
    };
    let t0 = 0;
    let recorded: Figure[] = [];
    // startIdleWorld creates the nodes; the workloads (bound to them) follow, and every pod
    // exists before drydock starts, so the baseline holds no part of the fleet and the first
    // plan sees all of it.
    const world = await startIdleWorld(
      admin,
      cp.kubeconfigPath,
      nodes,
      3,
      async () => {
        setup.nodes = Date.now() - tSetup;
        const say = (what: string) =>
          console.log(
            `(${what} after ${Math.round((Date.now() - tSetup) / 1000)} s: ${describeUsage(componentUsage(), cpStarted)}; load ${loadAverage()})`,
          );
        const timer = setInterval(() => say('set-up'), 60_000);
        try {
          Object.assign(setup, await setUpElsewhere(cp.kubeconfigPath, pods));
        } finally {
          clearInterval(timer);
        }
        afterSetup = componentUsage();
        console.log(`(set-up use: ${describeUsage(afterSetup, cpStarted)}; load ${loadAverage()})`);
        baseline = await settledMemory();
        t0 = Date.now();
      },
      true,
      // Warnings (a watch failing and restarting) on stderr: they tell a renewal's cause.
      pino({ level: 'warn' }, pino.destination(2)),
    );
    try {
      await until(
        'first plan',
        1_800_000,
        () => (world.service.state().lastOutcome?.observed.pods.length ?? 0) >= pods,
      );
      const firstPlanMs = Date.now() - t0;
      console.log(
        `(setup ${t0 - tSetup} ms: nodes ${setup.nodes} ms, all Ready ${setup.nodesReady} ms later, ` +
          `Deployments and PDBs ${setup.workloads} ms, their pods created ${setup.pods} ms later, ` +
          `Ready ${setup.podsReady} ms after that)`,
      );
      console.error('measuring');
      await world.idleRounds(20);
      const mem = await settledMemory();
      const cpu0 = process.cpuUsage();
      const forced = await profiled(`forced-${nodes}`, () => world.idleRounds(ROUNDS));
      const cpu = process.cpuUsage(cpu0);
      const forcedSplit = splitSeen(`${forced.rounds} forced rounds`, forced.seen);
      const r0 = world.service.state().rounds;
      const q0 = await world.mark();
      const qcpu0 = process.cpuUsage();
      await profiled(`quiet-${nodes}`, () => new Promise((r) => setTimeout(r, QUIET_MS)));
      const qcpu = process.cpuUsage(qcpu0);
      // The resident set as it stands in operation, with no collection forced: V8 lets garbage
      // build up to its next major collection, so this is above the settled figure.
      const rssInOperation = process.memoryUsage().rss - baseline.rss;
      const spacesInOperation = heapSpaces();
      const quietRounds = world.service.state().rounds - r0;
      const quietSplit = splitSeen(`${QUIET_MS / 1000} s left alone, ${quietRounds} rounds`, await world.seenSince(q0));
      const measured = componentUsage();
      const health = await nodeHealth(admin);
      console.log(
        `(measurement use: ${describeUsage(measured, afterSetup)}; load ${loadAverage()}; ` +
          `${health.ready} of ${nodes} nodes Ready, lease age p50 ${health.leaseAgeP50.toFixed(1)} s, ` +
          `max ${health.leaseAgeMax.toFixed(1)} s)`,
      );
      const rss = mem.rss - baseline.rss;
      const heap = mem.heap - baseline.heap;
      /** The target's allowance in bytes: 1 KiB per pod and 10 KiB per node. */
      const allowance = pods * 1024 + nodes * 10 * 1024;
      const mib = (k: Exclude<keyof Memory, 'mappings' | 'spaces'>) =>
        `${((mem[k] - baseline[k]) / 2 ** 20).toFixed(1)} MiB`;
      console.log(
        `(memory over baseline: rss ${mib('rss')}, heap used ${mib('heap')}, heap committed ${mib('heapTotal')}, ` +
          `external ${mib('external')}, of which arrayBuffers ${mib('arrayBuffers')}; resident by mapping: ` +
          Object.entries(mem.mappings)
            .map(([k, v]) => `${k} ${(v - baseline.mappings[k as keyof Memory['mappings']]).toFixed(1)} MiB`)
            .join(', ') +
          '; V8 spaces committed/used over baseline: ' +
          Object.entries(mem.spaces)
            .map(([k, v]) => {
              const b = baseline.spaces[k] ?? { committed: 0, used: 0 };
              return `${k} ${(v.committed - b.committed).toFixed(1)}/${(v.used - b.used).toFixed(1)} MiB`;
            })
            .join(', ') +
          `; in operation after the quiet period, no forced GC: rss ${(rssInOperation / 2 ** 20).toFixed(1)} MiB, ` +
          `old space committed/used ${spacesInOperation.old_space?.committed.toFixed(1)}/${spacesInOperation.old_space?.used.toFixed(1)} MiB)`,
      );
      const id = (name: string) => `scale.${name}@${nodes}`;
      const figure = (name: string, what: string, value: number, unit: string, target: number | null): Figure => ({
        id: id(name),
        what,
        value,
        unit,
        target,
        size,
        command: COMMAND(nodes),
      });
      const figures = [
        figure(
          'requestsPerIdleReconcile',
          `API requests per idle reconcile, made by the rounds (all but watches (re)started; ${forced.rounds} forced rounds)`,
          forcedSplit.byRounds / forced.rounds,
          'requests',
          0,
        ),
        figure(
          'watchRenewalsPerIdleReconcile',
          `watches (re)started by the informers per idle reconcile (${forced.rounds} forced rounds)`,
          forcedSplit.watches / forced.rounds,
          'requests',
          null,
        ),
        figure(
          'quietRequests',
          `API requests over ${QUIET_MS / 1000} s left alone, made by the rounds (all but watches (re)started; ${quietRounds} watch-woken rounds)`,
          quietSplit.byRounds,
          'requests',
          0,
        ),
        figure(
          'quietWatchRenewals',
          `watches (re)started by the informers over ${QUIET_MS / 1000} s left alone`,
          quietSplit.watches,
          'requests',
          null,
        ),
        figure(
          'cpuPerIdleReconcile',
          'CPU time per forced idle reconcile (user + system)',
          (cpu.user + cpu.system) / 1000 / forced.rounds,
          'ms',
          null,
        ),
        figure(
          'cpuQuietPerSecond',
          `CPU time per second left alone (watch events, ${quietRounds} rounds)`,
          (qcpu.user + qcpu.system) / 1000 / (QUIET_MS / 1000),
          'ms/s',
          null,
        ),
        figure(
          'rssPerPod',
          'resident memory over baseline ÷ pods (all of it charged to pods)',
          rss / pods / 1024,
          'KiB',
          1,
        ),
        figure(
          'rssPerNode',
          'resident memory over baseline ÷ nodes (all of it charged to nodes)',
          rss / nodes / 1024,
          'KiB',
          10,
        ),
        figure('rssBudget', 'resident memory over baseline ÷ (1 KiB × pods + 10 KiB × nodes)', rss / allowance, '×', 1),
        figure(
          'rssBudgetInOperation',
          `resident memory over baseline in operation (after ${QUIET_MS / 1000} s left alone, no forced GC) ÷ (1 KiB × pods + 10 KiB × nodes)`,
          rssInOperation / allowance,
          '×',
          1,
        ),
        figure('heapPerPod', 'JS heap over baseline ÷ pods (after GC)', heap / pods / 1024, 'KiB', null),
        figure(
          'heapBudget',
          'JS heap used over baseline (after GC) ÷ (1 KiB × pods + 10 KiB × nodes)',
          heap / allowance,
          '×',
          null,
        ),
        figure(
          'setup',
          'world set-up: nodes (until all Ready), Deployments and PDBs, their pods (until Ready)',
          (t0 - tSetup) / 1000,
          's',
          null,
        ),
        figure(
          'apiserverRss',
          'kube-apiserver resident memory after set-up',
          afterSetup['kube-apiserver']?.rssMiB ?? NaN,
          'MiB',
          null,
        ),
        figure('etcdRss', 'etcd resident memory after set-up', afterSetup.etcd?.rssMiB ?? NaN, 'MiB', null),
        figure(
          'heapCommitted',
          'JS heap committed by V8 over baseline (after GC)',
          (mem.heapTotal - baseline.heapTotal) / 2 ** 20,
          'MiB',
          null,
        ),
        figure(
          'external',
          'memory outside the JS heap held by JS objects (external, Buffers included) over baseline',
          (mem.external - baseline.external) / 2 ** 20,
          'MiB',
          null,
        ),
        figure(
          'firstPlan',
          'start → first plan (every node and pod listed and watched; empty plan)',
          firstPlanMs,
          'ms',
          null,
        ),
      ];
      // Recorded before the teardown: a slow stop must not lose minutes of setup.
      recordFigures(figures);
      if (process.env.DRYDOCK_BENCH_SCALE_CHURN === '1') {
        console.log(`## ${nodes} nodes under churn (same world)`);
        await churnOn(
          admin,
          world,
          nodes,
          COMMAND(nodes).replace('DRYDOCK_BENCH_SCALE=', 'DRYDOCK_BENCH_SCALE_CHURN=1 DRYDOCK_BENCH_SCALE='),
        );
      }
      recorded = figures;
    } finally {
      console.error('stopping');
      await world.close();
    }
    const wave = waveSize();
    if (wave > 0 && !(await waitPlayed(cp.adminKubeConfig(), pods, playWait())))
      console.log(`(no wave: KWOK had not played the world's pods within ${playWait() / 1000} s)`);
    else if (wave > 0) {
      console.log(`## a wave of ${wave} nodes on the ${nodes}-node world`);
      const churn = process.env.DRYDOCK_BENCH_SCALE_CHURN === '1' ? 'DRYDOCK_BENCH_SCALE_CHURN=1 ' : '';
      await waveOn(
        cp,
        nodes,
        wave,
        COMMAND(nodes).replace('DRYDOCK_BENCH_SCALE=', `${churn}DRYDOCK_BENCH_SCALE_WAVE=${wave} DRYDOCK_BENCH_SCALE=`),
      );
    }
    return recorded;
  } finally {
    await cp.stop();
  }
}

export async function run(): Promise<void> {
  for (const nodes of sizesFrom('DRYDOCK_BENCH_SCALE', [50])) {
    console.log(`## ${nodes} nodes`);
    await measureSize(nodes);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
