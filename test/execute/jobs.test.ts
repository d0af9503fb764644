/** The pure builders of what drydock runs on nodes: names, labels, Jobs, reboot pods, gate Jobs, outcomes. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { V1ContainerStateTerminated, V1Job, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { nodeOpJobSpec } from '../../src/plan/nodeop/job-spec.js';
import { bottlerocketUpdateJobFor, rebootPodFor } from '../../src/execute/job-actions.js';
import {
  gateJob,
  jobOutcome,
  labelValue,
  nodeJob,
  nodeJobName,
  objectName,
  rebootPod,
  rebootPodName,
  type OperationRef,
} from '../../src/execute/jobs/index.js';

const op: OperationRef = { kind: 'NodeOp', name: 'firmware', revision: '0123456789abcdef' };
const worker = { name: 'workers-i-0001', taints: [] };
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

describe('names of node jobs', () => {
  it('are readable when operation, node and revision fit in 63 characters', () => {
    assert.equal(nodeJobName(op, 'workers-i-0001'), 'nodeop-firmware-workers-i-0001-0123456789abcdef');
  });

  it('are cut and hashed when too long, stay valid DNS labels, and differ per node and revision', () => {
    const long = 'a-very-long-node-name-from-a-cloud-provider-that-goes-on.and.on.example.internal';
    const a = nodeJobName(op, long);
    const b = nodeJobName(op, `${long}x`);
    const c = nodeJobName({ ...op, revision: 'fedcba9876543210' }, long);
    for (const n of [a, b, c]) {
      assert.ok(n.length <= 63, `${n} is ${n.length} long`);
      assert.match(n, DNS_LABEL);
    }
    assert.equal(new Set([a, b, c]).size, 3);
    assert.equal(nodeJobName(op, long), a, 'the same input gives the same name');
  });

  it('hash names that had to be altered, so two inputs cannot meet in one name', () => {
    assert.notEqual(objectName(['a', 'B']), objectName(['a', 'b']));
    assert.match(objectName(['a', 'B']), /^a-b-[0-9a-f]{10}$/);
    assert.match(objectName(['---']), /^x-[0-9a-f]{10}$/);
  });

  it('make label values of anything, keeping valid ones as they are', () => {
    assert.equal(labelValue('workers-i-0001'), 'workers-i-0001');
    const v = labelValue(`NodeOp.${'x'.repeat(80)}`);
    assert.ok(v.length <= 63);
    assert.match(v, /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
    assert.notEqual(labelValue('a/b'), labelValue('a_b'));
  });
});

describe('the Job on a node', () => {
  const job = nodeJob({
    operation: op,
    node: {
      name: 'cp-i-0001',
      taints: [
        { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
        { key: 'dedicated', value: 'db', effect: 'NoExecute' },
      ],
    },
    namespace: 'drydock-system',
    job: {
      image: 'busybox:1.36',
      command: ['sh', '-c', 'echo hi'],
      imagePullSecrets: ['regcred'],
      backoffLimit: 2,
      privileged: true,
      env: { B: '2', A: '1' },
    },
  });
  const pod = job.spec?.template.spec;
  const container = pod?.containers[0];

  it("is pinned to its node and tolerates the cordon and the node's taints", () => {
    assert.equal(pod?.nodeName, 'cp-i-0001');
    assert.deepEqual(pod?.tolerations, [
      { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' },
    ]);
  });

  it("mounts the host root at /host by default and runs the spec's image, command, secrets, retries and privilege", () => {
    assert.deepEqual(pod?.volumes, [{ name: 'host-root', hostPath: { path: '/' } }]);
    assert.deepEqual(container?.volumeMounts, [{ name: 'host-root', mountPath: '/host' }]);
    assert.equal(container?.image, 'busybox:1.36');
    assert.deepEqual(container?.command, ['sh', '-c', 'echo hi']);
    assert.deepEqual(pod?.imagePullSecrets, [{ name: 'regcred' }]);
    assert.equal(job.spec?.backoffLimit, 2);
    assert.equal(container?.securityContext?.privileged, true);
    assert.deepEqual(container?.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
      { name: 'HOST_DIR', value: '/host' },
    ]);
    assert.equal(pod?.restartPolicy, 'Never');
    assert.equal(job.spec?.ttlSecondsAfterFinished, undefined, 'the Job must outlive its outcome being recorded');
  });

  it('mounts the host where hostMountPath says and runs unprivileged when asked', () => {
    const j = nodeJob({
      operation: op,
      node: worker,
      namespace: 'ns',
      job: {
        image: 'i',
        command: ['c'],
        imagePullSecrets: [],
        backoffLimit: 0,
        privileged: false,
        hostMountPath: '/rootfs',
      },
    });
    const c = j.spec?.template.spec?.containers[0];
    assert.deepEqual(c?.volumeMounts, [{ name: 'host-root', mountPath: '/rootfs' }]);
    assert.deepEqual(c?.env, [{ name: 'HOST_DIR', value: '/rootfs' }]);
    assert.equal(c?.securityContext?.privileged, false);
    assert.equal(j.spec?.template.spec?.imagePullSecrets, undefined);
  });

  it('names operation, revision, node and step in labels on the Job and its pods, exactly in annotations', () => {
    const labels = {
      'app.kubernetes.io/managed-by': 'drydock',
      'drydock.dev/operation': 'NodeOp.firmware',
      'drydock.dev/revision': '0123456789abcdef',
      'drydock.dev/node': 'cp-i-0001',
      'drydock.dev/step': 'operation',
    };
    assert.deepEqual(job.metadata?.labels, labels);
    assert.deepEqual(job.spec?.template.metadata?.labels, labels);
    assert.deepEqual(job.metadata?.annotations, {
      'drydock.dev/operation': 'NodeOp/firmware@0123456789abcdef',
      'drydock.dev/node': 'cp-i-0001',
    });
    assert.equal(job.metadata?.name, 'nodeop-firmware-cp-i-0001-0123456789abcdef');
    assert.equal(job.metadata?.namespace, 'drydock-system');
  });

  it('marks the image an in-place update applies on its pod', () => {
    const j = nodeJob({
      operation: { kind: 'NodeImage', name: 'edge', revision: 'r1' },
      node: worker,
      namespace: 'ns',
      appliesImage: 'os:v2',
      job: { image: 'os:v2', command: ['upgrade'], imagePullSecrets: [], backoffLimit: 1, privileged: true },
    });
    assert.equal(j.spec?.template.metadata?.annotations?.['drydock.dev/image'], 'os:v2');
    assert.equal(j.metadata?.annotations?.['drydock.dev/image'], undefined);
  });
});

describe("a NodeOp's job fields", () => {
  it("run privileged with the NodeOp's image, command, secrets, retries and host mount", () => {
    const spec = nodeOpJobSpec({
      image: 'busybox:latest',
      command: ['sh', '-c', 'x'],
      imagePullSecrets: ['r'],
      backoffLimit: 6,
      hostMountPath: '/h',
    });
    assert.deepEqual(spec, {
      image: 'busybox:latest',
      command: ['sh', '-c', 'x'],
      imagePullSecrets: ['r'],
      backoffLimit: 6,
      privileged: true,
      hostMountPath: '/h',
    });
  });
});

describe('the reboot pod', () => {
  const pod = rebootPod({
    operation: op,
    node: worker,
    bootID: 'b00710aa-1111-2222-3333-444455556666',
    namespace: 'drydock-system',
    image: 'alpine:3',
  });

  it('is privileged, in the host PID namespace, pinned, never restarted, with the configured image', () => {
    assert.equal(pod.spec?.hostPID, true);
    assert.equal(pod.spec?.nodeName, 'workers-i-0001');
    assert.equal(pod.spec?.restartPolicy, 'Never');
    assert.equal(pod.spec?.containers[0]?.securityContext?.privileged, true);
    assert.equal(pod.spec?.containers[0]?.image, 'alpine:3');
    assert.deepEqual(pod.spec?.tolerations, [
      { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
      // The reboot itself makes the node NotReady: the pod must not be evicted for it.
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    ]);
  });

  it('is named by node and recorded bootID, so one boot gets one reboot', () => {
    assert.equal(pod.metadata?.name, 'reboot-workers-i-0001-b00710aa');
    assert.equal(pod.metadata?.labels?.['drydock.dev/step'], 'reboot');
    assert.equal(pod.metadata?.annotations?.['drydock.dev/boot-id'], 'b00710aa-1111-2222-3333-444455556666');
    assert.notEqual(rebootPodName('workers-i-0001', 'c0ffee00-0000'), pod.metadata?.name);
  });

  /** Runs the pod's exact command and environment here, with its reboot swapped for an echo. */
  const runGuard = (bootID: string): { status: number | null; stdout: string } => {
    const p = rebootPod({ operation: op, node: worker, bootID, namespace: 'drydock-system' });
    const c = p.spec?.containers[0];
    const command = c?.command ?? [];
    const at = command.indexOf('reboot-guard');
    assert.ok(at > 0, `the reboot runs behind the guard: ${command.join(' ')}`);
    assert.deepEqual(command.slice(at + 1), ['nsenter', '-i', '-m', '-t', '1', '--', 'reboot']);
    const env = Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value ?? '']));
    const [bin, ...args] = [...command.slice(0, at + 1), 'echo', 'REBOOTING'];
    const r = spawnSync(bin ?? '', args, { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout };
  };

  it('reboots only the boot it recorded: the same bootID reboots, a newer boot is left alone', () => {
    const booted = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    assert.deepEqual(runGuard(booted), { status: 0, stdout: 'REBOOTING\n' });
    const stale = runGuard('00000000-0000-0000-0000-000000000000');
    assert.equal(stale.status, 0, 'a stale pod succeeds: nothing is left to do');
    assert.equal(
      stale.stdout,
      `not rebooted: the node booted again since boot 00000000-0000-0000-0000-000000000000 (now ${booted})\n`,
    );
  });
});

