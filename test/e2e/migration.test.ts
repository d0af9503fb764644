/**
 * End to end, a migrating user's manifests: each seed operator's own documents, in its own
 * apiVersion and written as its documentation shows them (placeholders filled with this world's
 * names), pushed unchanged to the running service through Git. Each test checks the outcome that
 * operator would have produced, read from the API server and the cloud, and drydock's status
 * for it on the status branch.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import { parse, stringify } from 'yaml';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { awsFixture, createGroup, twoAmis } from '../support/aws-fixture.js';
import { JOINER_IMAGE_ANNOTATION, startAwsJoiner, type AwsJoiner } from '../support/aws-joiner.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { motoSdkEnv, useMoto } from '../support/moto.js';
import { applyObjects } from '../../src/sandbox/workloads.js';
import { ApiLog } from './api-watch.js';
import {
  drydockArgs,
  E2E_NAMESPACE,
  nodes,
  notifyWebhook,
  OPS_REPO_CONFIG,
  rolloutYaml,
  startDrydockChild,
  startFleetRepo,
  startWorkerWorld,
  startWorld,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const NS = 'drydock-system';

/** A manifest as its operator's users write it, as YAML. */
const manifest = (doc: Record<string, unknown>): string => stringify(doc);

/**
 * The label the Kairos operator puts on every Kairos node when it starts, and that its examples
 * select on. drydock does not set it yet, so the test world puts it on the nodes that play
 * Kairos nodes: this is the one place to change once drydock labels them itself.
 */
const KAIROS_NODE_LABEL = { 'kairos.io/managed': 'true' };
async function labelKairosNodes(kc: KubeConfig, names: readonly string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (const name of names) {
    const ops = Object.entries(KAIROS_NODE_LABEL).map(([key, value]) => ({
      op: 'add',
      path: `/metadata/labels/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`,
      value,
    }));
    await core.patchNode({ name, body: ops });
  }
}

