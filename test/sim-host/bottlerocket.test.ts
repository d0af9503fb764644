/**
 * The simulated Bottlerocket hosts, from the objects alone: how drydock's update Job ends (the
 * script's own messages, as test/execute/bottlerocket-update.test.ts has the script print them
 * against Bottlerocket's API), what a reboot boots, each fault; and the sim cloud's side (the
 * osImage a node registers with, releases published at run time, the config's checks).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ManualClock } from '../../src/cloud/sim/clock.js';
import { SimCloud } from '../../src/cloud/sim/cloud.js';
import {
  DEFAULT_HOST,
  parseSimConfig,
  SimConfigError,
  type SimBottlerocketConfig,
  type SimBottlerocketFault,
} from '../../src/cloud/sim/config.js';
import { MemoryNodeRegistry } from '../../src/cloud/sim/nodes.js';
import { FileStateStore } from '../../src/cloud/sim/state.js';
import { bottlerocketUpdateContainer, bottlerocketUpdateResult } from '../../src/execute/jobs/bottlerocket-update.js';
import { compareVersions } from '../../src/sim-host/bottlerocket.js';
import { decideHost, HOST_KEYS, type HostStep } from '../../src/sim-host/decide.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const REPO = ['1.19.2', '1.20.3', '1.21.0'];
const br = (faults: SimBottlerocketFault[] = [], available = REPO): SimBottlerocketConfig => ({
  version: '1.19.2',
  variant: 'aws-k8s-1.30',
  available,
  faults,
});
const node = (
  name: string,
  extra: { osImage?: string; annotations?: Record<string, string>; group?: string } = {},
): V1Node => ({
  metadata: {
    name,
    labels: { 'sim.drydock.dev/group': extra.group ?? 'br' },
    annotations: extra.annotations ?? {},
  },
  status: { nodeInfo: { osImage: extra.osImage ?? 'Bottlerocket OS 1.19.2 (aws-k8s-1.30)' } as never },
});
/** A pod of the update Job as the builder makes it, running for 10 s already. */
const updatePod = (name: string, nodeName: string, version: string, reboot = false, phase = 'Running'): V1Pod => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, annotations: {}, labels: {} },
  spec: {
    nodeName,
    restartPolicy: 'Never',
    containers: [bottlerocketUpdateContainer({ version, reboot, image: 'curl:8' }).container],
  },
  status: { phase, startTime: new Date(T0 - 10_000) },
});
const decide = (w: { nodes: V1Node[]; jobPods?: V1Pod[]; group?: SimBottlerocketConfig; failJobsOnNodes?: string[] }) =>
  decideHost({
    jobPods: w.jobPods ?? [],
    rebootPods: [],
    nodes: w.nodes,
    config: { ...DEFAULT_HOST, failJobsOnNodes: w.failJobsOnNodes ?? [] },
    bottlerocket: new Map([['br', w.group ?? br()]]),
    now: T0,
  }).steps;
const ended = (steps: readonly HostStep[]) => {
  const end = steps.find((s) => s.kind === 'endPod');
  const t = end?.kind === 'endPod' ? end.status.containerStatuses?.[0]?.state?.terminated : undefined;
  return { phase: end?.kind === 'endPod' ? end.status.phase : undefined, exitCode: t?.exitCode, message: t?.message };
};
const staged = (steps: readonly HostStep[]) =>
  steps.flatMap((s) =>
    s.kind === 'stageBottlerocket' ? [{ staged: s.staged, rebootRequestedBy: s.rebootRequestedBy }] : [],
  );
const stagedOn = (version: string) => ({ annotations: { [HOST_KEYS.bottlerocketStaged]: version } });

