/**
 * A replace rollout wave on the scale world (DRYDOCK_BENCH_SCALE_WAVE=N with scale.ts): once the
 * idle and churn figures are taken and the idle world's drydock is stopped, the rollout
 * benchmark's world (rollout-world.ts: the sim cloud's groups, their pods under PDBs, a fleet
 * repository, `drydock run` as a child through the counting proxy) is added to the same control
 * plane with a fleet of N nodes, and one push moves the whole fleet to a new image N at a time:
 * one wave. Measured: push → every node replaced, API writes per node, and each process's CPU
 * over the wave (where the two cores went while thousands of other nodes and their pods stand by).
 */
import type { ControlPlane } from '../../src/sandbox/control-plane/index.js';
import { eventually } from '../support/control-plane.js';
import { componentUsage, describeUsage } from './components.js';
import { recordFigures, type Figure } from './results.js';
import { IMAGE, imageDoc, replaced, startRolloutWorld, type RolloutWorldOptions } from './rollout-world.js';
import { isWrite, tally } from './rollout-writes.js';

/** Nodes in the wave, from DRYDOCK_BENCH_SCALE_WAVE; 0 (no wave) when unset. */
export function waveSize(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.DRYDOCK_BENCH_SCALE_WAVE;
  if (text === undefined || text === '') return 0;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`DRYDOCK_BENCH_SCALE_WAVE=${text}: expected a positive integer`);
  return n;
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
