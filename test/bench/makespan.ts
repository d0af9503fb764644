/**
 * Benchmark (issue 16 items 2–3, issue 11's benchmark): on the real control plane, a replace
 * rollout and an in-place NodeOp with reboots, each over N nodes `concurrency` at a time,
 * against the ideal — waves × the time the same step takes on one node, measured in the same
 * run — and the API writes they make per node against the minimum the steps need.
 * Sizes: DRYDOCK_BENCH_MAKESPAN_NODES (default 6), DRYDOCK_BENCH_MAKESPAN_CONCURRENCY
 * (default 2). Alone: `npx tsc -p . && node dist/test/bench/makespan.js`. DRYDOCK_BENCH_TIMELINE=1
 * prints when each write to each node went out; DRYDOCK_BENCH_DRYDOCK_LOG=FILE keeps drydock's log.
 * Each run also measures the floor (floor.ts) over the same fleet, drydock stopped, and records
 * drydock's makespan ÷ the floor's.
 */
import { writeFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../../src/sandbox/control-plane/index.js';
import { eventually } from '../support/control-plane.js';
import type { ProxiedRequest } from '../service/counting-proxy.js';
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
  await eventually(message, async () => (await done()) || undefined, { timeoutMs: 600_000, intervalMs: 200 });
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

/** One-node reference runs: DRYDOCK_BENCH_MAKESPAN_REFERENCES (1 or 2); 2 above the default 6 nodes. */
function references(nodes: number): 1 | 2 {
  const text = process.env.DRYDOCK_BENCH_MAKESPAN_REFERENCES ?? (nodes > 6 ? '2' : '1');
  if (text !== '1' && text !== '2') throw new Error(`DRYDOCK_BENCH_MAKESPAN_REFERENCES=${text}: expected 1 or 2`);
  return text === '2' ? 2 : 1;
}

const isEvent = (r: ProxiedRequest): boolean => /\/events(\?|$)/.test(r.path);

export async function run(): Promise<Figure[]> {
  const o: RolloutWorldOptions = {
    nodes: positive('DRYDOCK_BENCH_MAKESPAN_NODES', 6),
    concurrency: positive('DRYDOCK_BENCH_MAKESPAN_CONCURRENCY', 2),
    bootDelaySeconds: 5,
    rebootSeconds: 5,
    jobRunSeconds: 2,
    workloads: positive('DRYDOCK_BENCH_MAKESPAN_WORKLOADS', 1),
  };
  const waves = Math.ceil(o.nodes / o.concurrency);
  const size = `${o.nodes} nodes, ${o.concurrency} at a time (${waves} waves), ${PODS_PER_NODE} pods per node in ${o.workloads} workload(s), boot ${o.bootDelaySeconds} s, reboot ${o.rebootSeconds} s, Job ${o.jobRunSeconds} s`;
  const workloads = o.workloads === 1 ? '' : ` DRYDOCK_BENCH_MAKESPAN_WORKLOADS=${o.workloads}`;
  const command = `npx tsc -p . && DRYDOCK_BENCH_MAKESPAN_NODES=${o.nodes} DRYDOCK_BENCH_MAKESPAN_CONCURRENCY=${o.concurrency}${workloads} node dist/test/bench/makespan.js`;
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
      const fleetReplace = await usageOver(w, 'fleet to v2', () =>
        measure(
          w,
          { 'specs/fleet-image.yaml': imageDoc('fleet', IMAGE(2), o) },
          'fleet to v2',
          () => replaced(w, 'fleet', o.nodes, IMAGE(2)),
          fleet(replaceMin),
        ),
      );
      const soloReplaceAfter =
        twice &&
        (await measure(
          w,
          { 'specs/solo-image.yaml': imageDoc('solo', IMAGE(3), o) },
          'solo to v3',
          () => replaced(w, 'solo', 1, IMAGE(3)),
          one(replaceMin),
        ));
      // The floor beside drydock: the same fleet, drydock stopped so that nothing but the floor
      // acts on it. The group's image stays the one drydock's spec asks for, so the restarted
      // drydock finds nothing to do there.
      await w.stopDrydock();
      const floorReplaced = await floorOf(
        w,
        'floor: fleet replaced',
        REPLACE_STEPS,
        (f) => floorReplace(f, IMAGE(2)),
        o,
      );
      await w.startDrydock();
      const soloOp = await measure(
        w,
        { 'specs/solo-op.yaml': nodeOpDoc('solo-op', 'solo', o) },
        'solo NodeOp',
        () => operated(w, 'solo', 'solo-op'),
        one(opMin),
      );
      const fleetOp = await usageOver(w, 'fleet NodeOp', () =>
        measure(
          w,
          { 'specs/fleet-op.yaml': nodeOpDoc('fleet-op', 'fleet', o) },
          'fleet NodeOp',
          () => operated(w, 'fleet', 'fleet-op'),
          fleet(opMin),
        ),
      );
      const soloOpAfter =
        twice &&
        (await measure(
          w,
          { 'specs/solo-op-after.yaml': nodeOpDoc('solo-op-after', 'solo', o) },
          'solo NodeOp after the fleet',
          () => operated(w, 'solo', 'solo-op-after'),
          one(opMin),
        ));
      await w.stopDrydock();
      const floorOperated = await floorOf(w, 'floor: fleet NodeOp', NODEOP_STEPS, (f) => floorNodeOp(f, 'floor-op'), o);
      const mean = (...ms: (Measured | false)[]): number => {
        const xs = ms.filter((m): m is Measured => m !== false).map((m) => m.ms);
        return xs.reduce((a, b) => a + b, 0) / xs.length;
      };
      const sampled = twice ? 'mean of a run before and one after the fleet' : 'one run, before the fleet';
      const replaceOne = mean(soloReplace, soloReplaceAfter);
      const opOne = mean(soloOp, soloOpAfter);
      const figure = (id: string, what: string, value: number, unit: string, target: number | null): Figure => ({
        id: `makespan.${id}@${o.nodes}${o.workloads === 1 ? '' : `/${o.workloads}pdb`}`,
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
          fleetReplace.ms / 1000,
          's',
          null,
        ),
        figure(
          'replaceRatio',
          'replace makespan ÷ (waves × one-node time)',
          fleetReplace.ms / (waves * replaceOne),
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
        figure('nodeOpFleet', `NodeOp with drain and reboot on ${o.nodes} nodes`, fleetOp.ms / 1000, 's', null),
        figure('nodeOpRatio', 'NodeOp makespan ÷ (waves × one-node time)', fleetOp.ms / (waves * opOne), '×', 1.1),
        figure(
          'replaceFloor',
          `the floor of the replace over ${o.nodes} nodes: the calls it needs, each as soon as the world answered (drydock stopped)`,
          floorReplaced.ms / 1000,
          's',
          null,
        ),
        figure('replaceOverFloor', "replace makespan ÷ the floor's", fleetReplace.ms / floorReplaced.ms, '×', 1.05),
        figure(
          'nodeOpFloor',
          `the floor of the NodeOp over ${o.nodes} nodes: the calls it needs, each as soon as the world answered (drydock stopped)`,
          floorOperated.ms / 1000,
          's',
          null,
        ),
        figure('nodeOpOverFloor', "NodeOp makespan ÷ the floor's", fleetOp.ms / floorOperated.ms, '×', 1.05),
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
