/**
 * The hosts under a simulated cluster's nodes, as node operations see them. What a host does is
 * decided by the simulator's own host (decideHost, and restartedStatus for the pods of a host
 * that comes back), over the objects the executor would create (nodeJobFor, gateJobFor,
 * rebootPodFor): a Job's pod ends after its run time, failing on a host labelled to fail every
 * Job; a running reboot pod takes its node NotReady, and the node comes back with a new bootID,
 * the reboot pod Succeeded and the Job pods on it ended. A test that agreed with a copy of those
 * rules could miss the simulator changing them.
 *
 * Played here, as the cluster would: the API server (a create of an object that exists is a
 * no-op; deleting a Job deletes its pods), the Job controller (a pod per attempt until one
 * succeeds or backoffLimit + 1 failed), the kubelet starting a reboot pod a moment after it is
 * created, and the randomness: each Job's run time and each reboot's length are drawn from the
 * seeded generator. What the API server would see is counted: Jobs created per name, reboots
 * and operation Job successes per node. The NodeOp world and the mixed sequence world both run
 * their node operations here.
 */
import type { V1Job, V1Node, V1NodeSystemInfo, V1Pod } from '@kubernetes/client-node';
import { DEFAULT_HOST, type SimHostConfig } from '../../../src/cloud/sim/config.js';
import { decideHost, HOST_KEYS, type HostStep } from '../../../src/sim-host/decide.js';
import { restartedStatus } from '../../../src/sim-host/host.js';
import type { SeededRandom } from '../../../src/cloud/sim/random.js';
import { gateJobFor, nodeJobFor, rebootPodFor } from '../../../src/execute/job-actions.js';
import { JOB_LABELS, JOB_NAME_LABEL, jobOutcome, type JobState } from '../../../src/execute/jobs/index.js';
import { toObservedJob, toObservedPod } from '../../../src/observe/convert.js';
import type { ObservedJob, ObservedPod } from '../../../src/observe/types.js';
import type { Action } from '../../../src/plan/types.js';

export const NS = 'drydock-system';

/** The world's clock: its time in ms, and a way to run something later. */
export interface HostClock {
  now(): number;
  at(delayMs: number, run: () => void): void;
}

/** A Job on a host: the Job the executor built, with the Job controller's status, and its pods. */
export interface HostJob {
  readonly name: string;
  /** The node the Job is for (its drydock node label); its pods run there. */
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly job: V1Job;
  /** One pod per attempt, the last one the current. */
  readonly pods: V1Pod[];
  /** Seconds each of its pods runs (its sim.drydock.dev/run-seconds). */
  readonly runSeconds: number;
}

export interface HostTiming {
  /** Seconds a node Job's pod runs, and a gate Job's: [min, max]. */
  readonly job: readonly [number, number];
  readonly gateJob: readonly [number, number];
  /** Seconds from the reboot pod's creation to its start, and how long the host is then down. */
  readonly rebootStart: readonly [number, number];
  readonly down: readonly [number, number];
}

export const HOST_TIMING: HostTiming = { job: [5, 60], gateJob: [2, 30], rebootStart: [1, 5], down: [20, 120] };

type HostAction = Extract<
  Action,
  { kind: 'createNodeJob' | 'createGateJob' | 'createRebootPod' | 'deleteJob' | 'deleteRebootPod' }
>;

export function isHostAction(a: Action): a is HostAction {
  return (
    a.kind === 'createNodeJob' ||
    a.kind === 'createGateJob' ||
    a.kind === 'createRebootPod' ||
    a.kind === 'deleteJob' ||
    a.kind === 'deleteRebootPod'
  );
}

/** Where a Job stands, as the executor reads it (running, succeeded or failed). */
export function jobState(j: HostJob): JobState {
  return jobOutcome(j.job, j.pods).state;
}

/** What a host's kubelet reports of itself: only the boot and the image matter here. */
function nodeInfo(bootID: string, osImage = ''): V1NodeSystemInfo {
  return {
    architecture: 'amd64',
    bootID,
    containerRuntimeVersion: '',
    kernelVersion: '',
    kubeProxyVersion: '',
    kubeletVersion: '',
    machineID: '',
    operatingSystem: 'linux',
    osImage,
    systemUUID: '',
  };
}

/** A Job's backoffLimit as the Job controller reads it (6 when the Job does not say). */
function backoffLimit(job: V1Job): number {
  return job.spec?.backoffLimit ?? 6;
}