describe('the gate Job', () => {
  const template = {
    name: 'storage-precheck',
    namespace: 'kube-system',
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { app: 'precheck' } },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'check',
              image: 'busybox:1.36',
              command: ['sh', '-c', 'echo $NODE_NAME'],
              env: [
                { name: 'NODE_NAME', value: 'stale' },
                { name: 'KEEP', value: 'x' },
              ],
            },
          ],
        },
      },
    },
  };
  const input = {
    operation: { kind: 'NodeImage', name: 'worker', revision: 'r7' } as const,
    gate: 'storage-healthy',
    step: 'before' as const,
    index: 0,
    template,
    node: 'workers-i-0002',
    replacement: 'workers-i-0009',
    defaultNamespace: 'drydock-system',
  };
  const job = gateJob(input);
  const c = job.spec?.template.spec?.containers[0];

  it("keeps the user's JobSpec and namespace, and puts node, replacement and operation in the environment", () => {
    assert.equal(job.metadata?.namespace, 'kube-system');
    assert.equal(job.spec?.backoffLimit, 0);
    assert.equal(c?.image, 'busybox:1.36');
    assert.deepEqual(c?.env, [
      { name: 'KEEP', value: 'x' },
      { name: 'NODE_NAME', value: 'workers-i-0002' },
      { name: 'REPLACEMENT_NODE_NAME', value: 'workers-i-0009' },
      { name: 'DRYDOCK_OPERATION', value: 'NodeImage/worker@r7' },
    ]);
    assert.equal(job.spec?.template.spec?.nodeName, undefined, 'a gate is not pinned to the node');
    assert.equal(template.spec.template.spec.containers[0]?.env.length, 2, 'the template is not changed');
  });

  it("carries drydock's labels beside the user's, and a name per node, step and position", () => {
    assert.equal(job.spec?.template.metadata?.labels?.['app'], 'precheck');
    assert.equal(job.spec?.template.metadata?.labels?.['drydock.dev/step'], 'before');
    assert.equal(job.metadata?.labels?.['drydock.dev/node'], 'workers-i-0002');
    const names = new Set(
      [
        job,
        gateJob({ ...input, index: 1 }),
        gateJob({ ...input, step: 'after' }),
        gateJob({ ...input, node: 'workers-i-0003' }),
      ].map((j) => j.metadata?.name),
    );
    assert.equal(names.size, 4);
    for (const n of names) assert.ok(n !== undefined && n.length <= 63 && DNS_LABEL.test(n), String(n));
    assert.equal(gateJob(input).metadata?.name, job.metadata?.name);
  });

  it('uses the default namespace when the template names none', () => {
    assert.equal(gateJob({ ...input, template: { spec: template.spec } }).metadata?.namespace, 'drydock-system');
  });

  // A MutexRule's Jobs get the rule's name as MUTEX_RULE, as the mutex operator sets it beside
  // NODE_NAME; an UpgradeGate's do not, and the rule's value wins over the template's.
  const mutexCases: { name: string; mutexRule?: string; env?: { name: string; value: string }[]; want?: string }[] = [
    { name: 'an UpgradeGate: no MUTEX_RULE' },
    { name: 'a MutexRule: its name', mutexRule: 'backup', want: 'backup' },
    {
      name: "a MutexRule whose template sets MUTEX_RULE: the rule's name",
      mutexRule: 'backup',
      env: [{ name: 'MUTEX_RULE', value: 'stale' }],
      want: 'backup',
    },
  ];
  for (const m of mutexCases)
    it(`MUTEX_RULE in every container: ${m.name}`, () => {
      const spec = structuredClone(template.spec);
      const [first] = spec.template.spec.containers;
      assert.ok(first);
      if (m.env !== undefined) first.env = [...first.env, ...m.env];
      spec.template.spec.containers.push({ ...first, name: 'second' });
      const j = gateJob({
        ...input,
        template: { ...template, spec },
        ...(m.mutexRule !== undefined ? { mutexRule: m.mutexRule } : {}),
      });
      for (const container of j.spec?.template.spec?.containers ?? []) {
        const values = (container.env ?? []).filter((e) => e.name === 'MUTEX_RULE').map((e) => e.value);
        assert.deepEqual(values, m.want !== undefined ? [m.want] : [], container.name);
      }
      assert.equal(j.spec?.template.spec?.containers.length, 2);
    });
});

