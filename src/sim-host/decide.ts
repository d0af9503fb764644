/**
 * What the simulated hosts do next, decided from the objects alone (pure, so it is tested
 * without a cluster): which Job pods end now and how, which nodes take an in-place image,
 * which nodes go down for a reboot and which come back. Used by host.ts.
 */
import type { V1Node, V1NodeCondition, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { JOB_ANNOTATIONS } from '../protocol/keys.js';
import type { SimBottlerocketConfig, SimHostConfig } from '../cloud/sim/config.js';
import { SIM_LABELS } from '../cloud/sim/nodes.js';
import {
  BOTTLEROCKET_KEYS,
  bootedOsImage,
  bottlerocketHost,
  bottlerocketUpdateEnv,
  noBottlerocketApi,
  runBottlerocketUpdate,
} from './bottlerocket.js';

/** Keys the simulated hosts read and write. */
export const HOST_KEYS = {
  /** Pod annotation: the exit code the Job pod ends with. */
  exitCode: 'sim.drydock.dev/exit-code',
  /** Pod annotation: seconds the Job pod runs before it ends. */
  runSeconds: 'sim.drydock.dev/run-seconds',
  /** Node label: "true" fails every Job pod on the node. */
  failJobs: 'sim.drydock.dev/fail-jobs',
  /** Node annotation: while set, the node is rebooting until this instant. */
  rebootingUntil: 'sim.drydock.dev/rebooting-until',
  /** Node annotation of a Bottlerocket host: the version its next boot runs. */
  bottlerocketStaged: BOTTLEROCKET_KEYS.staged,
  /** Node annotation of a Bottlerocket host: the update pod whose reboot request is not yet done. */
  bottlerocketRebootRequestedBy: BOTTLEROCKET_KEYS.rebootRequestedBy,
} as const;

export type HostStep =
  | {
      readonly kind: 'endPod';
      readonly key: string;
      readonly node: string;
      readonly namespace: string;
      readonly pod: string;
      readonly status: V1PodStatus;
    }
  | { readonly kind: 'setOsImage'; readonly key: string; readonly node: string; readonly image: string }
  | {
      /** A Bottlerocket host's update state changed: the version next to boot, a reboot asked for. */
      readonly kind: 'stageBottlerocket';
      readonly key: string;
      readonly node: string;
      readonly staged: string | undefined;
      readonly rebootRequestedBy: string | undefined;
    }
  | {
      readonly kind: 'goDown';
      readonly key: string;
      readonly node: string;
      readonly until: number;
      readonly conditions: V1NodeCondition[];
    }
  | {
      readonly kind: 'comeBack';
      readonly key: string;
      readonly node: string;
      readonly conditions: V1NodeCondition[];
      /** What the OS reports once booted, when the boot changed it (a Bottlerocket host's staged version). */
      readonly osImage?: string;
    };

export interface HostWorld {
  readonly jobPods: readonly V1Pod[];
  readonly rebootPods: readonly V1Pod[];
  /** The sim cloud's own nodes. */
  readonly nodes: readonly V1Node[];
  readonly config: SimHostConfig;
  /** Bottlerocket groups by group id, each with the versions its repository offers now. */
  readonly bottlerocket?: ReadonlyMap<string, SimBottlerocketConfig>;
  /** Epoch milliseconds. */
  readonly now: number;
}

export interface HostDecision {
  readonly steps: readonly HostStep[];
  /** The earliest future instant something is due (a run ends, a node comes back). */
  readonly nextAt?: number;
}

function nonNegativeNumber(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  return Number(value);
}

function isRunning(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && pod.metadata?.deletionTimestamp === undefined;
}

function failsJobs(node: V1Node, config: SimHostConfig): boolean {
  const name = node.metadata?.name ?? '';
  return config.failJobsOnNodes.includes(name) || node.metadata?.labels?.[HOST_KEYS.failJobs] === 'true';
}

/** How a Job pod ends: its exit code and the termination message the host leaves. */
export function jobExit(pod: V1Pod, node: V1Node, config: SimHostConfig): { exitCode: number; message: string } {
  if (failsJobs(node, config)) {
    return {
      exitCode: 1,
      message: `sim host ${node.metadata?.name ?? ''} fails every Job (host.failJobsOnNodes or label ${HOST_KEYS.failJobs}=true)`,
    };
  }
  const exitCode = Math.trunc(nonNegativeNumber(pod.metadata?.annotations?.[HOST_KEYS.exitCode]) ?? 0) % 256;
  return { exitCode, message: exitCode === 0 ? 'done' : `exit code ${exitCode} (${HOST_KEYS.exitCode})` };
}

function endedStatus(pod: V1Pod, exit: { exitCode: number; message: string }, at: Date): V1PodStatus {
  const ok = exit.exitCode === 0;
  const started = pod.status?.startTime ?? at;
  return {
    phase: ok ? 'Succeeded' : 'Failed',
    conditions: ['Ready', 'ContainersReady'].map((type) => ({
      type,
      status: 'False',
      lastTransitionTime: at,
      reason: 'PodCompleted',
    })),
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: false,
      started: false,
      restartCount: 0,
      state: {
        terminated: {
          exitCode: exit.exitCode,
          reason: ok ? 'Completed' : 'Error',
          message: exit.message,
          startedAt: started,
          finishedAt: at,
        },
      },
    })),
  };
}