export class NodeHosts {
  readonly jobs = new Map<string, HostJob>();
  readonly rebootPods = new Map<string, V1Pod>();
  /** What the API server saw: creations per Job name, reboots and operation Job successes per node. */
  readonly jobCreates = new Map<string, number>();
  readonly reboots = new Map<string, number>();
  readonly successes = new Map<string, number>();
  /** Told when a host goes down for its reboot, and when it is back (its pods restart then). */
  onReboot: (node: string, up: boolean) => void = () => undefined;
  private readonly hosts = new Map<string, V1Node>();
  /** Per host, how long its next reboot lasts: drawn when the reboot pod starts. */
  private readonly downSeconds = new Map<string, number>();
  /** Instants a wake-up is already set for. */
  private readonly wakes = new Set<number>();
  private bootCount = 0;
  private uids = 0;

  constructor(
    private readonly random: SeededRandom,
    private readonly clock: HostClock,
    /** Whether the host under this node fails every Job pod (the sim host's fail-jobs label), asked once per host. */
    private readonly failsJobs: (node: string) => boolean,
    /** Where a broken rule is written down (shared with the world's own checks). */
    readonly violations: string[] = [],
    private readonly timing: HostTiming = HOST_TIMING,
  ) {}

  /** The host's Node as the simulator's host reads it; made on first use. */
  private host(node: string): V1Node {
    let h = this.hosts.get(node);
    if (h === undefined) {
      h = {
        metadata: {
          name: node,
          labels: this.failsJobs(node) ? { [HOST_KEYS.failJobs]: 'true' } : {},
          annotations: {},
        },
        status: { nodeInfo: nodeInfo(this.newBootID()) },
      };
      this.hosts.set(node, h);
    }
    return h;
  }

