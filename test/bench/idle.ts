/**
 * Benchmark: API requests per idle reconcile with 1,000 KWOK nodes. The service runs
 * in-process against a real control plane, reaching it only through a counting proxy; the
 * target (DESIGN.md) is zero. Alone: `npx tsc -p . && node dist/test/bench/idle.js`.
 */
import { startControlPlane } from '../../src/sandbox/control-plane/index.js';
import { startIdleWorld } from '../service/idle-world.js';

const NODES = 1_000;
const ROUNDS = 200;
const QUIET_MS = 15_000;

export async function run(): Promise<{
  requestsPerReconcile: number;
  msPerReconcile: number;
  quietRounds: number;
  quietRequests: number;
}> {
  const cp = await startControlPlane({ log: () => undefined });
  try {
    const t0 = Date.now();
    const world = await startIdleWorld(cp.adminKubeConfig(), cp.kubeconfigPath, NODES);
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const s = world.service.state();
        if (
          s.synced &&
          s.leading &&
          s.lastOutcome &&
          s.lastOutcome.plan.actions.length === 0 &&
          s.lastOutcome.observed.nodes.length >= NODES
        )
          break;
        if (Date.now() > deadline) throw new Error('the service did not settle within 120 s');
        await new Promise((r) => setTimeout(r, 200));
      }
      const setupMs = Date.now() - t0;
      // Warm-up, then the measured rounds (forced, back to back).
      await world.idleRounds(20);
      const forced = await world.idleRounds(ROUNDS);
      // Then leave it alone: rounds now come only from watch events (KWOK heartbeats).
      const r0 = world.service.state().rounds;
      const q0 = await world.clusterRequests();
      await new Promise((r) => setTimeout(r, QUIET_MS));
      const quietRounds = world.service.state().rounds - r0;
      const quietRequests = (await world.clusterRequests()) - q0;
      const leaseRequests = await world.leaseRequests();
      const result = {
        requestsPerReconcile: forced.requests / forced.rounds,
        msPerReconcile: forced.ms / forced.rounds,
        quietRounds,
        quietRequests,
      };
      console.log(`| what | figure | target | ratio |`);
      console.log(`|---|---|---|---|`);
      console.log(
        `| API requests per idle reconcile, ${NODES} KWOK nodes, ${forced.rounds} forced rounds | ${forced.requests} / ${forced.rounds} = ${result.requestsPerReconcile} | 0 | ${result.requestsPerReconcile === 0 ? 'met' : 'MISSED'} |`,
      );
      console.log(
        `| API requests over ${QUIET_MS / 1000} s left alone (${quietRounds} watch-woken rounds) | ${quietRequests} | 0 | ${quietRequests === 0 ? 'met' : 'MISSED'} |`,
      );
      console.log(
        `| time per idle reconcile (observe + plan, ${NODES} nodes) | ${result.msPerReconcile.toFixed(2)} ms | – | – |`,
      );
      console.log(`(setup ${setupMs} ms; lease requests over the whole run, counted apart: ${leaseRequests})`);
      return result;
    } finally {
      await world.close();
    }
  } finally {
    await cp.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
