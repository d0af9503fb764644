/** The simulated hosts' decisions, from the objects alone: when a Job pod ends and how, in-place images, reboots. */
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { DEFAULT_HOST, type SimHostConfig } from '../../src/cloud/sim/config.js';
import { decideHost, HOST_KEYS } from '../../src/sim-host/decide.js';
import { kwokStages, kwokStagesYaml } from '../../src/sandbox/control-plane/kwok.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const node = (
  name: string,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string>; osImage?: string } = {},
): V1Node => ({
  metadata: { name, labels: extra.labels ?? {}, annotations: extra.annotations ?? {} },
  status: { nodeInfo: { osImage: extra.osImage ?? 'os-v1' } as never },
});
const pod = (
  name: string,
  nodeName: string,
  phase: string,
  annotations: Record<string, string> = {},
  startedSecondsAgo = 10,
  labels: Record<string, string> = {},
): V1Pod => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, annotations, labels },
  spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase, startTime: new Date(T0 - startedSecondsAgo * 1000) },
});
const world = (w: { jobPods?: V1Pod[]; rebootPods?: V1Pod[]; nodes: V1Node[]; config?: Partial<SimHostConfig> }) =>
  decideHost({
    jobPods: w.jobPods ?? [],
    rebootPods: w.rebootPods ?? [],
    nodes: w.nodes,
    config: { ...DEFAULT_HOST, ...w.config },
    now: T0,
  });
const terminated = (s: ReturnType<typeof world>['steps'][number]) =>
  s.kind === 'endPod' ? s.status.containerStatuses?.[0]?.state?.terminated : undefined;

describe('sim hosts', () => {
  it('end a Job pod once its run time passed, with exit code 0 by default', () => {
    const { steps } = world({ nodes: [node('n1')], jobPods: [pod('j', 'n1', 'Running')] });
    assert.equal(steps.length, 1);
    assert.equal(steps[0]?.kind === 'endPod' && steps[0].status.phase, 'Succeeded');
    assert.equal(terminated(steps[0]!)?.exitCode, 0);
  });

  it('wait for the run time from the pod annotation, and say when to look again', () => {
    const d = world({ nodes: [node('n1')], jobPods: [pod('j', 'n1', 'Running', { [HOST_KEYS.runSeconds]: '30' })] });
    assert.deepEqual(d.steps, []);
    assert.equal(d.nextAt, T0 + 20_000);
  });

  it('end with the exit code of the pod annotation', () => {
    const { steps } = world({
      nodes: [node('n1')],
      jobPods: [pod('j', 'n1', 'Running', { [HOST_KEYS.exitCode]: '3' })],
    });
    assert.equal(steps[0]?.kind === 'endPod' && steps[0].status.phase, 'Failed');
    assert.equal(terminated(steps[0]!)?.exitCode, 3);
  });

  it('fail every Job on a node the config names or the label marks', () => {
    const { steps } = world({
      nodes: [node('n1'), node('n2', { labels: { [HOST_KEYS.failJobs]: 'true' } }), node('n3')],
      jobPods: [pod('a', 'n1', 'Running'), pod('b', 'n2', 'Running'), pod('c', 'n3', 'Running')],
      config: { failJobsOnNodes: ['n1'] },
    });
    assert.deepEqual(
      steps.map((s) => [s.node, terminated(s)?.exitCode]),
      [
        ['n1', 1],
        ['n2', 1],
        ['n3', 0],
      ],
    );
    assert.match(terminated(steps[0]!)?.message ?? '', /fails every Job/);
  });

  it('leave pods on nodes it does not own, and pods that ended, alone', () => {
    const { steps } = world({
      nodes: [node('n1')],
      jobPods: [pod('a', 'elsewhere', 'Running'), pod('b', 'n1', 'Failed')],
    });
    assert.deepEqual(steps, []);
  });

  it('put the image of a succeeded in-place update on the node, once', () => {
    const upd = pod('u', 'n1', 'Succeeded', { 'drydock.dev/image': 'os-v2' });
    assert.deepEqual(
      world({ nodes: [node('n1')], jobPods: [upd] }).steps.map((s) => s.kind === 'setOsImage' && s.image),
      ['os-v2'],
    );
    assert.deepEqual(world({ nodes: [node('n1', { osImage: 'os-v2' })], jobPods: [upd] }).steps, []);
  });

  it('take a node down for rebootSeconds when a reboot pod runs on it, once for two pods', () => {
    const r = (name: string) => pod(name, 'n1', 'Running', {}, 0, { 'drydock.dev/step': 'reboot' });
    const d = world({ nodes: [node('n1')], rebootPods: [r('r1'), r('r2')], config: { rebootSeconds: 7 } });
    assert.equal(d.steps.length, 1);
    const s = d.steps[0]!;
    assert.equal(s.kind, 'goDown');
    assert.equal(s.kind === 'goDown' && s.until, T0 + 7000);
    assert.equal(s.kind === 'goDown' && s.conditions[0]?.status, 'False');
    assert.equal(d.nextAt, T0 + 7000);
  });

  it('run a reboot pod behind its bootID guard: one that reaches a node after its reboot reboots nothing', () => {
    const r = pod('r', 'n1', 'Running', { 'drydock.dev/boot-id': 'boot-1' }, 0, { 'drydock.dev/step': 'reboot' });
    const booted = (bootID: string): V1Node => ({ ...node('n1'), status: { nodeInfo: { bootID } as never } });
    assert.deepEqual(
      world({ nodes: [booted('boot-1')], rebootPods: [r] }).steps.map((s) => s.kind),
      ['goDown'],
    );
    const stale = world({ nodes: [booted('boot-2')], rebootPods: [r] }).steps;
    assert.deepEqual(
      stale.map((s) => s.kind === 'endPod' && s.status.phase),
      ['Succeeded'],
    );
    assert.match(
      terminated(stale[0]!)?.message ?? '',
      /not rebooted: the node booted again since boot boot-1 \(now boot-2\)/,
    );
  });

  it('bring a rebooting node back when its time is up, and not before; nothing else runs on it meanwhile', () => {
    const until = (ms: number) => ({ annotations: { [HOST_KEYS.rebootingUntil]: new Date(T0 + ms).toISOString() } });
    const early = world({
      nodes: [node('n1', until(1000))],
      jobPods: [pod('j', 'n1', 'Running')],
      rebootPods: [pod('r', 'n1', 'Running', {}, 0, { 'drydock.dev/step': 'reboot' })],
    });
    assert.deepEqual(early.steps, []);
    assert.equal(early.nextAt, T0 + 1000);
    const late = world({ nodes: [node('n1', until(-1))] });
    assert.deepEqual(
      late.steps.map((s) => [s.kind, s.node]),
      [['comeBack', 'n1']],
    );
  });
});

describe('KWOK stages for a host player', () => {
  it('leave out only the stage that completes Job pods', () => {
    const names = (yaml: string) => [...yaml.matchAll(/^ {2}name: (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(names(kwokStages('kwok')), names(kwokStagesYaml()));
    assert.deepEqual(
      names(kwokStages('host')),
      names(kwokStagesYaml()).filter((n) => n !== 'pod-complete'),
    );
    assert.ok(names(kwokStagesYaml()).includes('pod-complete'));
  });
});
