/**
 * The scale benchmark's workloads, created from a process of their own: creating 20,000 pods'
 * Deployments and PDBs and polling their status left the benchmark's process holding memory it
 * had freed (the allocator's pages, V8's grown heap), which drydock, started in that process
 * afterwards, was charged with or credited for at random (one run measured 12 MiB less resident
 * memory with the fleet than without it). Waits for every node to be Ready first, and at the end for
 * KWOK to have made (nearly) every pod Ready (playedShare). Prints progress, then one JSON line with the phases' ms.
 * `node dist/test/bench/scale-setup.js KUBECONFIG PODS` (scale.ts runs it).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { idleNodeName } from '../service/idle-world.js';
import { createWorkloads, playedShare, REPLICAS, waitNodesReady, waitRunning } from './scale-world.js';

async function main(): Promise<void> {
  const [kubeconfigPath, podsArg] = process.argv.slice(2);
  const pods = Number(podsArg);
  if (!kubeconfigPath || !Number.isInteger(pods) || pods <= 0)
    throw new Error('usage: node dist/test/bench/scale-setup.js KUBECONFIG PODS');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const nodes = Math.ceil(pods / REPLICAS);
  const nodesReady = await waitNodesReady(kc, nodes, 1_800_000, (n) => console.log(`(${n} of ${nodes} nodes Ready)`));
  const t = Date.now();
  await createWorkloads(kc, pods, idleNodeName, (n) => console.log(`(${n} Deployments)`));
  const workloads = Date.now() - t;
  const running = await waitRunning(kc, pods, 1_800_000, (n) => console.log(`(${n} of ${pods} pods)`));
  const ready = await waitRunning(
    kc,
    Math.floor(pods * playedShare()),
    3_600_000,
    (n) => console.log(`(${n} of ${pods} pods Ready)`),
    'readyReplicas',
  );
  console.log(JSON.stringify({ nodesReady, workloads, pods: running, podsReady: ready }));
}

// `npm run bench` imports every module here: only a direct run sets up.
if (import.meta.url === `file://${process.argv[1]}`) await main();
