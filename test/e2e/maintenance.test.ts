/**
 * End to end, NodeMaintenance driven only by commits to a real Git server: a file merged
 * cordons the node and evicts its pods through the Eviction API (a pod its PDB holds is named
 * with that PDB), the counters reach the status branch and the node; the file deleted returns
 * the node as it was (the record of the ending lives on the status branch). A maintenance
 * merged with an image change keeps the rollout off its node until it ends, and the cluster
 * budget holds with both running.
 */
import assert from 'node:assert/strict';
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { useControlPlane, eventually } from '../support/control-plane.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { ApiLog, cordonedNodes } from './api-watch.js';
import {
  converged,
  drydockArgs,
  E2E_NAMESPACE,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  nodes,
  notifyWebhook,
  startDrydockChild,
  startWorld,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

interface MaintenanceDoc {
  phase: string;
  nodeName: string;
  /** medik8s' shapes: the pod count in lower case, pending pods by name. */
  totalpods: number;
  evictionPods: number;
  pendingPods: string[];
  errorOnLeaseCount: number;
  /** drydock's detail: namespace/name and the PDB that holds each pending pod. */
  pendingPodDetails: { pod: string; pdb?: string }[];
  drainProgress: number;
  lastUpdate?: string;
  endedAt?: string;
  reason: string;
}

const maintenanceFile = (name: string, nodeName: string, reason: string): string =>
  stringify({
    apiVersion: 'drydock.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name },
    spec: { nodeName, reason },
  });

describe('e2e: NodeMaintenance driven by Git', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  let cacheDir = '';
  const dirs: string[] = [];
  // Every change to Nodes the API server announced, all along: the budget is judged from it.
  const nodeLog = new ApiLog();

  async function push(files: Record<string, string | null>, message: string): Promise<void> {
    await repo.push(files, message);
    assert.ok(drydock);
    assert.equal(await notifyWebhook(await drydock.url), 202);
  }

  async function statusDoc(name: string): Promise<MaintenanceDoc | undefined> {
    const text = await repo.statusFile(`status/NodeMaintenance/${name}.yaml`);
    return text === undefined ? undefined : (parse(text) as MaintenanceDoc);
  }

  /** Every pod on the node, in any namespace (the autoscaler's may land there too), not terminating. */
  async function podsOn(node: string): Promise<{ name: string; app: string }[]> {
    const list = await cp()
      .adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
    return list.items
      .filter((p) => p.metadata?.deletionTimestamp === undefined)
      .map((p) => ({ name: p.metadata?.name ?? '', app: p.metadata?.labels?.['app'] ?? '' }));
  }

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, cacheDir } = await startWorld(cp(), dirs));
    drydock = startDrydockChild(drydockArgs(repo, cp().kubeconfigPath, sim.url, cacheDir));
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
    const kc = cp().adminKubeConfig();
    await nodeLog.start(kc, { nodes: '/api/v1/nodes' });
  });

  after(async function () {
    this.timeout(30_000);
    nodeLog.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('merged: pods evicted, counters in status, a PDB-held pod named; deleted: node uncordoned, status Ended', async () => {
    const kc = cp().adminKubeConfig();
    const policy = kc.makeApiClient(PolicyV1Api);
    const api = (
      await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: E2E_NAMESPACE, labelSelector: 'app=api' })
    ).items;
    const node = api[0]?.spec?.nodeName;
    assert.ok(node, 'an api pod is scheduled');
    const before = await podsOn(node);
    const apiPod = before.find((p) => p.app === 'api')?.name ?? '';
    // The api PDB allows no disruption: its pod must stay, named with the PDB.
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'api',
      namespace: E2E_NAMESPACE,
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 2 }],
    });
    await eventually(
      'PDB api allows 0',
      async () =>
        (await policy.readNamespacedPodDisruptionBudget({ name: 'api', namespace: E2E_NAMESPACE })).status
          ?.disruptionsAllowed === 0,
    );

    const drydockKeys = async (): Promise<string[]> =>
      Object.keys((await nodes(kc)).find((x) => x.name === node)?.annotations ?? {})
        .filter((k) => k.startsWith('drydock.dev/'))
        .sort();
    const keysBefore = await drydockKeys();
    await push(
      { 'clusters/maintenance-disk.yaml': maintenanceFile('disk', node, 'replace data disk (OPS-1)') },
      `maintenance: ${node}`,
    );
    await eventually(
      'the node cordoned under the maintenance, everything but the api pod gone',
      async () => {
        const n = (await nodes(kc)).find((x) => x.name === node);
        const left = await podsOn(node);
        return (
          n?.unschedulable === true &&
          n.annotations['drydock.dev/operation']?.startsWith('NodeMaintenance/disk@') === true &&
          left.length === 1 &&
          left[0]?.name === apiPod
        );
      },
      { timeoutMs: 60_000 },
    );
    await eventually(
      'status Running, naming the api pod and its PDB',
      async () => {
        const s = await statusDoc('disk');
        return (
          s?.phase === 'Running' &&
          s.pendingPods.includes(apiPod) &&
          s.pendingPodDetails.some((p) => p.pod === `${E2E_NAMESPACE}/${apiPod}` && p.pdb === `${E2E_NAMESPACE}/api`)
        );
      },
      { timeoutMs: 60_000 },
    );
    const running = await statusDoc('disk');
    assert.equal(running?.nodeName, node);
    assert.equal(running?.reason, 'replace data disk (OPS-1)');
    assert.equal(running?.totalpods, before.length, 'every pod on the node when it was taken');
    assert.equal(running?.evictionPods, before.length);
    assert.ok(running?.lastUpdate, 'lastUpdate');
    assert.match((await repo.statusFile('README.md')) ?? '', /\| \[NodeMaintenance\/disk\]\([^)]*\) \| Running \|/);

    await policy.patchNamespacedPodDisruptionBudget({
      name: 'api',
      namespace: E2E_NAMESPACE,
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 1 }],
    });
    await eventually(
      'drained: Succeeded, progress 100, on the status branch and on the node',
      async () => {
        const s = await statusDoc('disk');
        const n = (await nodes(kc)).find((x) => x.name === node);
        const onNode = JSON.parse(n?.annotations['drydock.dev/maintenance'] ?? '{}') as { phase?: string };
        return (
          s?.phase === 'Succeeded' &&
          s.drainProgress === 100 &&
          s.pendingPods.length === 0 &&
          onNode.phase === 'Succeeded' &&
          (await podsOn(node)).length === 0
        );
      },
      { timeoutMs: 60_000 },
    );

    await push({ 'clusters/maintenance-disk.yaml': null }, `maintenance: ${node} done`);
    await eventually(
      'uncordoned, unlocked, status Ended with the time',
      async () => {
        const n = (await nodes(kc)).find((x) => x.name === node);
        const s = await statusDoc('disk');
        return (
          n?.unschedulable === false &&
          n.annotations['drydock.dev/operation'] === undefined &&
          n.annotations['drydock.dev/cordoned'] === undefined &&
          s?.phase === 'Ended' &&
          s.endedAt !== undefined
        );
      },
      { timeoutMs: 60_000 },
    );
    const endedAt = (await statusDoc('disk'))?.endedAt;
    // The status branch holds the ending: its record leaves the node, which is left as the
    // maintenance found it, and the branch goes on saying Ended with the same time.
    await eventually(
      'the maintenance record gone from the node, the status still Ended',
      async () => {
        const n = (await nodes(kc)).find((x) => x.name === node);
        const s = await statusDoc('disk');
        return (
          n !== undefined &&
          n.annotations['drydock.dev/maintenance'] === undefined &&
          s?.phase === 'Ended' &&
          s.endedAt === endedAt
        );
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(await drydockKeys(), keysBefore, "the node's drydock.dev annotations as before the maintenance");
  });

  it('a maintenance merged with an image change: the rollout leaves its node alone until the file is deleted', async () => {
    const kc = cp().adminKubeConfig();
    const first = (await nodes(kc))
      .filter((n) => n.group === 'workers')
      .map((n) => n.name)
      .sort()[0];
    assert.ok(first, 'a worker node');
    const worker = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V1 })['images/worker.yaml'] ?? '';
    // The first worker is the one the rollout would take first: the maintenance gets it.
    await push(
      { 'images/worker.yaml': worker, 'clusters/maintenance-ahead.yaml': maintenanceFile('ahead', first, 'firmware') },
      'worker v2, and a maintenance',
    );
    await eventually(
      'every other worker replaced; the maintained one cordoned on v1, never taken by the rollout',
      async () => {
        const ws = (await nodes(kc)).filter((n) => n.group === 'workers');
        const held = ws.find((n) => n.name === first);
        assert.equal(
          held?.annotations['drydock.dev/operation']?.startsWith('NodeImage/'),
          false,
          `${first} taken by the rollout`,
        );
        const others = ws.filter((n) => n.name !== first);
        return (
          held?.unschedulable === true &&
          others.length === 5 &&
          others.every((n) => n.image === IMAGE_V2 && n.ready && !n.unschedulable)
        );
      },
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    // The rollout's status says why that node waits: the maintenance's lock (or, before the
    // maintenance took it, the maintenance itself).
    const why = new RegExp(
      `${first} is (held by NodeMaintenance/ahead@\\S+ \\(phase \\w+\\)|in NodeMaintenance ahead); it is replaced once`,
    );
    await eventually(
      'the rollout names the maintenance',
      async () => why.test((await repo.statusFile('status/NodeImage/worker.yaml')) ?? ''),
      { timeoutMs: 30_000 },
    );
    await eventually('the maintenance Succeeded', async () => (await statusDoc('ahead'))?.phase === 'Succeeded', {
      timeoutMs: 30_000,
    });

    await push({ 'clusters/maintenance-ahead.yaml': null }, 'maintenance ahead done');
    await eventually('every worker on v2 once the maintenance ended', () => converged(kc, IMAGE_V2, 6, 'workers'), {
      timeoutMs: 150_000,
      intervalMs: 1_000,
    });
    // Out of service as the nodes show it: cordoned (the repo's budget is 2).
    const maxUnavailable = nodeLog.maxOver('nodes', cordonedNodes);
    assert.ok(maxUnavailable <= 2, `at most 2 nodes unavailable at once (budget), saw ${maxUnavailable}`);
    assert.ok(
      maxUnavailable >= 2,
      `the maintenance and the rollout were unavailable together at some point (saw ${maxUnavailable})`,
    );
  });
});