describe('e2e migration: Kairos NodeOp and NodeOpUpgrade (operator.kairos.io/v1alpha1)', function () {
  this.timeout(240_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  const api = new ApiLog();

  before(async function () {
    this.timeout(120_000);
    // From before drydock starts, so every Job and reboot pod it makes is seen.
    await api.start(cp().adminKubeConfig(), {
      job: `/apis/batch/v1/namespaces/${NS}/jobs`,
      pod: `/api/v1/namespaces/${NS}/pods`,
    });
    ({ sim, repo, drydock } = await startWorkerWorld(cp(), dirs, {
      name: 'kairos',
      size: 3,
      host: { rebootSeconds: 2, jobRunSeconds: 1 },
      files: { 'drydock.yaml': OPS_REPO_CONFIG, 'ops/.keep': '' },
    }));
  });

  after(async function () {
    this.timeout(30_000);
    api.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('a NodeOp and a NodeOpUpgrade run once on each Kairos node, cordoned, drained, rebooted; other nodes untouched', async () => {
    assert.ok(repo);
    const kc = cp().adminKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const all = (await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' })).items;
    const names = all.map((n) => n.metadata?.name ?? '').sort();
    const kairos = names.slice(0, 2);
    const other = names[2] ?? '';
    const bootOf = new Map(all.map((n) => [n.metadata?.name ?? '', n.status?.nodeInfo?.bootID ?? '']));
    await labelKairosNodes(kc, kairos);
    const selector = { matchLabels: KAIROS_NODE_LABEL };
    const upgradeImage = 'quay.io/kairos/ubuntu:24.04-standard-amd64-generic-v3.5.0-k3sv1.33.1-k3s1';
    // The Kairos operator's README examples, in a user's repository.
    await repo.push(
      {
        'ops/hello.yaml': manifest({
          apiVersion: 'operator.kairos.io/v1alpha1',
          kind: 'NodeOp',
          metadata: { name: 'hello', namespace: 'default' },
          spec: {
            nodeSelector: selector,
            image: 'busybox:latest',
            command: ['sh', '-c', "echo 'Hello from node' && hostname"],
            cordon: true,
            drainOptions: { enabled: true, force: false, gracePeriodSeconds: 30, ignoreDaemonSets: true },
            rebootOnSuccess: true,
            backoffLimit: 3,
            concurrency: 1,
            stopOnFailure: true,
          },
        }),
        'ops/upgrade.yaml': manifest({
          apiVersion: 'operator.kairos.io/v1alpha1',
          kind: 'NodeOpUpgrade',
          metadata: { name: 'kairos-upgrade', namespace: 'default' },
          spec: { image: upgradeImage, nodeSelector: selector, concurrency: 1, stopOnFailure: true },
        }),
      },
      'ops: the Kairos operator examples, as they are',
    );
    const statuses = await eventually(
      'both Complete on the status branch, every node uncordoned and unlocked',
      async () => {
        const op = await repo?.statusFile('status/NodeOp/hello.yaml');
        const up = await repo?.statusFile('status/NodeOpUpgrade/kairos-upgrade.yaml');
        const ns = (await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' })).items;
        const idle = ns.every(
          (n) => n.spec?.unschedulable !== true && n.metadata?.annotations?.['drydock.dev/operation'] === undefined,
        );
        return idle && /phase: Complete/.test(op ?? '') && /phase: Complete/.test(up ?? '') ? { op, up } : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    const jobs = api.events.filter((e) => e.source === 'job' && e.type === 'ADDED').map((e) => e.obj as V1Job);
    const reboots = api.events.filter(
      (e) => e.source === 'pod' && e.type === 'ADDED' && e.obj.metadata?.labels?.['drydock.dev/step'] === 'reboot',
    );
    const on = (node: string, list: readonly { metadata?: { labels?: Record<string, string> } }[]): number =>
      list.filter((o) => o.metadata?.labels?.['drydock.dev/node'] === node).length;
    for (const node of kairos) {
      const mine = jobs.filter((j) => j.metadata?.labels?.['drydock.dev/node'] === node);
      const images = mine.map((j) => j.spec?.template.spec?.containers[0]?.image).sort();
      assert.deepEqual(images, ['busybox:latest', upgradeImage].sort(), `${node}: one Job of each, with its image`);
      const hello = mine.find((j) => j.spec?.template.spec?.containers[0]?.image === 'busybox:latest');
      assert.deepEqual(hello?.spec?.template.spec?.containers[0]?.command, [
        'sh',
        '-c',
        "echo 'Hello from node' && hostname",
      ]);
      assert.equal(hello?.spec?.backoffLimit, 3);
      assert.equal(
        on(
          node,
          reboots.map((e) => e.obj),
        ),
        2,
        `${node}: rebooted after each`,
      );
      const now = await core.readNode({ name: node });
      assert.notEqual(now.status?.nodeInfo?.bootID, bootOf.get(node), `${node} rebooted`);
    }
    assert.equal(on(other, jobs), 0, `${other} has no Kairos label: no Job`);
    assert.equal((await core.readNode({ name: other })).status?.nodeInfo?.bootID, bootOf.get(other));
    for (const text of [statuses.op, statuses.up]) {
      for (const node of kairos) assert.ok(text?.includes(node), `the status names ${node}: ${text}`);
      assert.equal(text?.includes(other), false, `the status leaves ${other} out`);
    }
  });
});

interface MaintenanceStatus {
  phase: string;
  nodeName: string;
  reason: string;
  totalpods: number;
  evictionPods: number;
  drainProgress: number;
  pendingPods: unknown[];
  lastUpdate?: string;
  endedAt?: string;
}

describe('e2e migration: node-maintenance-operator NodeMaintenance, both API groups', function () {
  this.timeout(240_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];

  before(async function () {
    this.timeout(120_000);
    let cacheDir: string;
    ({ sim, repo, cacheDir } = await startWorld(cp(), dirs));
    drydock = startDrydockChild(drydockArgs(repo, cp().kubeconfigPath, sim.url, cacheDir));
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  /** Pods on the node in any namespace, not terminating. */
  async function podsOn(kc: KubeConfig, node: string): Promise<number> {
    const list = await kc.makeApiClient(CoreV1Api).listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
    return list.items.filter((p) => p.metadata?.deletionTimestamp === undefined).length;
  }

  async function status(name: string): Promise<MaintenanceStatus | undefined> {
    const text = await repo?.statusFile(`status/NodeMaintenance/${name}.yaml`);
    return text === undefined ? undefined : (parse(text) as MaintenanceStatus);
  }

  it('medik8s and kubevirt groups: cordon, every pod evicted, the counters; the file deleted uncordons', async () => {
    assert.ok(repo && drydock);
    const kc = cp().adminKubeConfig();
    // Two workers that run workload pods: what a maintenance there must move.
    const core = kc.makeApiClient(CoreV1Api);
    const pods = (await core.listNamespacedPod({ namespace: E2E_NAMESPACE })).items;
    const busy = [...new Set(pods.map((p) => p.spec?.nodeName ?? ''))].filter((n) => n !== '').sort();
    const [first, second] = busy;
    assert.ok(first && second, `two workers run workload pods: ${busy.join(', ')}`);
    // The operators' sample: as exported from a medik8s cluster (the API server filled in
    // evictionTimeout), and as written by hand in the older kubevirt group.
    const docs = {
      'clusters/nodemaintenance-first.yaml': manifest({
        apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
        kind: 'NodeMaintenance',
        metadata: { name: 'nodemaintenance-first' },
        spec: { nodeName: first, reason: 'Test node maintenance', evictionTimeout: '30s' },
      }),
      'clusters/nodemaintenance-second.yaml': manifest({
        apiVersion: 'nodemaintenance.kubevirt.io/v1beta1',
        kind: 'NodeMaintenance',
        metadata: { name: 'nodemaintenance-second' },
        spec: { nodeName: second, reason: 'Test node maintenance' },
      }),
    };
    await repo.push(docs, 'maintenance: two workers');
    assert.equal(await notifyWebhook(await drydock.url), 202);
    const done = await eventually(
      'both nodes cordoned and empty, both Succeeded',
      async () => {
        const ns = (await nodes(kc)).filter((n) => n.name === first || n.name === second);
        const a = await status('nodemaintenance-first');
        const b = await status('nodemaintenance-second');
        const empty = (await podsOn(kc, first)) === 0 && (await podsOn(kc, second)) === 0;
        const ok = ns.length === 2 && ns.every((n) => n.unschedulable) && empty;
        return ok && a?.phase === 'Succeeded' && b?.phase === 'Succeeded' ? ([a, b] as const) : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    for (const [s, node] of [
      [done[0], first],
      [done[1], second],
    ] as const) {
      assert.equal(s.nodeName, node);
      assert.equal(s.reason, 'Test node maintenance');
      assert.ok(s.totalpods >= 1, `${node}: totalpods counts the pods it ran (${s.totalpods})`);
      assert.equal(s.evictionPods, s.totalpods, `${node}: every pod was to be evicted`);
      assert.equal(s.drainProgress, 100);
      assert.deepEqual(s.pendingPods, []);
      assert.ok(s.lastUpdate, `${node}: lastUpdate`);
    }
    // Workloads rescheduled elsewhere: every replica Running again.
    const want = pods.length;
    await eventually('workload pods Running again elsewhere', async () => {
      const now = (await core.listNamespacedPod({ namespace: E2E_NAMESPACE })).items.filter(
        (p) => p.metadata?.deletionTimestamp === undefined && p.status?.phase === 'Running',
      );
      return now.length === want && now.every((p) => p.spec?.nodeName !== first && p.spec?.nodeName !== second);
    });

    await repo.push({ ...docs, ...Object.fromEntries(Object.keys(docs).map((k) => [k, null])) }, 'maintenance: done');
    assert.equal(await notifyWebhook(await drydock.url), 202);
    await eventually(
      'both uncordoned and unlocked, both Ended',
      async () => {
        const ns = (await nodes(kc)).filter((n) => n.name === first || n.name === second);
        const ended = [await status('nodemaintenance-first'), await status('nodemaintenance-second')];
        return (
          ns.length === 2 &&
          ns.every((n) => !n.unschedulable && n.annotations['drydock.dev/operation'] === undefined) &&
          ended.every((s) => s?.phase === 'Ended' && s.endedAt !== undefined)
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // As medik8s leaves them: no maintenance record on either node once the branch holds the endings.
    await eventually(
      'both nodes clean of the maintenance record, both still Ended',
      async () => {
        const ns = (await nodes(kc)).filter((n) => n.name === first || n.name === second);
        const ended = [await status('nodemaintenance-first'), await status('nodemaintenance-second')];
        return (
          ns.length === 2 &&
          ns.every((n) => n.annotations['drydock.dev/maintenance'] === undefined) &&
          ended.every((s) => s?.phase === 'Ended')
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });
});

describe('e2e migration: Constellation NodeImage, ScalingGroup, AutoscalingStrategy (update.edgeless.systems/v1alpha1)', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  const moto = useMoto();
  const GROUP = 'constellation-worker-x7k2';
  const AUTOSCALER = 'constellation-cluster-autoscaler';
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  let joiner: AwsJoiner | undefined;
  let cloud: ReturnType<typeof awsFixture>;
  let amis: [string, string] = ['', ''];
  let arn = '';
  const dirs: string[] = [];

  /**
   * Constellation's exported objects (its documentation's example), for this cluster: the
   * worker group's ARN (on AWS Constellation writes the bare group name, which drydock refuses
   * as ambiguous between AWS and the sim cloud; the migration guide says to use the ARN).
   */
  const constellationFiles = (image: string): Record<string, string> => ({
    'constellation/nodeimage.yaml': manifest({
      apiVersion: 'update.edgeless.systems/v1alpha1',
      kind: 'NodeImage',
      metadata: { name: 'constellation-os' },
      spec: { image },
      status: { budget: 1, conditions: [] },
    }),
    'constellation/scalinggroup.yaml': manifest({
      apiVersion: 'update.edgeless.systems/v1alpha1',
      kind: 'ScalingGroup',
      metadata: { name: GROUP },
      spec: {
        nodeImage: 'constellation-os',
        groupId: arn,
        autoscalerGroupName: GROUP,
        nodeGroupName: 'worker_default',
        autoscaling: true,
        min: 1,
        max: 10,
        role: 'Worker',
      },
    }),
    'constellation/autoscalingstrategy.yaml': manifest({
      apiVersion: 'update.edgeless.systems/v1alpha1',
      kind: 'AutoscalingStrategy',
      metadata: { name: 'autoscalingstrategy' },
      spec: { enabled: true, deploymentName: AUTOSCALER, deploymentNamespace: 'kube-system' },
    }),
  });

  async function groupNodes(kc: KubeConfig): Promise<{ name: string; image: string; unschedulable: boolean }[]> {
    const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: 'test.drydock.dev/aws-group' });
    return list.items.map((n) => ({
      name: n.metadata?.name ?? '',
      image: n.metadata?.annotations?.[JOINER_IMAGE_ANNOTATION] ?? '',
      unschedulable: n.spec?.unschedulable === true,
    }));
  }

  async function autoscaler(kc: KubeConfig): Promise<{ replicas: number; previous?: string }> {
    const d = await kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: AUTOSCALER, namespace: 'kube-system' });
    const previous = d.metadata?.annotations?.['drydock.dev/previous-replicas'];
    return { replicas: d.spec?.replicas ?? 1, ...(previous !== undefined ? { previous } : {}) };
  }

  before(async function () {
    this.timeout(120_000);
    await moto().reset();
    cloud = awsFixture(moto().endpoint);
    amis = await twoAmis(cloud.ec2);
    await createGroup(cloud, GROUP, amis[0], 2, 4);
    const g = await cloud.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [GROUP] }));
    arn = g.AutoScalingGroups?.[0]?.AutoScalingGroupARN ?? '';
    assert.match(arn, /^arn:aws:autoscaling:/);
    const kc = cp().adminKubeConfig();
    joiner = startAwsJoiner({ kc, asg: cloud.asg, ec2: cloud.ec2, groups: [GROUP] });
    await eventually('2 instances joined as nodes', async () => (await groupNodes(kc)).length === 2);
    // The cluster-autoscaler Deployment Constellation installs, enabled (one replica).
    const labels = { app: AUTOSCALER };
    await applyObjects(
      kc,
      [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: AUTOSCALER, namespace: 'kube-system', labels },
          spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: { containers: [{ name: 'autoscaler', image: 'registry.example/ca:1' }] },
            },
          },
        } as Parameters<typeof applyObjects>[1][number],
      ],
      'drydock-e2e',
    );
    const config = stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'e2e-constellation',
      budget: { maxUnavailable: 1 },
      defaults: { rollout: rolloutYaml({ joinTimeout: '60s' }) },
      paths: ['constellation'],
      statusBranch: 'drydock/status',
    });
    repo = await startFleetRepo({ 'drydock.yaml': config, ...constellationFiles(amis[0]) });
    const cacheDir = tempDir('drydock-e2e-constellation-cache-');
    dirs.push(cacheDir);
    const args = ['--namespace', 'kube-system', '--repo', repo.url, '--branch', 'main'];
    args.push('--kubeconfig', cp().kubeconfigPath, '--provider', 'aws', '--listen', '127.0.0.1:0');
    args.push('--interval', '1h', '--resync', '2s', '--cache-dir', cacheDir, '--leader-elect', 'false');
    drydock = startDrydockChild(args, motoSdkEnv(moto().endpoint));
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
  });

  after(async function () {
    this.timeout(30_000);
    if (drydock && drydock.proc.exitCode === null) {
      drydock.kill('SIGTERM');
      await drydock.exited;
    }
    await joiner?.stop();
    await repo?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a new image: every node replaced, the autoscaler paused during and restored after, status Complete', async () => {
    assert.ok(repo && drydock);
    const kc = cp().adminKubeConfig();
    const original = (await groupNodes(kc)).map((n) => n.name);
    assert.deepEqual(await autoscaler(kc), { replicas: 1 }, 'idle on the current image: the autoscaler runs');
    let paused = false;
    const sampler = setInterval(() => {
      void autoscaler(kc).then(
        (a) => {
          if (a.replicas === 0 && a.previous === '1') paused = true;
        },
        () => undefined,
      );
    }, 200);
    try {
      // The user's upgrade: only spec.image changes (what `constellation upgrade apply` would set).
      await repo.push(constellationFiles(amis[1]), 'constellation: new node image');
      assert.equal(await notifyWebhook(await drydock.url), 202);
      await eventually(
        'every node replaced by one on the new image, none cordoned',
        async () => {
          const ns = await groupNodes(kc);
          return (
            ns.length === 2 && ns.every((n) => n.image === amis[1] && !n.unschedulable && !original.includes(n.name))
          );
        },
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
      await eventually('the autoscaler restored', async () => {
        const a = await autoscaler(kc);
        return a.replicas === 1 && a.previous === undefined;
      });
    } finally {
      clearInterval(sampler);
    }
    assert.ok(paused, 'the autoscaler was at 0 replicas, its 1 remembered, during the rollout');
    const g = await cloud.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [GROUP] }));
    assert.equal(g.AutoScalingGroups?.[0]?.DesiredCapacity, 2, 'the group is back at its size');
    await eventually('the NodeImage Complete on the status branch', async () =>
      /phase: Complete/.test((await repo?.statusFile('status/NodeImage/constellation-os.yaml')) ?? ''),
    );
  });

  // Constellation on AWS writes the bare group name: in Constellation's own ScalingGroup that is AWS.
  it('the ScalingGroup as Constellation on AWS writes it (groupId: the bare group name) rolls out too', async () => {
    assert.ok(repo && drydock);
    const kc = cp().adminKubeConfig();
    const files = constellationFiles(amis[0]);
    const group = files['constellation/scalinggroup.yaml'] ?? '';
    files['constellation/scalinggroup.yaml'] = group.replace(arn, GROUP);
    await repo.push(files, 'constellation: the group by its name, back to the first image');
    assert.equal(await notifyWebhook(await drydock.url), 202);
    await eventually(
      'every node on the first image again',
      async () => {
        const ns = await groupNodes(kc);
        return ns.length === 2 && ns.every((n) => n.image === amis[0] && !n.unschedulable);
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
  });
});