describe('sim hosts playing Bottlerocket', () => {
  it('stage a pinned version, then end the Job with the script message drydock reads back', () => {
    const steps = decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', '1.20.3')] });
    assert.deepEqual(
      steps.map((s) => s.kind),
      ['stageBottlerocket', 'endPod'],
    );
    assert.deepEqual(staged(steps), [{ staged: '1.20.3', rebootRequestedBy: undefined }]);
    assert.deepEqual(ended(steps), { phase: 'Succeeded', exitCode: 0, message: 'staged 1.20.3 (was 1.19.2)' });
    assert.deepEqual(bottlerocketUpdateResult(ended(steps).message), {
      outcome: 'staged',
      version: '1.20.3',
      previous: '1.19.2',
      rebootRequested: false,
    });
  });

  it('latest: the newest version of the repository, including one published since the start', () => {
    const latest = (group: SimBottlerocketConfig) =>
      ended(decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', 'latest')], group })).message;
    assert.equal(latest(br()), 'staged 1.21.0 (was 1.19.2)');
    assert.equal(latest(br([], [...REPO, '1.21.1'])), 'staged 1.21.1 (was 1.19.2)');
  });

  it('already current: pinned to the running version, or latest with nothing newer; nothing staged', () => {
    const on = node('br-i-0001', { osImage: 'Bottlerocket OS 1.21.0 (aws-k8s-1.30)' });
    for (const version of ['1.21.0', 'v1.21.0', 'latest']) {
      const steps = decide({ nodes: [on], jobPods: [updatePod('u', 'br-i-0001', version)] });
      assert.deepEqual(ended(steps), { phase: 'Succeeded', exitCode: 0, message: 'already at 1.21.0' }, version);
      assert.deepEqual(staged(steps), [], version);
    }
  });

  it('already current with another version activated: deactivates it, so the node stays', () => {
    const on = node('br-i-0001', { osImage: 'Bottlerocket OS 1.20.3 (aws-k8s-1.30)', ...stagedOn('1.21.0') });
    const steps = decide({ nodes: [on], jobPods: [updatePod('u', 'br-i-0001', '1.20.3')] });
    assert.equal(ended(steps).message, 'already at 1.20.3');
    assert.deepEqual(staged(steps), [{ staged: undefined, rebootRequestedBy: undefined }]);
  });

  it('a version the repository does not offer: fails at refresh with what the API shows', () => {
    const steps = decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', '1.20.5')] });
    assert.deepEqual(ended(steps), {
      phase: 'Failed',
      exitCode: 1,
      message:
        'refresh-updates failed: no update to 1.20.5: chosen_update null (update_state Idle, ' +
        'available_updates [1.21.0, 1.20.3, 1.19.2], running 1.19.2, version-lock v1.20.5)',
    });
    assert.deepEqual(staged(steps), []);
  });

  it('reboot through the API: the message says so, and the host goes down once the Job ended', () => {
    const steps = decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', '1.20.3', true)] });
    assert.deepEqual(
      steps.map((s) => s.kind),
      ['stageBottlerocket', 'endPod', 'goDown'],
    );
    assert.deepEqual(staged(steps), [{ staged: '1.20.3', rebootRequestedBy: 'uid-u' }]);
    assert.equal(ended(steps).message, 'staged 1.20.3 (was 1.19.2), reboot requested');
  });

  it('a reboot asked for and not yet done is done, even by a restarted simulator', () => {
    const asked = node('br-i-0001', {
      annotations: { [HOST_KEYS.bottlerocketStaged]: '1.20.3', [HOST_KEYS.bottlerocketRebootRequestedBy]: 'uid-u' },
    });
    const done = updatePod('u', 'br-i-0001', '1.20.3', true, 'Succeeded');
    const steps = decide({ nodes: [asked], jobPods: [done] });
    assert.deepEqual(
      steps.map((s) => [s.kind, s.key]),
      [['goDown', 'down:uid-u']],
    );
  });

  it('a reboot boots the staged version, which osImage then names', () => {
    const rebooting = node('br-i-0001', {
      annotations: {
        [HOST_KEYS.bottlerocketStaged]: '1.20.3',
        [HOST_KEYS.rebootingUntil]: new Date(T0 - 1).toISOString(),
      },
    });
    const steps = decide({ nodes: [rebooting] });
    assert.equal(steps.length, 1);
    assert.equal(steps[0]?.kind === 'comeBack' && steps[0].osImage, 'Bottlerocket OS 1.20.3 (aws-k8s-1.30)');
    const nothingStaged = node('br-i-0002', {
      annotations: { [HOST_KEYS.rebootingUntil]: new Date(T0 - 1).toISOString() },
    });
    const plain = decide({ nodes: [nothingStaged] });
    assert.equal(plain[0]?.kind === 'comeBack' && plain[0].osImage, undefined);
  });

  it('fault bootsOldVersion: the node comes back on the version it ran', () => {
    const rebooting = (name: string) =>
      node(name, {
        annotations: {
          [HOST_KEYS.bottlerocketStaged]: '1.20.3',
          [HOST_KEYS.rebootingUntil]: new Date(T0 - 1).toISOString(),
        },
      });
    const steps = decide({
      nodes: [rebooting('br-i-0001'), rebooting('br-i-0002')],
      group: br([{ kind: 'bootsOldVersion', nodes: ['br-i-0002'] }]),
    });
    assert.deepEqual(
      steps.map((s) => [s.node, s.kind === 'comeBack' ? s.osImage : s.kind]),
      [
        ['br-i-0001', 'Bottlerocket OS 1.20.3 (aws-k8s-1.30)'],
        ['br-i-0002', undefined],
      ],
    );
  });

  it('fault noUpdate: a pinned version fails at refresh; latest finds the node current', () => {
    const group = br([{ kind: 'noUpdate' }]);
    const pinned = decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', '1.20.3')], group });
    assert.deepEqual(ended(pinned), {
      phase: 'Failed',
      exitCode: 1,
      message:
        'refresh-updates failed: no update to 1.20.3: chosen_update null (update_state Idle, ' +
        'available_updates [], running 1.19.2, version-lock v1.20.3)',
    });
    const latest = decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', 'latest')], group });
    assert.equal(ended(latest).message, 'already at 1.19.2');
  });

  it('fault prepareFails: the Job fails with the command stderr, on the nodes named only', () => {
    const group = br([{ kind: 'prepareFails', nodes: ['br-i-0001'], stderr: 'Failed to write image:\n  disk gone\n' }]);
    const steps = decide({
      nodes: [node('br-i-0001'), node('br-i-0002')],
      jobPods: [updatePod('a', 'br-i-0001', '1.20.3'), updatePod('b', 'br-i-0002', '1.20.3')],
      group,
    });
    const byNode = (n: string) => ended(steps.filter((s) => s.node === n));
    assert.deepEqual(byNode('br-i-0001'), {
      phase: 'Failed',
      exitCode: 1,
      message: 'prepare-update failed: Failed (exit_status 1): Failed to write image: disk gone',
    });
    assert.equal(byNode('br-i-0002').message, 'staged 1.20.3 (was 1.19.2)');
    assert.deepEqual(staged(steps.filter((s) => s.node === 'br-i-0001')), [], 'nothing staged on the failed node');
    const byDefault = decide({
      nodes: [node('br-i-0001')],
      jobPods: [updatePod('a', 'br-i-0001', '1.20.3')],
      group: br([{ kind: 'prepareFails' }]),
    });
    assert.equal(
      ended(byDefault).message,
      'prepare-update failed: Failed (exit_status 1): Failed to write image to the inactive partition: No space left on device',
    );
  });

  it('a retried Job finds its update activated and reports it without preparing again', () => {
    const steps = decide({
      nodes: [node('br-i-0001', stagedOn('1.20.3'))],
      jobPods: [updatePod('u', 'br-i-0001', '1.20.3')],
      group: br([{ kind: 'prepareFails' }]),
    });
    assert.equal(ended(steps).message, 'staged 1.20.3 (was 1.19.2)');
    assert.deepEqual(staged(steps), []);
  });

  it('another version activated: a failed prepare leaves none activated', () => {
    const steps = decide({
      nodes: [node('br-i-0001', stagedOn('1.21.0'))],
      jobPods: [updatePod('u', 'br-i-0001', '1.20.3')],
      group: br([{ kind: 'prepareFails' }]),
    });
    assert.equal(ended(steps).exitCode, 1);
    assert.deepEqual(staged(steps), [{ staged: undefined, rebootRequestedBy: undefined }]);
  });

  it('refuses a version it cannot read, as the script does', () => {
    const steps = decide({ nodes: [node('br-i-0001')], jobPods: [updatePod('u', 'br-i-0001', '1.20')] });
    assert.deepEqual(ended(steps), {
      phase: 'Failed',
      exitCode: 2,
      message: "invalid input: BOTTLEROCKET_VERSION '1.20' is not X.Y.Z, vX.Y.Z or latest",
    });
  });

  it('a node that is not a Bottlerocket host, or fails every Job, fails the update Job', () => {
    const steps = decide({
      nodes: [node('workers-i-0001', { group: 'workers', osImage: 'os-v1' }), node('br-i-0001')],
      jobPods: [updatePod('a', 'workers-i-0001', '1.20.3'), updatePod('b', 'br-i-0001', '1.20.3')],
      failJobsOnNodes: ['br-i-0001'],
    });
    assert.match(
      ended(steps.filter((s) => s.node === 'workers-i-0001')).message ?? '',
      /^reading settings\.updates\.version-lock failed: no answer from \/run\/api\.sock: sim host workers-i-0001 is not a Bottlerocket host/,
    );
    assert.match(ended(steps.filter((s) => s.node === 'br-i-0001')).message ?? '', /fails every Job/);
    assert.deepEqual(staged(steps), []);
  });

  it('a succeeded update Job leaves osImage as it is until the node reboots', () => {
    const done = updatePod('u', 'br-i-0001', '1.20.3', false, 'Succeeded');
    done.metadata = { ...done.metadata, annotations: { 'drydock.dev/image': '1.20.3' } };
    assert.deepEqual(decide({ nodes: [node('br-i-0001', stagedOn('1.20.3'))], jobPods: [done] }), []);
  });

  it('orders versions by number, a pre-release before its release', () => {
    const sorted = ['1.10.0', '1.9.9', '1.20.3', '1.20.3-rc1', '2.0.0'].sort(compareVersions);
    assert.deepEqual(sorted, ['1.9.9', '1.10.0', '1.20.3-rc1', '1.20.3', '2.0.0']);
  });
});

describe('sim cloud with a Bottlerocket group', () => {
  let dir: string;
  const groups = [
    {
      id: 'br',
      size: 1,
      image: 'bottlerocket-aws-k8s-1.30-x86_64',
      bottlerocket: { version: '1.19.2', variant: 'aws-k8s-1.30', available: REPO },
    },
  ];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'drydock-sim-br-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('registers nodes reporting Bottlerocket, and keeps releases published at run time across a restart', async () => {
    const config = parseSimConfig({ bootDelaySeconds: 0, groups });
    const nodes = new MemoryNodeRegistry();
    const clock = new ManualClock();
    const cloud = await SimCloud.open({ config, store: new FileStateStore(dir), nodes, clock });
    await clock.advance(1);
    await cloud.idle();
    assert.equal(nodes.nodes.get('br-i-0001')?.status?.nodeInfo?.osImage, 'Bottlerocket OS 1.19.2 (aws-k8s-1.30)');
    await cloud.publishBottlerocketRelease('br', '1.21.1');
    await cloud.publishBottlerocketRelease('br', '1.21.1');
    await assert.rejects(cloud.publishBottlerocketRelease('br', 'newest'), /is not a Bottlerocket version/);
    await cloud.close();
    const again = await SimCloud.open({ config, store: new FileStateStore(dir), nodes, clock });
    assert.deepEqual(again.bottlerocketGroups().get('br')?.available, [...REPO, '1.21.1']);
    await again.close();
  });

  it('refuses a release for a group that is not Bottlerocket', async () => {
    const config = parseSimConfig({ groups: [{ id: 'workers', image: 'os-v1' }] });
    const cloud = await SimCloud.open({ config });
    await assert.rejects(cloud.publishBottlerocketRelease('workers', '1.21.1'), /not a Bottlerocket group/);
    assert.equal(cloud.bottlerocketGroups().size, 0);
    await cloud.close();
  });

  it('config: defaults filled in; stderr only on prepareFails, fault nodes of the group only', () => {
    const parsed = parseSimConfig({
      groups: [{ id: 'br', image: 'x', bottlerocket: { version: '1.19.2', variant: 'v' } }],
    });
    assert.deepEqual(parsed.groups[0]?.bottlerocket, { version: '1.19.2', variant: 'v', available: [], faults: [] });
    assert.throws(
      () =>
        parseSimConfig({
          groups: [
            {
              id: 'br',
              image: 'x',
              bottlerocket: {
                version: '1.19.2',
                variant: 'v',
                faults: [
                  { kind: 'noUpdate', stderr: 'x' },
                  { kind: 'bootsOldVersion', nodes: ['workers-i-0001'] },
                ],
              },
            },
          ],
        }),
      (err: unknown) =>
        err instanceof SimConfigError &&
        err.data.problems.map((p) => p.path).join(' ') ===
          '/groups/0/bottlerocket/faults/0/stderr /groups/0/bottlerocket/faults/1/nodes',
    );
    assert.throws(
      () => parseSimConfig({ groups: [{ id: 'br', image: 'x', bottlerocket: { version: 'latest', variant: 'v' } }] }),
      SimConfigError,
    );
  });
});
