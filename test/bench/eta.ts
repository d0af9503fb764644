/**
 * Benchmark (issue 33 item 3): how honest `drydock plan`'s ETA is. On the real control plane
 * with the sim cloud (the world of the makespan benchmark: rollout-world.ts), before each
 * rollout the plan is made as `drydock plan` makes it — the specs about to be pushed, the
 * cluster and the cloud as they are, the nodes the status branch saw done — once with those
 * observations and once without; then the change is pushed and timed until the rollout is over.
 * Reported per scenario: ETA ÷ actual, target 0.8–1.2 where the plan has observations.
 * Size: DRYDOCK_BENCH_ETA_NODES (default 6), DRYDOCK_BENCH_ETA_CONCURRENCY (default 2).
 * Alone: `npx tsc -p . && node dist/test/bench/eta.js`.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { listCluster, observe, type CountingKubeConfig } from '../../src/observe/index.js';
import { loadKubeConfig } from '../../src/observe/kube.js';
import { describePace, plan, type NodeTiming, type Plan } from '../../src/plan/index.js';
import { startControlPlane } from '../../src/sandbox/control-plane/index.js';
import { nodeOpRecordKey } from '../../src/protocol/keys.js';
import { providersFrom } from '../../src/service/options.js';
import type { DesiredState } from '../../src/spec/model.js';
import { GitSource } from '../../src/source/index.js';
import { observedNodes } from '../../src/cli/actions/observed-nodes.js';
import { loadFromDirectory } from '../../src/spec/load.js';
import { specDoc } from '../e2e/fleet.js';
import { eventually } from '../support/control-plane.js';
import { recordFigures, type Figure } from './results.js';
import {
  IMAGE,
  imageDoc,
  KWOK_POD_READY_AGAIN,
  nodeOpDoc,
  annotations,
  repoFiles,
  replaced,
  rollout,
  settled,
  startRolloutWorld,
  type RolloutWorld,
  type RolloutWorldOptions,
} from './rollout-world.js';

const positive = (name: string, fallback: number): number => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name}=${process.env[name]}: expected a positive integer`);
  return v;
};

interface Scenario {
  readonly id: string;
  readonly what: string;
  readonly files: Record<string, string>;
  /** Whether the rollout is over; `desired` is what was pushed, as loaded for the plan. */
  readonly done: (w: RolloutWorld, desired: DesiredState) => Promise<boolean>;
}

interface Outcome {
  readonly scenario: Scenario;
  readonly actualSeconds: number;
  /** With the status branch's observations, as drydock plan makes it. */
  readonly withObserved: number;
  readonly withoutObserved: number;
  readonly pace: string;
  /** The pace of the plan with observations came from observed nodes. */
  readonly observed: boolean;
}

/** The rollouts, in order: each later one has the earlier ones' nodes on the status branch. */
function scenarios(o: RolloutWorldOptions): Scenario[] {
  const opWith = (command: string): string =>
    nodeOpDoc('fleet-op', 'fleet', o).replace('- echo patched', `- ${command}`);
  const canary = specDoc('NodeImage', 'fleet', {
    image: IMAGE(4),
    strategy: 'replace',
    rollout: { ...rollout(o), canary: { nodes: 1, soak: '15s' } },
  });
  return [
    {
      id: 'replace1',
      what: 'replace, first rollout of the group (nothing observed yet)',
      files: { 'specs/fleet-image.yaml': imageDoc('fleet', IMAGE(2), o) },
      done: (w) => replaced(w, 'fleet', o.nodes, IMAGE(2)),
    },
    {
      id: 'replace2',
      what: 'replace, second rollout (the first one observed)',
      files: { 'specs/fleet-image.yaml': imageDoc('fleet', IMAGE(3), o) },
      done: (w) => replaced(w, 'fleet', o.nodes, IMAGE(3)),
    },
    {
      id: 'replaceCanary',
      what: 'replace with a canary node and a 15 s soak (two rollouts observed)',
      files: { 'specs/fleet-image.yaml': canary },
      done: (w) => replaced(w, 'fleet', o.nodes, IMAGE(4)),
    },
    {
      id: 'nodeOp1',
      what: 'NodeOp with drain, Job and reboot, first run (no node operation observed)',
      files: { 'specs/fleet-op.yaml': opWith('echo patched') },
      done: (w, d) => operatedAt(w, 'fleet-op', d),
    },
    {
      id: 'nodeOp2',
      what: 'the NodeOp again, a new revision (the first run observed)',
      files: { 'specs/fleet-op.yaml': opWith('echo patched again') },
      done: (w, d) => operatedAt(w, 'fleet-op', d),
    },
  ];
}

/** Every fleet node records the NodeOp's revision as pushed, and is settled. */
async function operatedAt(w: RolloutWorld, name: string, desired: DesiredState): Promise<boolean> {
  const revision = desired.nodeOps.find((op) => op.name === name)?.revision;
  const ns = await w.groupNodes('fleet');
  return ns.every((n) => annotations(n)[nodeOpRecordKey(name)] === revision && settled(n));
}

/** The specs of `files`, loaded as drydock loads a directory. */
async function load(files: Record<string, string>): Promise<DesiredState> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'drydock-bench-eta-'));
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    const loaded = await loadFromDirectory(dir);
    if (!loaded.ok)
      throw new Error(`the benchmark's specs do not load: ${loaded.errors.map((e) => e.message).join('; ')}`);
    return loaded.desired;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The plan `drydock plan` would make of `desired` now, against the world's cluster and cloud. */
