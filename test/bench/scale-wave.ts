/**
 * A replace rollout wave on the scale world (DRYDOCK_BENCH_SCALE_WAVE=N with scale.ts): once the
 * idle and churn figures are taken and the idle world's drydock is stopped, the rollout
 * benchmark's world (rollout-world.ts: the sim cloud's groups, their pods under PDBs, a fleet
 * repository, `drydock run` as a child through the counting proxy) is added to the same control
 * plane with a fleet of N nodes, and one push moves the whole fleet to a new image N at a time:
 * one wave. Measured: push → every node replaced, API writes per node, and each process's CPU
 * over the wave (where the two cores went while thousands of other nodes and their pods stand by).
 */
import { loadavg } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../../src/sandbox/control-plane/index.js';
import { eventually } from '../support/control-plane.js';
import { componentUsage, describeUsage, type Usage } from './components.js';
import { recordFigures, type Figure } from './results.js';
import { IMAGE, imageDoc, replaced, startRolloutWorld, type RolloutWorldOptions } from './rollout-world.js';
import { isWrite, tally } from './rollout-writes.js';
import { deploymentPods } from './scale-world.js';

/** Nodes in the wave, from DRYDOCK_BENCH_SCALE_WAVE; 0 (no wave) when unset. */
export function waveSize(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.DRYDOCK_BENCH_SCALE_WAVE;
  if (text === undefined || text === '') return 0;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`DRYDOCK_BENCH_SCALE_WAVE=${text}: expected a positive integer`);
  return n;
}

/**
 * How long the wave waits for KWOK to have played the world's pods (DRYDOCK_BENCH_SCALE_WAVE_WAIT,
 * seconds; default 40 minutes).
 */
export function playWait(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.DRYDOCK_BENCH_SCALE_WAVE_WAIT;
  if (text === undefined || text === '') return 2_400_000;
  const s = Number(text);
  if (!(s > 0)) throw new Error(`DRYDOCK_BENCH_SCALE_WAVE_WAIT=${text}: expected seconds above 0`);
  return s * 1000;
}

/**
 * The share of the world's pods that must be Ready before the wave's push. All but a few: KWOK
 * leaves a few Running pods unready for minutes under load (scale-world.ts's playedShare).
 */
const PLAYED = 0.999;

/**
 * Waits until KWOK has played (nearly) every pod of the scale world, up to `timeoutMs`, printing
 * every minute how many are Ready, the rate, and each process's CPU over that minute: KWOK plays
 * pods one queue at a time (about 20 a second on this machine under load), and the wave's own
 * pods wait behind whatever is left, so a wave started earlier measures KWOK's queue, not
 * drydock. Returns whether the pods were played; when not, the last lines say which process
 * was busy and which starved.
 */
export async function waitPlayed(kc: KubeConfig, pods: number, timeoutMs: number): Promise<boolean> {
  const want = Math.floor(pods * PLAYED);
  const t0 = Date.now();
  let last = { at: t0, ready: await deploymentPods(kc, 'readyReplicas'), usage: componentUsage() };
  let said = t0;
  for (;;) {
    const ready = await deploymentPods(kc, 'readyReplicas');
    if (ready >= want) {
      console.log(`(wave: ${ready} of ${pods} world pods Ready after ${Math.round((Date.now() - t0) / 1000)} s)`);
      return true;
    }
    if (Date.now() - said >= 60_000 || Date.now() - t0 > timeoutMs) {
      said = Date.now();
      const usage: Record<string, Usage> = componentUsage();
      const rate = (ready - last.ready) / ((said - last.at) / 1000);
      console.log(
        `(wave waits for KWOK: ${ready} of ${pods} world pods Ready after ${Math.round((said - t0) / 1000)} s, ` +
          `${rate.toFixed(1)} a second; CPU over the last ${Math.round((said - last.at) / 1000)} s: ${describeUsage(usage, last.usage)}; ` +
          `load ${loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')})`,
      );
      last = { at: said, ready, usage };
      if (said - t0 > timeoutMs) return false;
    }
    await new Promise((r) => setTimeout(r, 5_000));
  }
}

/** How long a wave may take before the benchmark gives up on it. */
const WAVE_TIMEOUT_MS = 1_800_000;

/**
 * Runs the wave of `nodes` on `cp` (whose world has `worldNodes` other nodes) and records its
 * figures under `scale.wave*@<worldNodes>/<nodes>`.
 */
export async function waveOn(cp: ControlPlane, worldNodes: number, nodes: number, command: string): Promise<Figure[]> {
  const o: RolloutWorldOptions = {
    nodes,
    concurrency: nodes,
    bootDelaySeconds: 5,
    rebootSeconds: 5,
    jobRunSeconds: 2,
    // Ten nodes' pods to a PDB: one PDB for the whole wave makes its evictions wait on each
    // other's writes to it (rollout-world.ts).
    workloads: Math.ceil(nodes / 10),
  };
  const tWorld = Date.now();
  const w = await startRolloutWorld(cp, o);
  try {
    console.log(`(wave world: ${nodes} more nodes and their pods in ${Math.round((Date.now() - tWorld) / 1000)} s)`);
    const usage = () => componentUsage({ drydock: w.drydock.proc.pid });
    const before = usage();
    const i0 = w.proxy.requests.length;
    const t0 = Date.now();
    await w.repo.push({ 'specs/fleet-image.yaml': imageDoc('fleet', IMAGE(2), o) }, 'fleet to v2');
    await eventually('the wave', async () => (await replaced(w, 'fleet', nodes, IMAGE(2))) || undefined, {
      timeoutMs: WAVE_TIMEOUT_MS,
      intervalMs: 2_000,
    });
    const ms = Date.now() - t0;
    const writes = w.proxy.requests.slice(i0).filter(isWrite);
    console.log(`(wave: ${nodes} nodes in ${(ms / 1000).toFixed(1)} s, CPU: ${describeUsage(usage(), before)})`);
    for (const [key, n] of tally(writes)) console.log(`  ${String(n).padStart(6)}  ${key}`);
    const size = `${nodes} of ${nodes + worldNodes + 1} nodes in one wave (replace, boot ${o.bootDelaySeconds} s), beside the ${worldNodes}-node scale world`;
    const figure = (id: string, what: string, value: number, unit: string): Figure => ({
      id: `scale.${id}@${worldNodes}/${nodes}`,
      what,
      value: Number(value.toFixed(4)),
      unit,
      target: null,
      size,
      command,
    });
    const figures = [
      figure('waveReplace', `replace wave of ${nodes} nodes: push → every node replaced`, ms / 1000, 's'),
      figure(
        'waveWritesPerNode',
        'API writes by drydock per node replaced in the wave',
        writes.length / nodes,
        'writes',
      ),
    ];
    recordFigures(figures);
    return figures;
  } finally {
    await w.close();
  }
}