function readyCondition(ready: boolean, at: Date): V1NodeCondition[] {
  return [
    ready
      ? {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'sim host is back after a reboot',
          lastHeartbeatTime: at,
          lastTransitionTime: at,
        }
      : {
          type: 'Ready',
          status: 'False',
          reason: 'Rebooting',
          message: 'sim host is rebooting',
          lastHeartbeatTime: at,
          lastTransitionTime: at,
        },
  ];
}

/** Collects steps and the earliest instant something is due. */
class Decision {
  readonly steps: HostStep[] = [];
  nextAt: number | undefined;
  /** Nodes a step of this round takes down: a host reboots once however many ask. */
  readonly goingDown = new Set<string>();
  due(t: number): void {
    this.nextAt = this.nextAt === undefined ? t : Math.min(this.nextAt, t);
  }
}

function rebootingUntil(n: V1Node): number | undefined {
  const v = n.metadata?.annotations?.[HOST_KEYS.rebootingUntil];
  const t = v === undefined ? NaN : Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

function bottlerocketOf(node: V1Node, world: HostWorld): SimBottlerocketConfig | undefined {
  return world.bottlerocket?.get(node.metadata?.labels?.[SIM_LABELS.group] ?? '');
}

export function decideHost(world: HostWorld): HostDecision {
  const d = new Decision();
  const nodes = new Map(world.nodes.map((n) => [n.metadata?.name ?? '', n]));
  for (const pod of world.jobPods) {
    const node = nodes.get(pod.spec?.nodeName ?? '');
    if (node !== undefined && rebootingUntil(node) === undefined) jobPodSteps(d, pod, node, world);
  }
  const at = new Date(world.now);
  for (const node of world.nodes) {
    const until = rebootingUntil(node);
    if (until === undefined) continue;
    const name = node.metadata?.name ?? '';
    if (until > world.now) d.due(until);
    else {
      const br = bottlerocketOf(node, world);
      const osImage = br === undefined ? undefined : bootedOsImage(node, br);
      d.steps.push({
        kind: 'comeBack',
        key: `up:${name}:${until}`,
        node: name,
        conditions: readyCondition(true, at),
        ...(osImage === undefined ? {} : { osImage }),
      });
    }
  }
  for (const pod of world.rebootPods) {
    const node = nodes.get(pod.spec?.nodeName ?? '');
    if (node === undefined || rebootingUntil(node) !== undefined || !isRunning(pod)) continue;
    const stale = staleRebootPod(pod, node);
    if (stale === undefined) goDown(d, node, `down:${pod.metadata?.uid ?? ''}`, world);
    else
      d.steps.push({
        kind: 'endPod',
        key: `end:${pod.metadata?.uid ?? ''}`,
        node: node.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? '',
        pod: pod.metadata?.name ?? '',
        status: endedStatus(pod, { exitCode: 0, message: stale }, at),
      });
  }
  // A reboot a Bottlerocket update asked the API for, and that has not happened yet.
  for (const node of world.nodes) {
    const by = node.metadata?.annotations?.[HOST_KEYS.bottlerocketRebootRequestedBy];
    if (by && rebootingUntil(node) === undefined) goDown(d, node, `down:${by}`, world);
  }
  return { steps: d.steps, ...(d.nextAt !== undefined ? { nextAt: d.nextAt } : {}) };
}

/**
 * The reboot pod's own guard (execute/jobs/reboot-pod.ts, REBOOT_GUARD), as the host runs it: a
 * pod that recorded a bootID the node no longer runs reboots nothing and says so.
 */
function staleRebootPod(pod: V1Pod, node: V1Node): string | undefined {
  const recorded = pod.metadata?.annotations?.[JOB_ANNOTATIONS.bootID];
  const booted = node.status?.nodeInfo?.bootID;
  if (recorded === undefined || booted === undefined || recorded === booted) return undefined;
  return `not rebooted: the node booted again since boot ${recorded} (now ${booted})`;
}

function goDown(d: Decision, node: V1Node, key: string, world: HostWorld): void {
  const name = node.metadata?.name ?? '';
  if (d.goingDown.has(name)) return;
  d.goingDown.add(name);
  const until = world.now + world.config.rebootSeconds * 1000;
  d.steps.push({ kind: 'goDown', key, node: name, until, conditions: readyCondition(false, new Date(world.now)) });
  d.due(until);
}

/** A Job pod on a host that is up: it ends once its run time passed; an ended in-place update leaves its image. */
function jobPodSteps(d: Decision, pod: V1Pod, node: V1Node, world: HostWorld): void {
  const name = node.metadata?.name ?? '';
  const uid = pod.metadata?.uid ?? '';
  const bottlerocket = bottlerocketUpdateEnv(pod);
  if (isRunning(pod)) {
    const started = pod.status?.startTime !== undefined ? new Date(pod.status.startTime).getTime() : world.now;
    const endAt =
      started +
      (nonNegativeNumber(pod.metadata?.annotations?.[HOST_KEYS.runSeconds]) ?? world.config.jobRunSeconds) * 1000;
    if (endAt > world.now) {
      d.due(endAt);
      return;
    }
    const end = (exit: { exitCode: number; message: string }): void => {
      d.steps.push({
        kind: 'endPod',
        key: `end:${uid}`,
        node: name,
        namespace: pod.metadata?.namespace ?? '',
        pod: pod.metadata?.name ?? '',
        status: endedStatus(pod, exit, new Date(world.now)),
      });
    };
    if (bottlerocket === undefined || failsJobs(node, world.config)) {
      end(jobExit(pod, node, world.config));
      return;
    }
    const br = bottlerocketOf(node, world);
    const run =
      br === undefined ? noBottlerocketApi(name) : runBottlerocketUpdate(bottlerocketHost(node, br), bottlerocket);
    // The host's state changes before the script says so, as on a real host.
    const staged = node.metadata?.annotations?.[HOST_KEYS.bottlerocketStaged];
    const requestedBy = node.metadata?.annotations?.[HOST_KEYS.bottlerocketRebootRequestedBy];
    const rebootBy = run.reboot ? uid : requestedBy;
    if (br !== undefined && (run.staged !== staged || rebootBy !== requestedBy))
      d.steps.push({
        kind: 'stageBottlerocket',
        key: `stage:${uid}`,
        node: name,
        staged: run.staged,
        rebootRequestedBy: rebootBy,
      });
    end(run);
    if (run.reboot) goDown(d, node, `down:${uid}`, world);
  } else if (pod.status?.phase === 'Succeeded' && bottlerocket === undefined) {
    // A Bottlerocket host reports a new version only once it booted it.
    const image = pod.metadata?.annotations?.[JOB_ANNOTATIONS.image];
    if (image !== undefined && node.status?.nodeInfo?.osImage !== image) {
      d.steps.push({ kind: 'setOsImage', key: `image:${uid}:${name}`, node: name, image });
    }
  }
}