  /** A bootID as the kubelet reports it: unique in its first eight characters (reboot pods are named by them). */
  private newBootID(): string {
    return `${(++this.bootCount).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  }

  private uid(): string {
    return `uid-${++this.uids}`;
  }

  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Gives the node its first boot now, so bootIDs follow the order nodes were added in. */
  addHost(node: string): void {
    this.host(node);
  }

  bootID(node: string): string {
    return this.host(node).status?.nodeInfo?.bootID ?? '';
  }

  private readyCondition(node: string): { status: string; lastTransitionTime?: Date } | undefined {
    return this.host(node).status?.conditions?.find((c) => c.type === 'Ready');
  }

  isUp(node: string): boolean {
    return this.readyCondition(node)?.status !== 'False';
  }

  /** When the host last came up (-Infinity if it never rebooted). */
  upSince(node: string): number {
    const ready = this.readyCondition(node);
    return ready?.lastTransitionTime === undefined ? -Infinity : new Date(ready.lastTransitionTime).getTime();
  }

  /** Whether a Job runs for the node now, or its reboot is under way (started, not back yet). */
  busy(node: string): string | undefined {
    for (const j of this.jobs.values()) if (j.node === node && jobState(j) === 'running') return `Job ${j.name} runs`;
    if (this.hosts.has(node) && !this.isUp(node)) return 'it is rebooting';
    return undefined;
  }

  jobsObserved(): ObservedJob[] {
    return [...this.jobs.values()].map((j) => toObservedJob(j.job, j.pods));
  }

  podsObserved(): ObservedPod[] {
    return [...this.rebootPods.values()].map((p) => toObservedPod(p, []));
  }

  /** Applies a Job or reboot action as the executor would; returns whether anything changed. */
  apply(a: HostAction): boolean {
    const changed = this.applyAction(a);
    this.settle();
    return changed;
  }

  private applyAction(a: HostAction): boolean {
    switch (a.kind) {
      case 'createNodeJob':
        return this.createJob(nodeJobFor(a), a.node, this.timing.job);
      case 'createGateJob':
        return this.createJob(gateJobFor(a), a.node, this.timing.gateJob);
      case 'createRebootPod':
        return this.createRebootPod(a);
      case 'deleteJob': {
        const j = this.jobs.get(a.name);
        if (j === undefined) return false;
        if (jobState(j) === 'running') {
          // The executor leaves a running Job alone (deleteFinishedJob); the planner must not ask.
          this.violations.push(`t=${this.clock.now()}: deleteJob of running Job ${a.name}`);
          return false;
        }
        return this.jobs.delete(a.name);
      }
      case 'deleteRebootPod':
        return this.rebootPods.delete(a.name);
    }
  }

  /** Creates the Job unless one of its name exists (AlreadyExists: the executor skips), and its first pod. */
  private createJob(job: V1Job, node: string, runSeconds: readonly [number, number]): boolean {
    const name = job.metadata?.name ?? '';
    if (this.jobs.has(name)) return false;
    const creates = (this.jobCreates.get(name) ?? 0) + 1;
    this.jobCreates.set(name, creates);
    if (creates > 1) this.violations.push(`t=${this.clock.now()}: Job ${name} created a second time`);
    const j: HostJob = {
      name,
      node,
      labels: job.metadata?.labels ?? {},
      job: { ...job, status: {} },
      pods: [],
      runSeconds: this.random.int(...runSeconds),
    };
    this.jobs.set(name, j);
    this.startPod(j);
    return true;
  }

  /**
   * The Job controller starts an attempt: a pod from the Job's template, with the Job's run
   * time. A gate Job's template names no node; the scheduler puts its pod on the node it is for.
   */
  private startPod(j: HostJob): void {
    const template = j.job.spec?.template;
    const now = new Date(this.clock.now());
    j.pods.push({
      metadata: {
        name: `${j.name}-${j.pods.length}`,
        namespace: j.job.metadata?.namespace ?? NS,
        uid: this.uid(),
        creationTimestamp: now,
        labels: { ...template?.metadata?.labels, [JOB_NAME_LABEL]: j.name },
        annotations: { ...template?.metadata?.annotations, [HOST_KEYS.runSeconds]: String(j.runSeconds) },
      },
      spec: { ...template?.spec, containers: template?.spec?.containers ?? [], nodeName: j.node },
      status: { phase: 'Running', startTime: now },
    });
  }

  /**
   * The Job controller reads a pod that ended: the Job succeeds, fails past its backoffLimit, or
   * tries again. As since Kubernetes 1.31, a decided Job first gets SuccessCriteriaMet or
   * FailureTarget with the pod not yet counted (uncountedTerminatedPods), and Complete or Failed
   * once its finalizer is removed, a sync later (up to the controller's 1 s batch).
   */
  private podEnded(j: HostJob): void {
    const status = (j.job.status ??= {});
    const pod = j.pods.at(-1);
    const phase = pod?.status?.phase;
    const at = new Date(this.clock.now());
    const uid = pod?.metadata?.uid ?? '';
    if (phase === 'Succeeded') {
      status.terminating = 0;
      status.uncountedTerminatedPods = { succeeded: [uid] };
      status.conditions = [{ type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: at }];
      if (j.labels[JOB_LABELS.step] === 'operation') this.successes.set(j.node, (this.successes.get(j.node) ?? 0) + 1);
      this.counted(j, () => {
        status.succeeded = 1;
        status.completionTime = at;
        status.conditions = [
          ...(status.conditions ?? []),
          { type: 'Complete', status: 'True', lastTransitionTime: at },
        ];
      });
    } else if (phase === 'Failed') {
      if ((status.failed ?? 0) + 1 > backoffLimit(j.job)) {
        const reason = 'BackoffLimitExceeded';
        status.terminating = 0;
        status.uncountedTerminatedPods = { failed: [uid] };
        status.conditions = [{ type: 'FailureTarget', status: 'True', reason, lastTransitionTime: at }];
        this.counted(j, () => {
          status.failed = (status.failed ?? 0) + 1;
          status.conditions = [
            ...(status.conditions ?? []),
            { type: 'Failed', status: 'True', reason, lastTransitionTime: at },
          ];
        });
      } else {
        status.failed = (status.failed ?? 0) + 1;
        this.startPod(j);
      }
    }
  }

  /** The pod counted a second later, unless the Job was deleted meanwhile. */
  private counted(j: HostJob, count: () => void): void {
    this.clock.at(1000, () => {
      if (this.jobs.get(j.name) !== j) return;
      delete j.job.status?.uncountedTerminatedPods;
      count();
    });
  }

  private createRebootPod(a: Extract<Action, { kind: 'createRebootPod' }>): boolean {
    const pod = rebootPodFor(a);
    const name = pod.metadata?.name ?? '';
    if (this.rebootPods.has(name)) return false;
    pod.metadata = { ...pod.metadata, uid: this.uid(), creationTimestamp: new Date(this.clock.now()) };
    pod.status = { phase: 'Pending' };
    this.rebootPods.set(name, pod);
    // The kubelet starts it a moment later, unless it was deleted meanwhile.
    this.clock.at(this.random.int(...this.timing.rebootStart) * 1000, () => {
      if (this.rebootPods.get(name) !== pod || pod.status?.phase !== 'Pending') return;
      pod.status = { phase: 'Running', startTime: new Date(this.clock.now()) };
      this.downSeconds.set(a.node, this.random.int(...this.timing.down));
      this.settle();
    });
    return true;
  }

  /** The simulator's host decides and its steps are applied, per host, until nothing is left to do now. */
  private settle(): void {
    for (let round = 0; ; round++) {
      if (round > 20) throw new Error('the simulated hosts keep deciding new steps at one instant');
      let steps = 0;
      for (const node of [...this.hosts.keys()].sort()) steps += this.decide(node);
      if (steps === 0) return;
    }
  }

  /** One host's decision (each host its own machine, with its own reboot length); returns the steps applied. */
  private decide(node: string): number {
    const config: SimHostConfig = {
      ...DEFAULT_HOST,
      rebootSeconds: this.downSeconds.get(node) ?? this.timing.down[0],
    };
    const onNode = (p: V1Pod): boolean => p.spec?.nodeName === node;
    const { steps, nextAt } = decideHost({
      jobPods: [...this.jobs.values()].flatMap((j) => j.pods).filter(onNode),
      rebootPods: [...this.rebootPods.values()].filter(onNode),
      nodes: [this.host(node)],
      config,
      now: this.clock.now(),
    });
    for (const step of steps) this.applyStep(step);
    if (nextAt !== undefined) this.wake(nextAt);
    return steps.length;
  }

  private wake(at: number): void {
    if (this.wakes.has(at)) return;
    this.wakes.add(at);
    this.clock.at(at - this.clock.now(), () => {
      this.wakes.delete(at);
      this.settle();
    });
  }

  /** A host step, as the simulator's host writes it to the API (host.ts applyStep). */
  private applyStep(step: HostStep): void {
    const h = this.host(step.node);
    switch (step.kind) {
      case 'endPod':
        for (const j of this.jobs.values()) {
          const pod = j.pods.find((p) => p.metadata?.name === step.pod);
          if (pod === undefined) continue;
          pod.status = { ...pod.status, ...step.status };
          this.podEnded(j);
        }
        return;
      case 'setOsImage':
        h.status = { ...h.status, nodeInfo: nodeInfo(this.bootID(step.node), step.image) };
        return;
      case 'goDown':
        (h.metadata ??= {}).annotations = {
          ...h.metadata.annotations,
          [HOST_KEYS.rebootingUntil]: new Date(step.until).toISOString(),
        };
        (h.status ??= {}).conditions = step.conditions;
        this.reboots.set(step.node, (this.reboots.get(step.node) ?? 0) + 1);
        this.onReboot(step.node, false);
        return;
      case 'stageBottlerocket': {
        const {
          [HOST_KEYS.bottlerocketStaged]: _staged,
          [HOST_KEYS.bottlerocketRebootRequestedBy]: _by,
          ...rest
        } = h.metadata?.annotations ?? {};
        (h.metadata ??= {}).annotations = {
          ...rest,
          ...(step.staged === undefined ? {} : { [HOST_KEYS.bottlerocketStaged]: step.staged }),
          ...(step.rebootRequestedBy === undefined
            ? {}
            : { [HOST_KEYS.bottlerocketRebootRequestedBy]: step.rebootRequestedBy }),
        };
        return;
      }
      case 'comeBack':
        this.comeBack(h, step);
        return;
    }
  }

  /**
   * The host is up again: its pods restart or end (restartedStatus, merged into each pod's status
   * as the simulator's patch is), then the node reports a new boot.
   */
  private comeBack(h: V1Node, step: Extract<HostStep, { kind: 'comeBack' }>): void {
    const restart = (pod: V1Pod): boolean => {
      const status = pod.spec?.nodeName === step.node ? restartedStatus(pod, this.iso()) : undefined;
      if (status !== undefined) pod.status = { ...pod.status, ...status };
      return status !== undefined;
    };
    for (const pod of this.rebootPods.values()) restart(pod);
    for (const j of this.jobs.values()) {
      const pod = j.pods.at(-1);
      if (pod !== undefined && restart(pod)) this.podEnded(j);
    }
    const osImage = step.osImage ?? h.status?.nodeInfo?.osImage;
    h.status = { ...h.status, conditions: step.conditions, nodeInfo: nodeInfo(this.newBootID(), osImage) };
    const {
      [HOST_KEYS.rebootingUntil]: _,
      [HOST_KEYS.bottlerocketStaged]: _staged,
      [HOST_KEYS.bottlerocketRebootRequestedBy]: _by,
      ...annotations
    } = h.metadata?.annotations ?? {};
    h.metadata = { ...h.metadata, annotations };
    this.onReboot(step.node, true);
  }
}
