/**
 * End to end, the replace health gate's evicted-workloads half: a Deployment whose pods can run
 * only on a node that carries a label the replacement does not inherit (a *.drydock.dev label
 * is never copied) loses its pods to the first node's drain, and they stay Pending until the
 * test labels a node for them. Replayed from API-server watches (Nodes and Deployments), no
 * other old worker is locked or cordoned while that Deployment is short of its ready replicas;
 * once it is back the rollout completes.
 */
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Deployment, type V1Node } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { ApiLog, replay } from './api-watch.js';
import {
  E2E_NAMESPACE,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  locked,
  nodes,
  notifyWebhook,
  startWorldWithDrydock,
  stopWorld,
  viewNode,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

/** Where the held Deployment's pods may run; not copied to a replacement (a drydock.dev domain). */
const HELD_LABEL = 'e2e.drydock.dev/held';
const HELD = 'held';
/** How long the test keeps the evicted pods Pending once the first node waits for them. */
const HOLD_MS = 8000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Lets the held pods run on `node`. */
async function labelNode(kc: KubeConfig, node: string): Promise<void> {
  const path = `/metadata/labels/${HELD_LABEL.replace('/', '~1')}`;
  await kc.makeApiClient(CoreV1Api).patchNode({ name: node, body: [{ op: 'add', path, value: 'yes' }] });
}

async function heldReady(kc: KubeConfig): Promise<{ ready: number; desired: number }> {
  const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: HELD, namespace: E2E_NAMESPACE });
  return { ready: d.status?.readyReplicas ?? 0, desired: d.spec?.replicas ?? 1 };
}

describe('e2e: replace waits for the workloads evicted from a node', function () {
  this.timeout(240_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  /** The first worker the rollout takes (natural name order), where the held pods start. */
  let first = '';

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, drydock } = await startWorldWithDrydock(cp(), dirs));
    const kc = cp().adminKubeConfig();
    first = (await nodes(kc)).filter((n) => n.group === 'workers').map((n) => n.name)[0] ?? '';
    await labelNode(kc, first);
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: E2E_NAMESPACE,
      body: {
        metadata: { name: HELD, labels: { app: HELD } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: HELD } },
          template: {
            metadata: { labels: { app: HELD } },
            spec: {
              nodeSelector: { [HELD_LABEL]: 'yes' },
              containers: [{ name: HELD, image: 'registry.example/held:1' }],
            },
          },
        },
      },
    });
    await eventually('the held Deployment ready on the first worker', async () => {
      const r = await heldReady(kc);
      return r.ready === r.desired;
    });
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  /** Commits the worker image with `rollout` and tells drydock at once. */
  const rollWorkers = async (image: string, rollout: Record<string, unknown>, message: string): Promise<void> => {
    const f = fleetFiles({ worker: image, controlPlane: IMAGE_V1, workerRollout: rollout });
    await repo.push({ 'images/worker.yaml': f['images/worker.yaml'] ?? '' }, message);
    assert.ok(drydock);
    assert.equal(await notifyWebhook(await drydock.url), 202);
  };

  it('no other node is locked or cordoned until the evicted Deployment is back; then the rollout completes', async () => {
    const kc = cp().adminKubeConfig();
    const log = new ApiLog();
    await log.start(kc, {
      node: '/api/v1/nodes',
      deployment: `/apis/apps/v1/namespaces/${E2E_NAMESPACE}/deployments`,
    });
    await rollWorkers(IMAGE_V2, { concurrency: 1 }, 'images: workers to v2, one at a time');

    // The first node drained, its held pods Pending: it waits in Verifying, named in status.
    await eventually(
      `${first} waits in Verifying for the held Deployment`,
      async () => {
        const n = (await nodes(kc)).find((x) => x.name === first);
        return n?.annotations['drydock.dev/phase'] === 'Verifying' && (await heldReady(kc)).ready === 0;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    await eventually(
      'status names the evicted Deployment',
      async () => {
        const s = parse((await repo.statusFile('status/NodeImage/worker.yaml')) ?? '{}') as { waitingFor?: string };
        return s.waitingFor?.includes(`health gate: Deployment ${E2E_NAMESPACE}/${HELD} has 0/2 ready replicas`);
      },
      { timeoutMs: 20_000, intervalMs: 300 },
    );
    await sleep(HOLD_MS);
    const during = (await nodes(kc)).filter((n) => n.group === 'workers' && n.name !== first);
    assert.deepEqual(
      during.filter((n) => locked(n) || n.unschedulable).map((n) => n.name),
      [],
      'no other worker taken while the held Deployment is short',
    );
    assert.equal((await nodes(kc)).find((n) => n.name === first)?.annotations['drydock.dev/phase'], 'Verifying');

    // Give the held pods a place: the first node's replacement (the one worker on v2 so far).
    const replacement = (await nodes(kc)).find((n) => n.group === 'workers' && n.image === IMAGE_V2);
    assert.ok(replacement, "the first node's replacement has joined");
    await labelNode(kc, replacement.name);
    await eventually(
      'every worker on v2, unlocked and schedulable',
      async () => {
        const ws = (await nodes(kc)).filter((n) => n.group === 'workers');
        return ws.length === 6 && ws.every((n) => n.image === IMAGE_V2 && n.ready && !locked(n) && !n.unschedulable);
      },
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    log.stop();

    // Replay: whenever an old worker other than the first is locked or cordoned, the held Deployment is whole.
    const violations: string[] = [];
    let shortSince: number | undefined;
    let shortFor = 0;
    let others = 0;
    replay(log.events, (e, state) => {
      const held = state.get('deployment')?.get(`${E2E_NAMESPACE}/${HELD}`) as V1Deployment | undefined;
      const short = held !== undefined && (held.status?.readyReplicas ?? 0) < (held.spec?.replicas ?? 1);
      if (short && shortSince === undefined) shortSince = e.at;
      if (!short && shortSince !== undefined) {
        shortFor = Math.max(shortFor, e.at - shortSince);
        shortSince = undefined;
      }
      if (e.source !== 'node') return;
      const n = viewNode(e.obj as V1Node);
      if (n.group !== 'workers' || n.name === first || n.image !== IMAGE_V1) return;
      if (!locked(n) && !n.unschedulable) return;
      others++;
      if (short)
        violations.push(
          `${n.name} ${n.unschedulable ? 'cordoned' : 'locked'} while ${HELD} had ${held.status?.readyReplicas ?? 0}/${held.spec?.replicas ?? 1} ready`,
        );
    });
    assert.deepEqual(violations, []);
    assert.ok(others > 0, 'the other old workers were seen taken');
    assert.ok(shortFor >= HOLD_MS, `the held Deployment was short for ${shortFor} ms, at least the hold`);
  });
});
