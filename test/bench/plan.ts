/**
 * Planner benchmarks:
 * - one plan over 5,000 nodes and 50,000 pods, mid-rollout (target ≤ 200 ms);
 * - the makespan of a 100-node rollout in the simulated world, against the ideal
 *   ceil(N / parallelism) × the time one node takes alone (target ≤ 1.05).
 */
import { performance } from 'node:perf_hooks';
import { ANNOTATIONS, type ObservedNode, type ObservedPod } from '../../src/observe/types.js';
import { plan } from '../../src/plan/index.js';
import {
  cloudGroup,
  config,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  pdb,
  pod,
  scalingGroup,
  T0,
} from '../plan/fixtures.js';
import { runScenario, type Scenario } from '../plan/sequence/driver.js';
import { STEADY } from '../plan/sequence/scenarios.js';

export interface BenchResult {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly target: number;
  /** value ÷ target: at most 1 meets the target. */
  readonly ratio: number;
}

const GROUPS = 5;
const NODES = 5000;
const PODS_PER_NODE = 10;
const LOCK = 'NodeImage/workers@workers-img:v2';

/** 5,000 nodes in five groups: a fifth already replaced, 50 in flight at every step, the rest outdated. */
function bigCluster() {
  const perGroup = NODES / GROUPS;
  const nodes: ObservedNode[] = [];
  const pods: ObservedPod[] = [];
  const groups = [];
  for (let g = 0; g < GROUPS; g++) {
    const name = `pool-${g}`;
    const instances = [];
    for (let i = 0; i < perGroup; i++) {
      const id = `i-${g}-${i}`;
      const done = i < perGroup / 5;
      const inst = instance(name, id, done ? 'img:v2' : 'img:v1');
      instances.push(inst);
      const k = i - perGroup / 5;
      const phase = k >= 0 && k < 10 ? (['Pending', 'Pending', 'Cordoned', 'Draining'] as const)[k % 4] : undefined;
      const annotations: Record<string, string> =
        phase !== undefined
          ? { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: phase, [ANNOTATIONS.phaseSince]: iso(-60) }
          : {};
      const nodeName = `${name}-${i}`;
      nodes.push(
        node(nodeName, inst.providerID, {
          annotations,
          unschedulable: phase === 'Cordoned' || phase === 'Draining',
          labels: { pool: name },
        }),
      );
      for (let p = 0; p < PODS_PER_NODE; p++) {
        const app = `app-${(i * PODS_PER_NODE + p) % 100}`;
        pods.push(pod(`ns-${g}`, `${nodeName}-${p}`, nodeName, { labels: { app }, pdbs: [`ns-${g}/${app}`] }));
      }
    }
    groups.push(cloudGroup(name, 'img:v2', instances));
  }
  const pdbs = [];
  for (let g = 0; g < GROUPS; g++)
    for (let a = 0; a < 100; a++) pdbs.push(pdb(`ns-${g}`, `app-${a}`, a % 10 === 0 ? 0 : 2));
  return {
    desired: desired({
      config: config(60),
      scalingGroups: Array.from({ length: GROUPS }, (_, g) => scalingGroup(`pool-${g}`, 'workers')),
      nodeImages: [nodeImage('workers', 'img:v2', { maxSurge: 10, maxUnavailable: 10, concurrency: 50 })],
    }),
    observed: observed({ nodes, pods, pdbs, cloudGroups: groups }),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

export function benchPlan(): BenchResult {
  const world = bigCluster();
  const now = new Date(T0);
  for (let i = 0; i < 3; i++) plan(world.desired, world.observed, now);
  const times: number[] = [];
  for (let i = 0; i < 9; i++) {
    const t = performance.now();
    plan(world.desired, world.observed, now);
    times.push(performance.now() - t);
  }
  const ms = median(times);
  return {
    name: `plan: ${NODES} nodes, ${NODES * PODS_PER_NODE} pods`,
    value: Math.round(ms * 10) / 10,
    unit: 'ms',
    target: 200,
    ratio: ms / 200,
  };
}

export function benchMakespan(
  nodes = 100,
  parallelism = 5,
): BenchResult & { readonly perNodeSeconds: number; readonly makespanSeconds: number } {
  const scenario = (n: number, p: number): Scenario => ({
    seed: 1,
    nodes: n,
    budget: p,
    rollout: { maxSurge: p, maxUnavailable: p },
    timing: STEADY,
    faults: { neverJoins: 0, evict429: 0 },
    crash: 0,
    images: [[0, 'img:v2']],
    // Enough room in the PDBs that they do not serialise the drains: this measures the planner.
    workloads: [{ app: 'web', replicas: n, minAvailable: Math.floor(n * 0.8) }],
  });
  const one = runScenario(scenario(1, 1));
  const all = runScenario(scenario(nodes, parallelism));
  if (one.outcome !== 'complete' || all.outcome !== 'complete' || all.violations.length > 0) {
    throw new Error(
      `makespan bench did not complete cleanly: ${one.outcome}, ${all.outcome}, ${all.violations.join('; ')}`,
    );
  }
  const ideal = Math.ceil(nodes / parallelism) * one.lastChangeAt;
  const ratio = all.lastChangeAt / ideal;
  return {
    name: `rollout makespan: ${nodes} nodes, parallelism ${parallelism}, ÷ ideal`,
    value: Math.round(ratio * 1000) / 1000,
    unit: '× ideal',
    target: 1.05,
    ratio: ratio / 1.05,
    perNodeSeconds: one.lastChangeAt,
    makespanSeconds: all.lastChangeAt,
  };
}

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const p = benchPlan();
  console.log(`${p.name}: ${p.value} ${p.unit} (target ≤ ${p.target} ${p.unit}, ratio ${p.ratio.toFixed(2)})`);
  results.push(p);
  for (const [nodes, parallelism] of [
    [100, 5],
    [500, 10],
  ] as const) {
    const m = benchMakespan(nodes, parallelism);
    console.log(
      `${m.name}: ${m.value} (${m.makespanSeconds}s vs ideal ${Math.ceil(nodes / parallelism)} × ${m.perNodeSeconds}s; target ≤ ${m.target}, ratio ${m.ratio.toFixed(2)})`,
    );
    results.push(m);
  }
  return results;
}
