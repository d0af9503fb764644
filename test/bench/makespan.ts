/**
 * Benchmark (issue 16 items 2–3, issue 11's benchmark): on the real control plane, a replace
 * rollout and an in-place NodeOp with reboots, each over N nodes `concurrency` at a time,
 * against the ideal — waves × the time the same step takes on one node, measured in the same
 * run — and the API writes they make per node against the minimum the steps need.
 * Sizes: DRYDOCK_BENCH_MAKESPAN_NODES (default 6), DRYDOCK_BENCH_MAKESPAN_CONCURRENCY
 * (default 2). Alone: `npx tsc -p . && node dist/test/bench/makespan.js`. DRYDOCK_BENCH_TIMELINE=1
 * prints when each write to each node went out; DRYDOCK_BENCH_DRYDOCK_LOG=FILE keeps drydock's log.
 * Each run also measures the floor (floor.ts) over the same fleet, drydock stopped, and records
 * drydock's makespan ÷ the floor's; DRYDOCK_BENCH_MAKESPAN_PAIRS=k (default 1) measures each kind's
 * fleet k times, drydock and the floor alternately, and records the medians.
 */
import { writeFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../../src/sandbox/control-plane/index.js';
import { median } from '../../src/plan/pace.js';
import { eventually } from '../support/control-plane.js';
import { isEventPath, type ProxiedRequest } from '../service/counting-proxy.js';
import { apiCallOf, callKey } from '../e2e/api-calls.js';
import { componentUsage, describeUsage } from './components.js';
import { floorNodeOp, floorReplace, NODEOP_STEPS, REPLACE_STEPS, type FloorOptions, type FloorRun } from './floor.js';
import { describeSteps, NODEOP_MARKS, nodeSteps, REPLACE_MARKS } from './node-steps.js';
import { recordFigures, type Figure } from './results.js';
import {
  DRYDOCK_NAMESPACE,
  GROUP_LABEL,
  IMAGE,
  imageDoc,
  KWOK_POD_READY_AGAIN,
  nodeOpDoc,
  operated,
  PODS_PER_NODE,
  replaced,
  startRolloutWorld,
  type RolloutWorld,
  type RolloutWorldOptions,
} from './rollout-world.js';
import { isWrite, nodeOpMinimum, refused, replaceMinimum, tally, total, type MinimalWrite } from './rollout-writes.js';

const positive = (name: string, fallback: number): number => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name}=${process.env[name]}: expected a positive integer`);
  return v;
};

interface Measured {
  readonly ms: number;
  readonly writes: ProxiedRequest[];
}

/** drydock's rounds so far, from its /metrics: how many, and their total seconds. */
async function rounds(w: RolloutWorld): Promise<{ count: number; sum: number }> {
  const text = await (await fetch(`${await w.drydock.url}/metrics`)).text();
  const value = (name: string): number =>
    Number(
      new RegExp(`^drydock_reconcile_duration_seconds_${name}\\{result="ok"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0,
    );
  return { count: value('count'), sum: value('sum') };
}

/**
 * While `work` ran: CPU seconds per process (where the machine's cores went: drydock, the API
 * server, KWOK…) and drydock's rounds (how many, how long each on average).
 */
async function usageOver<T>(w: RolloutWorld, title: string, work: () => Promise<T>): Promise<T> {
  const usage = () => componentUsage({ drydock: w.drydock.proc.pid });
  const [before, roundsBefore] = [usage(), await rounds(w)];
  const t0 = Date.now();
  const out = await work();
  const [after, roundsAfter] = [usage(), await rounds(w)];
  const n = roundsAfter.count - roundsBefore.count;
  const mean = n > 0 ? (roundsAfter.sum - roundsBefore.sum) / n : 0;
  console.log(`  ${title}, CPU over ${((Date.now() - t0) / 1000).toFixed(0)} s: ${describeUsage(after, before)}`);
  console.log(`  ${title}: ${n} drydock rounds, ${mean.toFixed(2)} s each on average`);
  return out;
}