/** A Job pod's status with its one container ended as `terminated` says. */
const endedStatus = (terminated: V1ContainerStateTerminated, phase?: string): V1PodStatus => ({
  ...(phase !== undefined ? { phase } : {}),
  containerStatuses: [
    { name: 'operation', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated } },
  ],
});

describe("a Job's outcome", () => {
  const t = (s: string): Date => new Date(`2026-01-01T00:00:${s}Z`);
  const pod = (name: string, at: string, exitCode: number, message?: string): V1Pod => ({
    metadata: { name, creationTimestamp: t(at) },
    status: endedStatus({
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      ...(message !== undefined ? { message } : {}),
    }),
  });

  it('is running while no condition is set', () => {
    assert.deepEqual(jobOutcome({ status: { active: 1 } }, []), { state: 'running', attempts: 0 });
  });

  it("is failed after the retries, with the reason and the last pod's message", () => {
    const job: V1Job = {
      status: {
        failed: 3,
        conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: t('30') }],
      },
    };
    const out = jobOutcome(job, [
      pod('p-b', '20', 2, 'disk full\n'),
      pod('p-a', '10', 1, 'first try'),
      pod('p-c', '05', 1, 'old'),
    ]);
    assert.deepEqual(out, {
      state: 'failed',
      attempts: 3,
      reason: 'BackoffLimitExceeded',
      lastPod: { name: 'p-b', exitCode: 2, reason: 'Error', message: 'disk full' },
      finishedAt: '2026-01-01T00:00:30.000Z',
    });
  });

  it('is succeeded when Complete, and cuts a long message', () => {
    const job: V1Job = {
      status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: t('40') }] },
    };
    const out = jobOutcome(job, [pod('p', '01', 0, 'x'.repeat(5000))]);
    assert.equal(out.state, 'succeeded');
    assert.equal(out.attempts, 1);
    assert.equal(out.lastPod?.message?.length, 1025);
  });

  // Kubernetes 1.31 and later: the decided outcome first, the final condition once the pods are counted.
  const decided = (type: string, status: V1Job['status'] = {}): V1Job => ({
    status: {
      terminating: 0,
      uncountedTerminatedPods: type === 'SuccessCriteriaMet' ? { succeeded: ['uid-1'] } : { failed: ['uid-1'] },
      ...status,
      conditions: [{ type, status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: t('50') }],
    },
  });

  it('is succeeded at SuccessCriteriaMet once no pod runs, counting the pod not yet moved to succeeded', () => {
    const out = jobOutcome(decided('SuccessCriteriaMet'), [pod('p', '01', 0, 'patched')]);
    assert.deepEqual(out, {
      state: 'succeeded',
      attempts: 1,
      lastPod: { name: 'p', exitCode: 0, reason: 'Completed', message: 'patched' },
      finishedAt: '2026-01-01T00:00:50.000Z',
    });
  });

  it('is failed at FailureTarget once no pod runs or terminates, with its reason', () => {
    const out = jobOutcome(decided('FailureTarget'), []);
    assert.deepEqual(out, {
      state: 'failed',
      attempts: 1,
      reason: 'BackoffLimitExceeded',
      finishedAt: '2026-01-01T00:00:50.000Z',
    });
  });

  it('is still running while a decided Job has a pod active or terminating, or does not report terminating pods', () => {
    assert.equal(jobOutcome(decided('FailureTarget', { terminating: 1 }), []).state, 'running');
    assert.equal(jobOutcome(decided('FailureTarget', { active: 1 }), []).state, 'running');
    assert.equal(jobOutcome(decided('SuccessCriteriaMet', { active: 1 }), []).state, 'running');
    const { terminating: _unreported, ...older } = decided('SuccessCriteriaMet').status ?? {};
    assert.equal(jobOutcome({ status: older }, []).state, 'running');
  });
});

