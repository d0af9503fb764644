// Proof that the test control plane behaves like a cluster in the ways drydock relies on:
// nodes, scheduling, Jobs, PodDisruptionBudgets through the Eviction API, and pod garbage
// collection after a node is deleted.
import { strict as assert } from 'node:assert';

import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';

import { eventually, fakeNode, statusOf, useControlPlane, waitNodeReady } from '../support/control-plane.js';

const NS = 'cp-proof';

function deployment(name: string, replicas: number, nodeSelector?: Record<string, string>): V1Deployment {
  return {
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'app', image: 'registry.invalid/app:1' }],
          ...(nodeSelector ? { nodeSelector } : {}),
        },
      },
    },
  };
}

describe('test control plane (etcd, kube-apiserver, controllers, scheduler, KWOK)', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let batch: BatchV1Api;
  let policy: PolicyV1Api;

  const runningPods = async (app: string): Promise<V1Pod[]> => {
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` });
    return pods.items.filter(
      (p) =>
        p.status?.phase === 'Running' &&
        !p.metadata?.deletionTimestamp &&
        p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
  };

  before(async () => {
    const kc = cp().adminKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
    batch = kc.makeApiClient(BatchV1Api);
    policy = kc.makeApiClient(PolicyV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
  });

  it('reports the built Kubernetes version', async () => {
    const kc = cp().adminKubeConfig();
    const { VersionApi } = await import('@kubernetes/client-node');
    const v = await kc.makeApiClient(VersionApi).getCode();
    assert.equal(v.gitVersion, 'v1.36.3');
  });

  it('makes KWOK nodes Ready', async () => {
    const kc = cp().adminKubeConfig();
    const t0 = Date.now();
    for (const name of ['kwok-a', 'kwok-b']) await core.createNode({ body: fakeNode(name) });
    await Promise.all(['kwok-a', 'kwok-b'].map((n) => waitNodeReady(kc, n)));
    process.stderr.write(`      (nodes Ready after ${Date.now() - t0} ms)\n`);
  });

  it('schedules a Deployment onto the KWOK nodes and its pods run', async () => {
    const t0 = Date.now();
    await apps.createNamespacedDeployment({ namespace: NS, body: deployment('web', 3) });
    const pods = await eventually('3 Running pods of web', async () => {
      const p = await runningPods('web');
      return p.length === 3 ? p : undefined;
    });
    for (const p of pods)
      assert.ok(['kwok-a', 'kwok-b'].includes(p.spec?.nodeName ?? ''), `pod on ${p.spec?.nodeName}`);
    await eventually(
      'deployment web available',
      async () => (await apps.readNamespacedDeployment({ name: 'web', namespace: NS })).status?.availableReplicas === 3,
    );
    process.stderr.write(`      (3 pods Running and Ready after ${Date.now() - t0} ms)\n`);
  });

  it('a Running pod marked not Ready (as the node lifecycle controller does) is Ready again, as a kubelet makes it', async () => {
    const [pod] = await runningPods('web');
    assert.ok(pod?.metadata?.name);
    const name = pod.metadata.name;
    // What MarkPodsNotReady writes: the Ready condition False, the containers still ready.
    await core.patchNamespacedPodStatus(
      {
        name,
        namespace: NS,
        body: { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date() }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const ready = async (): Promise<string | undefined> =>
      (await core.readNamespacedPod({ name, namespace: NS })).status?.conditions?.find((c) => c.type === 'Ready')
        ?.status;
    assert.equal(await ready(), 'False');
    const t0 = Date.now();
    await eventually(`${name} Ready again`, async () => (await ready()) === 'True', { timeoutMs: 30_000 });
    process.stderr.write(`      (Ready again after ${Date.now() - t0} ms)\n`);
  });

  it('runs a Job to completion', async () => {
    await batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: { name: 'once' },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: 'Never',
              nodeSelector: { 'kubernetes.io/hostname': 'kwok-b' },
              containers: [{ name: 'job', image: 'registry.invalid/job:1', command: ['true'] }],
            },
          },
        },
      },
    });
    const job = await eventually('job once Complete', async () => {
      const j = await batch.readNamespacedJob({ name: 'once', namespace: NS });
      return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    });
    assert.equal(job.status?.succeeded, 1);
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: 'job-name=once' });
    assert.equal(pods.items[0]?.spec?.nodeName, 'kwok-b');
    assert.equal(pods.items[0]?.status?.phase, 'Succeeded');
  });

  it('refuses an eviction that would break a PodDisruptionBudget (429) and accepts one that would not', async () => {
    await apps.createNamespacedDeployment({ namespace: NS, body: deployment('strict', 2) });
    await apps.createNamespacedDeployment({ namespace: NS, body: deployment('lenient', 2) });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: { metadata: { name: 'strict' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'strict' } } } },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: {
        metadata: { name: 'lenient' },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'lenient' } } },
      },
    });
    // the disruption controller must have counted the healthy pods first
    for (const [name, allowed] of [
      ['strict', 0],
      ['lenient', 1],
    ] as const) {
      await eventually(`PDB ${name} allows ${allowed} disruption(s) with 2 healthy pods`, async () => {
        const pdb = await policy.readNamespacedPodDisruptionBudget({ name, namespace: NS });
        const s = pdb.status;
        return (
          s !== undefined &&
          s.observedGeneration === pdb.metadata?.generation &&
          s.currentHealthy === 2 &&
          s.disruptionsAllowed === allowed
        );
      });
    }
    const evict = async (app: string) => {
      const pod = (await runningPods(app))[0];
      assert.ok(pod?.metadata?.name, `a running pod of ${app}`);
      return core.createNamespacedPodEviction({
        name: pod.metadata.name,
        namespace: NS,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.metadata.name, namespace: NS } },
      });
    };
    await assert.rejects(evict('strict'), (err: unknown) => {
      assert.equal(statusOf(err), 429, `expected 429 Too Many Requests, got ${String(err)}`);
      return true;
    });
    await evict('lenient'); // resolves: 201 Created
    await eventually('the evicted lenient pod is replaced', async () => (await runningPods('lenient')).length === 2);
  });

  it('garbage-collects the pods of a deleted node (podgc)', async function () {
    // PodGC treats pods on a missing node as orphans after a 40 s quarantine, checking every 20 s.
    this.timeout(150_000);
    const kc = cp().adminKubeConfig();
    await core.createNode({ body: fakeNode('kwok-gone') });
    await waitNodeReady(kc, 'kwok-gone');
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'orphan', labels: { app: 'orphan' } },
        spec: { nodeName: 'kwok-gone', containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
      },
    });
    await eventually('pod orphan Running', async () => (await runningPods('orphan')).length === 1);
    const t0 = Date.now();
    await core.deleteNode({ name: 'kwok-gone' });
    await eventually(
      'pod orphan deleted',
      async () => {
        try {
          await core.readNamespacedPod({ name: 'orphan', namespace: NS });
          return false;
        } catch (err) {
          if (statusOf(err) === 404) return true;
          throw err;
        }
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    process.stderr.write(`      (pod collected ${Date.now() - t0} ms after its node was deleted)\n`);
  });
});