/**
 * Pushes `files`, waits until `done`, then until drydock has written nothing for 3 s; prints
 * the writes at once (a later step that gets stuck does not lose this one's figures).
 */
async function measure(
  w: RolloutWorld,
  files: Record<string, string>,
  message: string,
  done: () => Promise<boolean>,
  shown: { nodes: number; minimum: readonly MinimalWrite[] },
): Promise<Measured> {
  const i0 = w.proxy.requests.length;
  const t0 = Date.now();
  await w.repo.push(files, message);
  // Ten minutes: a rollout stuck on something outside drydock must not hold a shared slot for an hour.
  await eventually(message, async () => (await done()) || undefined, { timeoutMs: 600_000, intervalMs: 50 });
  const ms = Date.now() - t0;
  const lastWrite = (): number => w.proxy.requests.filter(isWrite).at(-1)?.at ?? 0;
  await eventually('writes settled', async () => Date.now() - lastWrite() > 3_000 || undefined, {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  const m = { ms, writes: w.proxy.requests.slice(i0).filter(isWrite) };
  breakdown(message, m, shown.nodes, shown.minimum);
  return m;
}

/** Per node, the seconds from the push to each write on its Node object: where a wave's time goes. */
function timeline(m: Measured): void {
  const t0 = m.writes[0]?.at ?? 0;
  const byNode = new Map<string, string[]>();
  for (const r of m.writes) {
    const node = /^\/api\/v1\/nodes\/([^/?]+)/.exec(r.path)?.[1];
    if (node === undefined) continue;
    byNode.set(node, [...(byNode.get(node) ?? []), `${r.method[0]}${((r.at - t0) / 1000).toFixed(1)}`]);
  }
  for (const [node, at] of byNode) console.log(`    ${node}: ${at.join(' ')}`);
}

/** Per kind of write, how long the API server took to answer (seen through the proxy): median, p90, max. */
function latencies(m: Measured): void {
  const byKind = new Map<string, number[]>();
  for (const r of m.writes) {
    if (r.answeredAt === undefined) continue;
    const kind = callKey(apiCallOf(r));
    byKind.set(kind, [...(byKind.get(kind) ?? []), r.answeredAt - r.at]);
  }
  console.log('  API latency per write kind (ms): median / p90 / max');
  for (const [kind, ms] of byKind) {
    const s = [...ms].sort((a, b) => a - b);
    const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
    console.log(`  ${String(s.length).padStart(5)}  ${kind}: ${at(0.5)} / ${at(0.9)} / ${at(1)}`);
  }
}

function breakdown(title: string, m: Measured, nodes: number, minimum: readonly MinimalWrite[]): void {
  console.log(`\n${title}: ${m.writes.length} writes over ${nodes} node(s) in ${(m.ms / 1000).toFixed(1)} s`);
  if (process.env.DRYDOCK_BENCH_TIMELINE === '1') {
    timeline(m);
    latencies(m);
  }
  for (const [key, n] of tally(m.writes)) console.log(`  ${String(n).padStart(5)}  ${key}`);
  printSteps('per node, from the writes', m.writes);
  console.log(`  minimum per node (${total(minimum)}):`);
  for (const s of minimum) console.log(`  ${String(s.count).padStart(5)}  ${s.write}`);
}

/** Per node, the time between its steps' writes (node-steps.ts): median and p90 over the nodes. */
function printSteps(title: string, writes: readonly ProxiedRequest[]): void {
  const marks = nodeSteps(writes);
  const nodeOp = [...marks.values()].some((m) => m['job'] !== undefined);
  console.log(`  ${title}:`);
  for (const line of describeSteps(marks, nodeOp ? NODEOP_MARKS : REPLACE_MARKS)) console.log(`    ${line}`);
  for (const line of describeSteps(marks, ['first', 'end'])) console.log(`    ${line} (the whole node)`);
}

/**
 * The floor driver (floor.ts) over the fleet, drydock stopped: its makespan, its own step times
 * and, from the proxy, the same per-node read-out as drydock's, and the CPU it took.
 */
async function floorOf(
  w: RolloutWorld,
  title: string,
  steps: readonly string[],
  run: (o: FloorOptions) => Promise<FloorRun>,
  o: RolloutWorldOptions,
): Promise<FloorRun> {
  const kc = new KubeConfig();
  kc.loadFromString(w.proxy.kubeconfig);
  const i0 = w.proxy.requests.length;
  const before = componentUsage();
  const floor = await run({
    kc,
    cloudUrl: w.cloudUrl,
    group: 'fleet',
    groupLabel: GROUP_LABEL,
    concurrency: o.concurrency,
    minReadySeconds: 1,
    jobNamespace: DRYDOCK_NAMESPACE,
  });
  const writes = w.proxy.requests.slice(i0).filter(isWrite);
  console.log(`\n${title}: ${writes.length} writes over ${o.nodes} node(s) in ${(floor.ms / 1000).toFixed(1)} s`);
  console.log(`  ${title}, CPU: ${describeUsage(componentUsage(), before)}`);
  console.log(`  ${title}, per node, the floor's own steps:`);
  for (const line of describeSteps(floor.nodes, steps)) console.log(`    ${line}`);
  printSteps(`${title}, per node, from the writes`, writes);
  return floor;
}

/**
 * DRYDOCK_BENCH_MAKESPAN_EVENTS: `written` (the default: drydock's Events go to the API server
 * like every other write) or `absorbed` (the counting proxy answers them itself, an experiment).
 */
function eventsAbsorbed(): boolean {
  const text = process.env.DRYDOCK_BENCH_MAKESPAN_EVENTS ?? 'written';
  if (text !== 'written' && text !== 'absorbed')
    throw new Error(`DRYDOCK_BENCH_MAKESPAN_EVENTS=${text}: expected written or absorbed`);
  return text === 'absorbed';
}

/** One-node reference runs: DRYDOCK_BENCH_MAKESPAN_REFERENCES (1 or 2); 2 above the default 6 nodes. */
function references(nodes: number): 1 | 2 {
  const text = process.env.DRYDOCK_BENCH_MAKESPAN_REFERENCES ?? (nodes > 6 ? '2' : '1');
  if (text !== '1' && text !== '2') throw new Error(`DRYDOCK_BENCH_MAKESPAN_REFERENCES=${text}: expected 1 or 2`);
  return text === '2' ? 2 : 1;
}

interface Pairs {
  /** The first pair's drydock run: its writes are the ones the write figures read. */
  readonly first: Measured;
  /** Medians over the pairs: drydock's makespan, the floor's, and drydock's ÷ the floor's of each pair. */
  readonly drydockMs: number;
  readonly floorMs: number;
  readonly ratio: number;
  /** "" for one pair; else each pair's ratio in the order run, for the figure's text. */
  readonly described: string;
}

/**
 * `count` pairs of the same fleet job, drydock's and the floor's, one after the other, their
 * order alternating (drydock first in even pairs, the floor first in odd ones) so that a drift
 * of the machine's load over the run weighs on both alike. On two shared cores the same code
 * has measured 10 % apart from run to run; the median of the pairs' ratios is what a target
 * of 5 % can be read from. drydock is stopped while the floor runs and running again after.
 */
async function alternated(
  w: RolloutWorld,
  count: number,
  job: {
    readonly drydock: (i: number) => Promise<Measured>;
    readonly floor: (i: number, drydockFirst: boolean) => Promise<FloorRun>;
  },
): Promise<Pairs> {
  const runs: { drydock: Measured; floor: FloorRun }[] = [];
  for (let i = 0; i < count; i++) {
    const drydockFirst = i % 2 === 0;
    const floorRun = async (): Promise<FloorRun> => {
      await w.stopDrydock();
      try {
        return await job.floor(i, drydockFirst);
      } finally {
        await w.startDrydock();
      }
    };
    const drydock = drydockFirst ? await job.drydock(i) : undefined;
    const floor = await floorRun();
    runs.push({ drydock: drydock ?? (await job.drydock(i)), floor });
  }
  const ratios = runs.map((r) => r.drydock.ms / r.floor.ms);
  const described =
    count === 1
      ? ''
      : ` (median of ${count} pairs run alternately, drydock first in the 1st: ${ratios.map((r) => r.toFixed(3)).join(', ')})`;
  console.log(`\npairs, drydock ÷ floor${described}`);
  const first = runs[0];
  if (first === undefined) throw new Error('makespan: no pair ran');
  return {
    first: first.drydock,
    drydockMs: median(runs.map((r) => r.drydock.ms)),
    floorMs: median(runs.map((r) => r.floor.ms)),
    ratio: median(ratios),
    described,
  };
}

const isEvent = (r: ProxiedRequest): boolean => isEventPath(r.path);

export async function run(): Promise<Figure[]> {
  const o: RolloutWorldOptions = {
    nodes: positive('DRYDOCK_BENCH_MAKESPAN_NODES', 6),
    concurrency: positive('DRYDOCK_BENCH_MAKESPAN_CONCURRENCY', 2),
    bootDelaySeconds: 5,
    rebootSeconds: 5,
    jobRunSeconds: 2,
    workloads: positive('DRYDOCK_BENCH_MAKESPAN_WORKLOADS', 1),
    eventsAbsorbed: eventsAbsorbed(),
  };
  const waves = Math.ceil(o.nodes / o.concurrency);
  const pairs = positive('DRYDOCK_BENCH_MAKESPAN_PAIRS', 1);
  const size = `${o.nodes} nodes, ${o.concurrency} at a time (${waves} waves), ${PODS_PER_NODE} pods per node in ${o.workloads} workload(s), boot ${o.bootDelaySeconds} s, reboot ${o.rebootSeconds} s, Job ${o.jobRunSeconds} s${o.eventsAbsorbed === true ? ", drydock's Events answered by the counting proxy, not written" : ''}`;
  const workloads = o.workloads === 1 ? '' : ` DRYDOCK_BENCH_MAKESPAN_WORKLOADS=${o.workloads}`;
  const paired = pairs === 1 ? '' : ` DRYDOCK_BENCH_MAKESPAN_PAIRS=${pairs}`;
  const absorbed = o.eventsAbsorbed === true ? ' DRYDOCK_BENCH_MAKESPAN_EVENTS=absorbed' : '';
  const command = `npx tsc -p . && DRYDOCK_BENCH_MAKESPAN_NODES=${o.nodes} DRYDOCK_BENCH_MAKESPAN_CONCURRENCY=${o.concurrency}${workloads}${paired}${absorbed} node dist/test/bench/makespan.js`;
  const cp = await startControlPlane({
    log: () => undefined,
    jobPods: 'host',
    kwokConfig: KWOK_POD_READY_AGAIN,
    // At every size: the controller manager's and scheduler's default 20 requests/s, and KWOK's
    // paced status writes, make the re-creation of a wave's evicted pods the bottleneck of the
    // benchmark, not drydock (a wave of 20 nodes evicts and re-creates 40 pods at once).
    clientQps: 100,
  });
  try {
    const w = await startRolloutWorld(cp, o);
    try {
      const replaceMin = replaceMinimum(PODS_PER_NODE);
      const opMin = nodeOpMinimum(PODS_PER_NODE);
      const one = (minimum: readonly MinimalWrite[]) => ({ nodes: 1, minimum });
      const fleet = (minimum: readonly MinimalWrite[]) => ({ nodes: o.nodes, minimum });
      // The one-node reference is measured before and after the fleet and averaged, so a swing
      // of the shared machine's load during the run does not set the ideal by itself. At the
      // default size once (before), which keeps `npm run bench` as short as it was.
      const twice = references(o.nodes) === 2;
      const soloReplace = await measure(
        w,
        { 'specs/solo-image.yaml': imageDoc('solo', IMAGE(2), o) },
        'solo to v2',
        () => replaced(w, 'solo', 1, IMAGE(2)),
        one(replaceMin),
      );
      // Pair i's drydock rolls the fleet to v(2+i). The floor replaces every node on the image
      // drydock's spec asks for then, so the restarted drydock finds nothing to do there.
      const replacePairs = await alternated(w, pairs, {
        drydock: (i) =>
          usageOver(w, `fleet to v${2 + i}`, () =>
            measure(
              w,
              { 'specs/fleet-image.yaml': imageDoc('fleet', IMAGE(2 + i), o) },
              `fleet to v${2 + i}`,
              () => replaced(w, 'fleet', o.nodes, IMAGE(2 + i)),
              fleet(replaceMin),
            ),
          ),
        floor: (i, drydockFirst) =>
          floorOf(
            w,
            'floor: fleet replaced',
            REPLACE_STEPS,
            (f) => floorReplace(f, IMAGE(drydockFirst ? 2 + i : 1 + i)),
            o,
          ),
      });
      const soloReplaceAfter =
        twice &&
        (await measure(
          w,
          { 'specs/solo-image.yaml': imageDoc('solo', IMAGE(3), o) },
          'solo to v3',
          () => replaced(w, 'solo', 1, IMAGE(3)),
          one(replaceMin),
        ));
      const soloOp = await measure(
        w,
        { 'specs/solo-op.yaml': nodeOpDoc('solo-op', 'solo', o) },
        'solo NodeOp',
        () => operated(w, 'solo', 'solo-op'),
        one(opMin),
      );
      const nth = (name: string, i: number): string => (i === 0 ? name : `${name}-${i + 1}`);
      const opPairs = await alternated(w, pairs, {
        drydock: (i) =>
          usageOver(w, nth('fleet NodeOp', i), () =>
            measure(
              w,
              { [`specs/${nth('fleet-op', i)}.yaml`]: nodeOpDoc(nth('fleet-op', i), 'fleet', o) },
              nth('fleet NodeOp', i),
              () => operated(w, 'fleet', nth('fleet-op', i)),
              fleet(opMin),
            ),
          ),
        floor: (i) => floorOf(w, 'floor: fleet NodeOp', NODEOP_STEPS, (f) => floorNodeOp(f, nth('floor-op', i)), o),
      });
      const soloOpAfter =
        twice &&
        (await measure(
          w,
          { 'specs/solo-op-after.yaml': nodeOpDoc('solo-op-after', 'solo', o) },
          'solo NodeOp after the fleet',
          () => operated(w, 'solo', 'solo-op-after'),
          one(opMin),
        ));
      // The writes are read from the first pair's drydock run (they hardly vary between runs).
      const [fleetReplace, fleetOp] = [replacePairs.first, opPairs.first];
      const mean = (...ms: (Measured | false)[]): number => {
        const xs = ms.filter((m): m is Measured => m !== false).map((m) => m.ms);
        return xs.reduce((a, b) => a + b, 0) / xs.length;
      };
      const sampled = twice ? 'mean of a run before and one after the fleet' : 'one run, before the fleet';
      const replaceOne = mean(soloReplace, soloReplaceAfter);
      const opOne = mean(soloOp, soloOpAfter);
      const figure = (id: string, what: string, value: number, unit: string, target: number | null): Figure => ({
        id: `makespan.${id}@${o.nodes}${o.workloads === 1 ? '' : `/${o.workloads}pdb`}${o.eventsAbsorbed === true ? '/eventsAbsorbed' : ''}`,
        what,
        value: Number(value.toFixed(4)),
        unit,
        target,
        size,
        command,
      });
      const objectWrites = (m: Measured): number => m.writes.filter((r) => !isEvent(r)).length;
      const events = (m: Measured): number => m.writes.filter(isEvent).length;
      const refusals = (m: Measured): number => m.writes.filter((r) => !isEvent(r) && refused(r)).length;
      const figures = [
        figure(
          'replaceOneNode',
          `replace rollout of one node: push → old node gone, new one Ready (${sampled})`,
          replaceOne / 1000,
          's',
          null,
        ),
        figure(
          'replaceFleet',
          `replace rollout of ${o.nodes} nodes: push → every node replaced`,
          replacePairs.drydockMs / 1000,
          's',
          null,
        ),
        figure(
          'replaceRatio',
          'replace makespan ÷ (waves × one-node time)',
          replacePairs.drydockMs / (waves * replaceOne),
          '×',
          1.1,
        ),
        figure(
          'nodeOpOneNode',
          `NodeOp with drain and reboot on one node: push → recorded, uncordoned (${sampled})`,
          opOne / 1000,
          's',
          null,
        ),
        figure('nodeOpFleet', `NodeOp with drain and reboot on ${o.nodes} nodes`, opPairs.drydockMs / 1000, 's', null),
        figure(
          'nodeOpRatio',
          'NodeOp makespan ÷ (waves × one-node time)',
          opPairs.drydockMs / (waves * opOne),
          '×',
          1.1,
        ),
        figure(
          'replaceFloor',
          `the floor of the replace over ${o.nodes} nodes: the calls it needs, each as soon as the world answered (drydock stopped)`,
          replacePairs.floorMs / 1000,
          's',
          null,
        ),
        figure(
          'replaceOverFloor',
          `replace makespan ÷ the floor's${replacePairs.described}`,
          replacePairs.ratio,
          '×',
          1.05,
        ),
        figure(
          'nodeOpFloor',
          `the floor of the NodeOp over ${o.nodes} nodes: the calls it needs, each as soon as the world answered (drydock stopped)`,
          opPairs.floorMs / 1000,
          's',
          null,
        ),
        figure('nodeOpOverFloor', `NodeOp makespan ÷ the floor's${opPairs.described}`, opPairs.ratio, '×', 1.05),
        figure(
          'replaceWritesPerNode',
          'API writes per replaced node (not Events), fleet rollout',
          objectWrites(fleetReplace) / o.nodes,
          'writes',
          null,
        ),
        figure(
          'replaceWritesRatio',
          `… ÷ the steps' minimum (${total(replaceMin)})`,
          objectWrites(fleetReplace) / o.nodes / total(replaceMin),
          '×',
          1.2,
        ),
        figure('replaceEventsPerNode', 'Events per replaced node', events(fleetReplace) / o.nodes, 'writes', null),
        figure(
          'nodeOpWritesPerNode',
          'API writes per NodeOp node with reboot (not Events)',
          objectWrites(fleetOp) / o.nodes,
          'writes',
          null,
        ),
        figure(
          'nodeOpWritesRatio',
          `… ÷ the steps' minimum (${total(opMin)})`,
          objectWrites(fleetOp) / o.nodes / total(opMin),
          '×',
          1.2,
        ),
        figure('nodeOpEventsPerNode', 'Events per NodeOp node', events(fleetOp) / o.nodes, 'writes', null),
        figure(
          'replaceRefusedPerNode',
          'of the writes per replaced node, refused by the API server (a PDB 429, a 409)',
          refusals(fleetReplace) / o.nodes,
          'writes',
          null,
        ),
        figure(
          'nodeOpRefusedPerNode',
          'of the writes per NodeOp node, refused by the API server (a PDB 429, a 409)',
          refusals(fleetOp) / o.nodes,
          'writes',
          null,
        ),
      ];
      recordFigures(figures);
      return figures;
    } finally {
      // For reading where the time went: drydock's own log, every action and round with its time.
      const logFile = process.env.DRYDOCK_BENCH_DRYDOCK_LOG;
      if (logFile) writeFileSync(logFile, w.drydockLog().join('\n') + '\n');
      await w.close();
    }
  } finally {
    await cp.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
