// The sim cloud's simulated hosts against a real control plane whose KWOK leaves Job pods to
// them: Jobs end with the exit code and after the run time the hosts decide, chosen nodes fail
// every Job, an in-place update leaves its image, and a reboot pod reboots its node once; a
// Bottlerocket host stages the version drydock's update Job asks for and boots it.
import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { parseSimConfig } from '../../src/cloud/sim/config.js';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';
import { bottlerocketUpdateJob } from '../../src/execute/jobs/bottlerocket-update.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/process.js';
import {
  createJob,
  createRebootPod,
  gateJob,
  kubeApis,
  nodeJob,
  readJobOutcome,
  rebootPod,
  type JobDeps,
  type OperationRef,
} from '../../src/execute/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';

const NS = 'default';
const op: OperationRef = { kind: 'NodeOp', name: 'firmware', revision: 'r1' };
const spec = { image: 'busybox:1.36', command: ['true'], imagePullSecrets: [], backoffLimit: 0, privileged: true };

const ready = (n: V1Node): boolean =>
  n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

describe('sim hosts against a real control plane', function () {
  this.timeout(120_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let dir: string;
  let sim: RunningSimCloud | undefined;
  let core: CoreV1Api;
  let d: JobDeps;

  before(async () => {
    const kc = cp().adminKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    d = { kube: kubeApis(kc), fieldManager: 'drydock' };
    dir = await mkdtemp(path.join(tmpdir(), 'drydock-sim-host-'));
    const config = parseSimConfig({
      bootDelaySeconds: 0,
      groups: [
        { id: 'workers', size: 3, image: 'os-v1' },
        {
          id: 'br',
          size: 1,
          image: 'bottlerocket-aws-k8s-1.30',
          bottlerocket: { version: '1.19.2', variant: 'aws-k8s-1.30', available: ['1.19.2', '1.20.3', '1.21.0'] },
        },
      ],
      host: { rebootSeconds: 3, jobRunSeconds: 1, failJobsOnNodes: ['workers-i-0003'] },
    });
    sim = await runSimCloud({ config, stateDir: path.join(dir, 'state'), kubeConfig: kc });
    await eventually(
      '3 Ready sim nodes',
      async () =>
        (await core.listNode({ labelSelector: 'sim.drydock.dev/group in (workers,br)' })).items.filter(ready).length ===
        4,
    );
  });
  after(async () => {
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const node = (name: string) => ({ name, taints: [] });
  async function finished(name: string) {
    return eventually(`Job ${name} to finish`, async () => {
      const o = await readJobOutcome(d.kube, NS, name);
      return o !== undefined && o.state !== 'running' ? o : undefined;
    });
  }

  it('every node starts with a bootID', async () => {
    const nodes = await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' });
    const boots = nodes.items.map((n) => n.status?.nodeInfo?.bootID ?? '');
    assert.equal(boots.length, 3);
    for (const b of boots) assert.match(b, /^[0-9a-f-]{36}$/);
    assert.equal(new Set(boots).size, 3);
  });

  it('a Job runs for the run time and succeeds, its message kept', async () => {
    const job = nodeJob({ operation: op, node: node('workers-i-0001'), namespace: NS, job: spec });
    await createJob(job, d);
    const o = await finished(job.metadata?.name ?? '');
    assert.equal(o.state, 'succeeded');
    assert.equal(o.lastPod?.message, 'done');
    const pod = await core.readNamespacedPod({ namespace: NS, name: o.lastPod?.name ?? '' });
    const t = pod.status?.containerStatuses?.[0]?.state?.terminated;
    assert.ok(t?.startedAt !== undefined && t.finishedAt !== undefined);
    assert.ok(new Date(t.finishedAt).getTime() - new Date(t.startedAt).getTime() >= 900, 'ran for about jobRunSeconds');
  });

  it('every Job fails on a node the config names', async () => {
    const job = nodeJob({ operation: op, node: node('workers-i-0003'), namespace: NS, job: spec });
    await createJob(job, d);
    const o = await finished(job.metadata?.name ?? '');
    assert.equal(o.state, 'failed');
    assert.equal(o.attempts, 1);
    assert.equal(o.lastPod?.exitCode, 1);
    assert.match(o.lastPod?.message ?? '', /workers-i-0003 fails every Job/);
  });

  it('a Job ends with the exit code of its pod annotation, and a labelled node fails every Job', async () => {
    const template = (annotations: Record<string, string>) => ({
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { annotations },
          spec: {
            restartPolicy: 'Never',
            nodeName: 'workers-i-0002',
            containers: [{ name: 'c', image: 'busybox:1.36' }],
          },
        },
      },
    });
    const gate = { operation: op, gate: 'g', step: 'before' as const, node: 'workers-i-0002', defaultNamespace: NS };
    const coded = gateJob({
      ...gate,
      index: 0,
      template: template({ 'sim.drydock.dev/exit-code': '3', 'sim.drydock.dev/run-seconds': '0' }),
    });
    await createJob(coded, d);
    assert.equal((await finished(coded.metadata?.name ?? '')).lastPod?.exitCode, 3);

    await core.patchNode(
      { name: 'workers-i-0002', body: { metadata: { labels: { 'sim.drydock.dev/fail-jobs': 'true' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const plain = gateJob({ ...gate, index: 1, template: template({}) });
    await createJob(plain, d);
    const o = await finished(plain.metadata?.name ?? '');
    assert.equal(o.state, 'failed');
    assert.equal(o.lastPod?.exitCode, 1);
  });

  it("an in-place update Job leaves its image as the node's osImage", async () => {
    const job = nodeJob({
      operation: { kind: 'NodeImage', name: 'edge', revision: 'r2' },
      node: node('workers-i-0001'),
      namespace: NS,
      job: { ...spec, image: 'os-v2' },
      appliesImage: 'os-v2',
    });
    await createJob(job, d);
    assert.equal((await finished(job.metadata?.name ?? '')).state, 'succeeded');
    await eventually(
      'osImage os-v2',
      async () => (await core.readNode({ name: 'workers-i-0001' })).status?.nodeInfo?.osImage === 'os-v2',
    );
  });

  it('a reboot pod takes its node NotReady, and it comes back Ready once, with a new bootID and its pods restarted', async () => {
    const name = 'workers-i-0001';
    const before = (await core.readNode({ name })).status?.nodeInfo?.bootID ?? '';
    await core.createNamespacedPod({
      namespace: NS,
      body: { metadata: { name: 'app' }, spec: { nodeName: name, containers: [{ name: 'app', image: 'nginx' }] } },
    });
    await eventually(
      'the app pod Running',
      async () => (await core.readNamespacedPod({ namespace: NS, name: 'app' })).status?.phase === 'Running',
    );
    const reboot = rebootPod({ operation: op, node: node(name), bootID: before, namespace: NS });
    await createRebootPod(reboot, d);
    await eventually('the node NotReady', async () => !ready(await core.readNode({ name })), { intervalMs: 100 });
    // Status and metadata are two writes: wait for the whole come-back (Ready, then KWOK's annotation).
    const back = await eventually('the node back Ready and managed by KWOK', async () => {
      const n = await core.readNode({ name });
      return ready(n) && n.metadata?.annotations?.['kwok.x-k8s.io/node'] === 'fake' ? n : undefined;
    });
    const after = back.status?.nodeInfo?.bootID ?? '';
    assert.notEqual(after, before);
    assert.equal(back.metadata?.annotations?.['kwok.x-k8s.io/node'], 'fake', 'KWOK manages the node again');
    const app = await core.readNamespacedPod({ namespace: NS, name: 'app' });
    assert.equal(app.status?.containerStatuses?.[0]?.restartCount, 1);
    assert.equal(
      (await core.readNamespacedPod({ namespace: NS, name: reboot.metadata?.name ?? '' })).status?.phase,
      'Succeeded',
    );
    // Rebooted exactly once: the same pod made again after the reboot (say, by a drydock that lost
    // its record) runs behind its bootID guard, ends, and reboots nothing.
    await core.deleteNamespacedPod({ namespace: NS, name: reboot.metadata?.name ?? '', gracePeriodSeconds: 0 });
    await eventually('the finished reboot pod gone', async () =>
      core.readNamespacedPod({ namespace: NS, name: reboot.metadata?.name ?? '' }).then(
        () => false,
        () => true,
      ),
    );
    await createRebootPod(rebootPod({ operation: op, node: node(name), bootID: before, namespace: NS }), d);
    const stale = await eventually('the stale reboot pod ended', async () => {
      const p = await core.readNamespacedPod({ namespace: NS, name: reboot.metadata?.name ?? '' });
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    });
    assert.equal(stale.status?.phase, 'Succeeded');
    assert.match(stale.status?.containerStatuses?.[0]?.state?.terminated?.message ?? '', /^not rebooted: /);
    const now = await core.readNode({ name });
    assert.equal(now.status?.nodeInfo?.bootID, after);
    assert.ok(ready(now), 'never taken down by the stale pod');
  });

  it('a Bottlerocket host stages the version of the update Job, and a reboot boots it', async () => {
    const name = 'br-i-0001';
    const osImage = async () => (await core.readNode({ name })).status?.nodeInfo?.osImage;
    assert.equal(await osImage(), 'Bottlerocket OS 1.19.2 (aws-k8s-1.30)');
    const update = (revision: string, version: string, reboot: boolean) =>
      bottlerocketUpdateJob({
        operation: { kind: 'NodeImage', name: 'bottlerocket', revision },
        node: node(name),
        namespace: NS,
        update: { version, reboot, image: 'curl:8' },
        imagePullSecrets: [],
        backoffLimit: 0,
      });
    async function rebootedFrom(bootID: string) {
      return eventually('the node back Ready on a new boot', async () => {
        const n = await core.readNode({ name });
        const back = ready(n) && n.metadata?.annotations?.['kwok.x-k8s.io/node'] === 'fake';
        return back && n.status?.nodeInfo?.bootID !== bootID ? n : undefined;
      });
    }

    // Pinned, rebooted by drydock's reboot pod.
    const pinned = update('r1', '1.20.3', false);
    await createJob(pinned, d);
    const o = await finished(pinned.metadata?.name ?? '');
    assert.equal(o.state, 'succeeded');
    assert.equal(o.lastPod?.message, 'staged 1.20.3 (was 1.19.2)');
    assert.equal(await osImage(), 'Bottlerocket OS 1.19.2 (aws-k8s-1.30)', 'not before the reboot');
    const before = (await core.readNode({ name })).status?.nodeInfo?.bootID ?? '';
    await createRebootPod(rebootPod({ operation: op, node: node(name), bootID: before, namespace: NS }), d);
    const back = await rebootedFrom(before);
    assert.equal(back.status?.nodeInfo?.osImage, 'Bottlerocket OS 1.20.3 (aws-k8s-1.30)');

    // latest, after a release published through the sim cloud's API, rebooted through the host's API.
    await new SimHttpProvider(sim?.url ?? '').publishBottlerocketRelease('br', '1.21.1');
    const latest = update('r2', 'latest', true);
    await createJob(latest, d);
    assert.equal(
      (await finished(latest.metadata?.name ?? '')).lastPod?.message,
      'staged 1.21.1 (was 1.20.3), reboot requested',
    );
    const again = await rebootedFrom(back.status?.nodeInfo?.bootID ?? '');
    assert.equal(again.status?.nodeInfo?.osImage, 'Bottlerocket OS 1.21.1 (aws-k8s-1.30)');
  });
});