async function planOf(
  w: RolloutWorld,
  kc: CountingKubeConfig,
  desired: DesiredState,
  observedNodes: readonly NodeTiming[],
): Promise<Plan> {
  const providers = providersFrom('sim', w.cloudUrl);
  const observed = await observe(desired, await listCluster(kc, desired), (p) => providers[p]);
  return plan(desired, observed, new Date(), { observedNodes });
}

const etaSeconds = (p: Plan, from: number): number => {
  if (p.forecast.eta === undefined) throw new Error('the plan has no ETA (it waits for a person)');
  return (Date.parse(p.forecast.eta) - from) / 1000;
};

async function runScenario(
  w: RolloutWorld,
  kc: CountingKubeConfig,
  files: Record<string, string>,
  s: Scenario,
): Promise<Outcome> {
  Object.assign(files, s.files);
  // As drydock plan reads them: the status branch of the repository, here its bare copy on the server.
  const source = new GitSource({ repo: w.repo.bare, retries: 1 });
  const timings = await observedNodes(source, 'drydock/status', pino({ level: 'silent' }));
  const desired = await load(files);
  const t0 = Date.now();
  const withObserved = await planOf(w, kc, desired, timings);
  const withoutObserved = await planOf(w, kc, desired, []);
  await w.repo.push(s.files, s.id);
  // Ten minutes: a rollout stuck on something outside drydock must not hold a shared slot for an hour.
  await eventually(s.id, async () => (await s.done(w, desired)) || undefined, { timeoutMs: 600_000, intervalMs: 250 });
  const actualSeconds = (Date.now() - t0) / 1000;
  const pace = withObserved.forecast.paces?.find((p) => p.spec.name.startsWith('fleet'));
  const out: Outcome = {
    scenario: s,
    actualSeconds,
    withObserved: etaSeconds(withObserved, t0),
    withoutObserved: etaSeconds(withoutObserved, t0),
    pace: pace !== undefined ? describePace(pace) : 'no pace',
    observed: pace?.basis === 'observed',
  };
  console.log(
    `${s.id}: actual ${actualSeconds.toFixed(1)} s; ETA with observations ${out.withObserved.toFixed(0)} s (${out.pace}; ${timings.length} node(s) on the status branch), without ${out.withoutObserved.toFixed(0)} s`,
  );
  return out;
}

export async function run(): Promise<Figure[]> {
  const o: RolloutWorldOptions = {
    nodes: positive('DRYDOCK_BENCH_ETA_NODES', 6),
    concurrency: positive('DRYDOCK_BENCH_ETA_CONCURRENCY', 2),
    bootDelaySeconds: 5,
    rebootSeconds: 5,
    jobRunSeconds: 2,
  };
  const size = `${o.nodes} nodes, ${o.concurrency} at a time, boot ${o.bootDelaySeconds} s, reboot ${o.rebootSeconds} s, Job ${o.jobRunSeconds} s`;
  const command = `npx tsc -p . && DRYDOCK_BENCH_ETA_NODES=${o.nodes} DRYDOCK_BENCH_ETA_CONCURRENCY=${o.concurrency} node dist/test/bench/eta.js`;
  const loadBefore = os.loadavg()[0] ?? 0;
  const cp = await startControlPlane({
    log: () => undefined,
    jobPods: 'host',
    kwokConfig: KWOK_POD_READY_AGAIN,
    clientQps: 100,
  });
  const outcomes: Outcome[] = [];
  try {
    const w = await startRolloutWorld(cp, o);
    try {
      const files = repoFiles(o);
      const kc = loadKubeConfig(cp.kubeconfigPath);
      for (const s of scenarios(o)) outcomes.push(await runScenario(w, kc, files, s));
    } finally {
      await w.close();
    }
  } finally {
    await cp.stop();
  }
  console.log(
    `load average: ${loadBefore.toFixed(1)} before, ${(os.loadavg()[0] ?? 0).toFixed(1)} after, ${os.cpus().length} cores`,
  );
  const figures: Figure[] = outcomes.flatMap((x) => {
    const id = (what: string): string => `eta.${x.scenario.id}.${what}@${o.nodes}`;
    const ratio = x.withObserved / x.actualSeconds;
    return [
      {
        id: id('actual'),
        what: `${x.scenario.what}: push → over`,
        value: round(x.actualSeconds),
        unit: 's',
        target: null,
        size,
        command,
      },
      {
        id: id('ratio'),
        what: `… ETA ÷ actual (${x.pace})`,
        value: round(ratio),
        unit: '×',
        target: null,
        size,
        command,
      },
      // The target holds where the plan had observations; the defaults are a real cloud's times.
      ...(x.observed
        ? [
            {
              id: id('ratioError'),
              what: '… |ETA ÷ actual − 1| (target 0.8–1.2)',
              value: round(Math.abs(ratio - 1)),
              unit: '×',
              target: 0.2,
              size,
              command,
            },
          ]
        : []),
      {
        id: id('ratioWithout'),
        what: '… ETA ÷ actual without observations (the defaults)',
        value: round(x.withoutObserved / x.actualSeconds),
        unit: '×',
        target: null,
        size,
        command,
      },
    ];
  });
  recordFigures(figures);
  return figures;
}

const round = (v: number): number => Number(v.toFixed(4));

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
