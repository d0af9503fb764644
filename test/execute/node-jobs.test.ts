/** Creating, reading and deleting what drydock runs on nodes, against a real API server (KWOK completes Job pods). */
import assert from 'node:assert/strict';
import { BatchV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { httpStatus } from '../../src/execute/classify.js';
import { useControlPlane, eventually, fakeNode } from '../support/control-plane.js';
import {
  classifyError,
  createJob,
  createRebootPod,
  deleteFinishedJob,
  deleteRebootPod,
  ForeignObjectError,
  gateJob,
  jobSelector,
  kubeApis,
  nodeJob,
  readJobOutcome,
  rebootPod,
  type JobDeps,
  type OperationRef,
} from '../../src/execute/index.js';

const NS = 'default';
const op: OperationRef = { kind: 'NodeOp', name: 'firmware', revision: 'abc123' };
const spec = { image: 'busybox:1.36', command: ['true'], imagePullSecrets: [], backoffLimit: 0, privileged: true };

describe('node jobs against a real API server', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  let kc: KubeConfig;
  let d: JobDeps;
  let batch: BatchV1Api;
  let core: CoreV1Api;

  before(async () => {
    kc = cp().adminKubeConfig();
    d = { kube: kubeApis(kc), fieldManager: 'drydock' };
    batch = kc.makeApiClient(BatchV1Api);
    core = kc.makeApiClient(CoreV1Api);
    await core.createNode({ body: fakeNode('nj-1', { taint: true }) });
  });

  it('creates the Job once: a repeat finds it, and only one Job exists', async () => {
    const job = nodeJob({
      operation: op,
      node: { name: 'nj-1', taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
      namespace: NS,
      job: spec,
    });
    assert.equal((await createJob(job, d)).kind, 'done');
    assert.deepEqual(await createJob(job, d), { kind: 'skipped', reason: `Job ${job.metadata?.name} already exists` });
    const list = await batch.listNamespacedJob({ namespace: NS, labelSelector: jobSelector(op, 'nj-1') });
    assert.deepEqual(
      list.items.map((j) => j.metadata?.name),
      [job.metadata?.name],
    );
    assert.equal(
      (
        await batch.listNamespacedJob({
          namespace: NS,
          labelSelector: jobSelector({ ...op, revision: 'other' }, 'nj-1'),
        })
      ).items.length,
      0,
    );
  });

  it('reads the outcome once the pod on the node ran, then deletes the finished Job with its pods', async () => {
    const name =
      nodeJob({ operation: op, node: { name: 'nj-1', taints: [] }, namespace: NS, job: spec }).metadata?.name ?? '';
    const outcome = await eventually('the Job to succeed', async () => {
      const o = await readJobOutcome(d.kube, NS, name);
      return o?.state === 'succeeded' ? o : undefined;
    });
    assert.equal(outcome.attempts, 1);
    assert.equal(outcome.lastPod?.exitCode, 0);
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `batch.kubernetes.io/job-name=${name}` });
    assert.equal(pods.items[0]?.spec?.nodeName, 'nj-1');
    assert.equal((await deleteFinishedJob(NS, name, d)).kind, 'done');
    assert.equal((await deleteFinishedJob(NS, name, d)).kind, 'skipped');
    assert.equal(await readJobOutcome(d.kube, NS, name), undefined);
    await eventually(
      "the Job's pods to be gone",
      async () =>
        (await core.listNamespacedPod({ namespace: NS, labelSelector: `batch.kubernetes.io/job-name=${name}` })).items
          .length === 0,
    );
  });

  it('does not delete a Job still running', async () => {
    // No such node: the pod stays Pending and the Job runs on.
    const job = nodeJob({ operation: op, node: { name: 'nj-absent', taints: [] }, namespace: NS, job: spec });
    await createJob(job, d);
    const out = await deleteFinishedJob(NS, job.metadata?.name ?? '', d);
    assert.equal(out.kind, 'skipped');
    assert.equal((await readJobOutcome(d.kube, NS, job.metadata?.name ?? ''))?.state, 'running');
  });

  it("refuses to take someone else's Job of the same name as its own", async () => {
    const job = nodeJob({ operation: op, node: { name: 'nj-2', taints: [] }, namespace: NS, job: spec });
    await batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: { name: job.metadata?.name ?? '' },
        spec: {
          template: { spec: { restartPolicy: 'Never', nodeName: 'nowhere', containers: [{ name: 'x', image: 'x' }] } },
        },
      },
    });
    const err = await createJob(job, d).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ForeignObjectError);
    assert.equal(classifyError(err, 'create Job').kind, 'stalled');
  });

  it('creates a reboot pod once per recorded bootID, and deletes it', async () => {
    const pod = rebootPod({ operation: op, node: { name: 'nj-1', taints: [] }, bootID: 'boot-1', namespace: NS });
    assert.equal((await createRebootPod(pod, d)).kind, 'done');
    assert.equal((await createRebootPod(pod, d)).kind, 'skipped');
    const live = await core.readNamespacedPod({ namespace: NS, name: pod.metadata?.name ?? '' });
    assert.equal(live.spec?.hostPID, true);
    assert.equal((await deleteRebootPod(NS, pod.metadata?.name ?? '', d)).kind, 'done');
    // The delete is graceful: the pod lingers, terminating, until KWOK lets it go; deleting it
    // again meanwhile is answered 200. Once it is gone, another delete is skipped.
    await eventually('the reboot pod gone', async () => {
      try {
        await core.readNamespacedPod({ namespace: NS, name: pod.metadata?.name ?? '' });
        return false;
      } catch (err) {
        return httpStatus(err) === 404;
      }
    });
    assert.equal((await deleteRebootPod(NS, pod.metadata?.name ?? '', d)).kind, 'skipped');
  });

  it('creates a gate Job the API server accepts, with the node in its environment', async () => {
    const job = gateJob({
      operation: { kind: 'NodeImage', name: 'worker', revision: 'r1' },
      gate: 'storage-healthy',
      step: 'before',
      index: 0,
      node: 'nj-1',
      defaultNamespace: NS,
      template: {
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: 'Never',
              nodeName: 'nj-1',
              tolerations: [{ operator: 'Exists' }],
              containers: [{ name: 'check', image: 'busybox:1.36' }],
            },
          },
        },
      },
    });
    assert.equal((await createJob(job, d)).kind, 'done');
    const live = await batch.readNamespacedJob({ namespace: NS, name: job.metadata?.name ?? '' });
    const env = live.spec?.template.spec?.containers[0]?.env?.[0];
    assert.deepEqual([env?.name, env?.value], ['NODE_NAME', 'nj-1']);
    await eventually(
      'the gate Job to succeed',
      async () => (await readJobOutcome(d.kube, NS, job.metadata?.name ?? ''))?.state === 'succeeded',
    );
  });
});