describe("a Job of one completion, read from its pod before the Job controller's batched sync", () => {
  const ended = '2026-01-01T00:00:07.000Z';
  const jobPod = (phase: string, uid = 'job-uid'): V1Pod => ({
    metadata: { name: 'p', labels: { 'batch.kubernetes.io/controller-uid': uid } },
    status: endedStatus(
      { exitCode: phase === 'Succeeded' ? 0 : 1, finishedAt: new Date(ended), message: 'patched' },
      phase,
    ),
  });
  // As the Job controller leaves it until its next sync: the pod counted nowhere yet.
  const job = (spec: Partial<NonNullable<V1Job['spec']>> = {}): V1Job => ({
    metadata: { name: 'op', uid: 'job-uid' },
    spec: { template: {}, ...spec },
    status: { active: 1 },
  });

  it('is succeeded once its pod succeeded, at the instant the pod ended, counting that pod', () => {
    assert.deepEqual(jobOutcome(job(), [jobPod('Succeeded')]), {
      state: 'succeeded',
      attempts: 1,
      lastPod: { name: 'p', exitCode: 0, message: 'patched' },
      finishedAt: ended,
      // The Job does not show it yet: it is kept until it does.
      fromPod: true,
    });
    assert.equal(jobOutcome(job({ completions: 1, parallelism: 1 }), [jobPod('Succeeded')]).state, 'succeeded');
  });

  it('is still running while its pod runs, or failed (the Job may try again)', () => {
    assert.equal(jobOutcome(job(), [jobPod('Running')]).state, 'running');
    assert.equal(jobOutcome(job(), [jobPod('Failed')]).state, 'running');
  });

  it('reads no pod of a Job that wants more than one, of a suspended Job, or of an earlier Job of the same name', () => {
    assert.equal(jobOutcome(job({ completions: 3 }), [jobPod('Succeeded')]).state, 'running');
    assert.equal(jobOutcome(job({ parallelism: 2 }), [jobPod('Succeeded')]).state, 'running');
    assert.equal(jobOutcome(job({ completionMode: 'Indexed' }), [jobPod('Succeeded')]).state, 'running');
    assert.equal(jobOutcome(job({ suspend: true }), [jobPod('Succeeded')]).state, 'running');
    assert.equal(jobOutcome(job(), [jobPod('Succeeded', 'an-earlier-uid')]).state, 'running');
  });

  it('a Job the controller decided failed stays failed, whatever its pod says', () => {
    const failing: V1Job = {
      ...job(),
      status: {
        terminating: 0,
        conditions: [
          { type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded', lastTransitionTime: new Date(ended) },
        ],
      },
    };
    assert.equal(jobOutcome(failing, [jobPod('Succeeded')]).state, 'failed');
  });
});

describe('the images of the pods and Jobs the actions build', () => {
  const base = {
    spec: { kind: 'NodeImage' as const, name: 'br' },
    reason: 'r',
    node: 'w-0',
    namespace: 'drydock-system',
  };
  const operation: OperationRef = { kind: 'NodeImage', name: 'br', revision: 'b1' };
  const reboot = { ...base, kind: 'createRebootPod' as const, operation, bootID: 'b-1', taints: [] };
  const update = { ...base, kind: 'createBottlerocketUpdateJob' as const, operation, version: '1.20.3', taints: [] };
  const podImages = (p: V1Pod): string[] => (p.spec?.containers ?? []).map((c) => c.image ?? '');
  const jobImages = (j: V1Job): string[] => (j.spec?.template.spec?.containers ?? []).map((c) => c.image ?? '');

  it('are the ones the planned action names', () => {
    assert.deepEqual(podImages(rebootPodFor({ ...reboot, image: 'mirror.example/busybox:1.37' })), [
      'mirror.example/busybox:1.37',
    ]);
    const api = rebootPodFor({ ...reboot, method: 'bottlerocketApi', image: 'mirror.example/curl:8.11.0' });
    assert.deepEqual(podImages(api), ['mirror.example/curl:8.11.0']);
    assert.equal(api.spec?.hostPID, false);
    assert.deepEqual(jobImages(bottlerocketUpdateJobFor({ ...update, image: 'mirror.example/curl:8.11.0' })), [
      'mirror.example/curl:8.11.0',
    ]);
  });

  it("are drydock's defaults when the action names none", () => {
    assert.deepEqual(podImages(rebootPodFor(reboot)), ['busybox:1.36']);
    assert.deepEqual(podImages(rebootPodFor({ ...reboot, method: 'bottlerocketApi' })), ['curlimages/curl:8.10.1']);
    assert.deepEqual(jobImages(bottlerocketUpdateJobFor(update)), ['curlimages/curl:8.10.1']);
  });
});
