/**
 * End to end through the AWS provider: moto emulates Auto Scaling and EC2, a joiner turns its
 * running instances into KWOK nodes with AWS providerIDs, and `drydock run --provider aws`
 * (credentials, region and endpoint from the SDK's default chain, i.e. AWS_* variables) rolls
 * the group to a new AMI when a commit says so: a new launch-template version, surges,
 * drains and terminations, on the real control plane with the real planner. The credentials
 * are canaries (moto takes any key): after the rollout, `drydock plan` and `drydock status`
 * run with them too, and they are found in no output.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { stringify } from 'yaml';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { freePort, motoSdkEnv, useMoto } from '../support/moto.js';
import { JOINER_IMAGE_ANNOTATION, startAwsJoiner, type AwsJoiner } from '../support/aws-joiner.js';
import { awsFixture, createGroup, twoAmis } from '../support/aws-fixture.js';
import { TEST_USER } from '../support/git-server.js';
import { CANARY, CANARY_AWS_ENV, drydockCli, findCanaries, serviceOutputs } from './canaries.js';
import {
  notifyWebhook,
  rolloutYaml,
  startDrydockChild,
  startFleetRepo,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const GROUP = 'e2e-workers';

function fleet(image: string): Record<string, string> {
  const doc = (kind: string, name: string, spec: Record<string, unknown>): string =>
    stringify({ apiVersion: 'drydock.dev/v1alpha1', kind, metadata: { name }, spec });
  return {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'e2e-aws',
      budget: { maxUnavailable: 1 },
      paths: ['clusters', 'images'],
      statusBranch: 'drydock/status',
    }),
    'clusters/workers.yaml': doc('ScalingGroup', 'workers', {
      provider: 'aws',
      groupId: GROUP,
      nodeImage: 'worker',
      role: 'worker',
      autoscaling: false,
    }),
    'images/worker.yaml': doc('NodeImage', 'worker', {
      image,
      strategy: 'replace',
      rollout: rolloutYaml({ joinTimeout: '60s' }),
    }),
  };
}

async function groupNodes(
  kc: KubeConfig,
): Promise<{ name: string; image: string; unschedulable: boolean; phase?: string }[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: 'test.drydock.dev/aws-group' });
  return list.items.map((n) => ({
    name: n.metadata?.name ?? '',
    image: n.metadata?.annotations?.[JOINER_IMAGE_ANNOTATION] ?? '',
    unschedulable: n.spec?.unschedulable === true,
    ...(n.metadata?.annotations?.['drydock.dev/phase'] !== undefined
      ? { phase: n.metadata.annotations['drydock.dev/phase'] }
      : {}),
  }));
}

describe('e2e: image rollout on AWS (moto) driven by Git', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  const moto = useMoto();
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  let joiner: AwsJoiner | undefined;
  let amis: [string, string] = ['', ''];
  let original: string[] = [];
  const dirs: string[] = [];
  let cloud: ReturnType<typeof awsFixture>;
  /** The SDK's default chain: moto's endpoint and region, canary credentials. */
  const awsEnv = (): NodeJS.ProcessEnv => motoSdkEnv(moto().endpoint, CANARY_AWS_ENV);

  before(async function () {
    this.timeout(120_000);
    await moto().reset();
    cloud = awsFixture(moto().endpoint);
    amis = await twoAmis(cloud.ec2);
    await createGroup(cloud, GROUP, amis[0], 3, 6);
    const kc = cp().adminKubeConfig();
    joiner = startAwsJoiner({ kc, asg: cloud.asg, ec2: cloud.ec2, groups: [GROUP] });
    await eventually('3 instances joined as nodes', async () => (await groupNodes(kc)).length === 3);
    original = (await groupNodes(kc)).map((n) => n.name).sort();
    repo = await startFleetRepo(fleet(amis[0]));
    const cacheDir = tempDir('drydock-e2e-aws-cache-');
    dirs.push(cacheDir);
    drydock = startDrydockChild(
      [
        '--namespace',
        'kube-system',
        '--repo',
        repo.url,
        '--branch',
        'main',
        '--kubeconfig',
        cp().kubeconfigPath,
        '--provider',
        'aws',
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1h',
        '--resync',
        '2s',
        '--cache-dir',
        cacheDir,
        '--leader-elect',
        'false',
      ],
      awsEnv(),
    );
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

  it('replaces every instance with one on the new AMI, one at a time, and ends at the same size', async () => {
    assert.ok(repo && drydock);
    const kc = cp().adminKubeConfig();
    let maxCordoned = 0;
    const sampler = setInterval(() => {
      void groupNodes(kc).then(
        (ns) => {
          maxCordoned = Math.max(maxCordoned, ns.filter((n) => n.unschedulable).length);
        },
        () => undefined,
      );
    }, 200);
    try {
      await repo.push(fleet(amis[1]), 'images: worker AMI v2');
      assert.equal(await notifyWebhook(await drydock.url), 202);
      await eventually(
        'every node on the new AMI, none cordoned, all Done or untouched',
        async () => {
          const ns = await groupNodes(kc);
          const off = ns.filter((n) => n.image !== amis[1] || n.unschedulable);
          if (ns.length !== 3 || off.length > 0)
            throw new Error(
              `${ns.length} nodes; not done: ${off.map((n) => `${n.name} ${n.image} phase=${n.phase ?? '-'}`).join('; ')}`,
            );
          return true;
        },
        { timeoutMs: 240_000, intervalMs: 1_000 },
      );
    } finally {
      clearInterval(sampler);
    }
    const now = (await groupNodes(kc)).map((n) => n.name).sort();
    assert.equal(now.filter((n) => original.includes(n)).length, 0, 'no original node is left');
    assert.ok(maxCordoned <= 1, `the budget allows one node out at a time; saw ${maxCordoned}`);
    const g = await cloud.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [GROUP] }));
    const group = g.AutoScalingGroups?.[0];
    assert.equal(group?.DesiredCapacity, 3, 'the group is back at its size');
    assert.equal(group?.LaunchTemplate?.Version, '2', 'the group runs the new launch-template version');
    const inService = (group?.Instances ?? [])
      .filter((i) => i.LifecycleState === 'InService')
      .map((i) => i.InstanceId ?? '');
    const ec2 = await cloud.ec2.send(new DescribeInstancesCommand({ InstanceIds: inService }));
    assert.deepEqual(
      [...new Set((ec2.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => i.ImageId))],
      [amis[1]],
    );
  });

  it('the AWS canary credentials appear in no output: logs, Events, status branch, metrics, plan, status, errors', async () => {
    assert.ok(repo && drydock);
    const kc = cp().adminKubeConfig();
    const outputs = await serviceOutputs(kc, repo, [drydock]);
    const env = { ...awsEnv(), DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password };
    const planArgs = ['plan', '--repo', repo.url, '--kubeconfig', cp().kubeconfigPath, '--provider', 'aws'];
    const plan = await drydockCli([...planArgs, '--namespace', 'kube-system'], env);
    assert.match(plan, /worker/, `drydock plan read the group through the AWS provider: ${plan.slice(0, 2000)}`);
    const cache = tempDir('drydock-e2e-aws-cli-');
    dirs.push(cache);
    const status = await drydockCli(['status', '--repo', repo.url, '--cache-dir', cache], env);
    assert.match(status, /NodeImage/, 'drydock status printed the status');
    // A thrown error from the provider: the cloud unreachable, the canaries still in the signing chain.
    const closed = `http://127.0.0.1:${await freePort()}`;
    const failed = await drydockCli([...planArgs, '--namespace', 'kube-system'], { ...env, AWS_ENDPOINT_URL: closed });
    assert.match(failed, /ECONNREFUSED|unreachable|connect|cloud/i, `the provider's failure is reported: ${failed}`);
    outputs.push(plan, status, failed);
    assert.deepEqual(findCanaries(outputs, { awsKey: CANARY.awsKey, awsSecret: CANARY.awsSecret }), []);
  });
});
