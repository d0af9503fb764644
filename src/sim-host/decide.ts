/**
 * What the simulated hosts do next, decided from the objects alone (pure, so it is tested
 * without a cluster): which Job pods end now and how, which nodes take an in-place image,
 * which nodes go down for a reboot and which come back. Used by host.ts.
 */
import type { V1Node, V1NodeCondition, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { JOB_ANNOTATIONS } from '../protocol/keys.js';
import type { SimHostConfig } from '../cloud/sim/config.js';

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
      readonly kind: 'goDown';
      readonly key: string;
      readonly node: string;
      readonly until: number;
      readonly conditions: V1NodeCondition[];
    }
  | { readonly kind: 'comeBack'; readonly key: string; readonly node: string; readonly conditions: V1NodeCondition[] };

export interface HostWorld {
  readonly jobPods: readonly V1Pod[];
  readonly rebootPods: readonly V1Pod[];
  /** The sim cloud's own nodes. */
  readonly nodes: readonly V1Node[];
  readonly config: SimHostConfig;
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

export function decideHost(world: HostWorld): HostDecision {
  const steps: HostStep[] = [];
  let nextAt: number | undefined;
  const due = (t: number): void => {
    nextAt = nextAt === undefined ? t : Math.min(nextAt, t);
  };
  const at = new Date(world.now);
  const nodes = new Map(world.nodes.map((n) => [n.metadata?.name ?? '', n]));
  const rebooting = (n: V1Node): number | undefined => {
    const v = n.metadata?.annotations?.[HOST_KEYS.rebootingUntil];
    const t = v === undefined ? NaN : Date.parse(v);
    return Number.isFinite(t) ? t : undefined;
  };

  for (const pod of world.jobPods) {
    const node = nodes.get(pod.spec?.nodeName ?? '');
    if (node === undefined || rebooting(node) !== undefined) continue;
    const name = node.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    if (isRunning(pod)) {
      const started = pod.status?.startTime !== undefined ? new Date(pod.status.startTime).getTime() : world.now;
      const endAt =
        started +
        (nonNegativeNumber(pod.metadata?.annotations?.[HOST_KEYS.runSeconds]) ?? world.config.jobRunSeconds) * 1000;
      if (endAt > world.now) {
        due(endAt);
        continue;
      }
      const status = endedStatus(pod, jobExit(pod, node, world.config), at);
      steps.push({
        kind: 'endPod',
        key: `end:${uid}`,
        node: name,
        namespace: pod.metadata?.namespace ?? '',
        pod: pod.metadata?.name ?? '',
        status,
      });
    } else if (pod.status?.phase === 'Succeeded') {
      const image = pod.metadata?.annotations?.[JOB_ANNOTATIONS.image];
      if (image !== undefined && node.status?.nodeInfo?.osImage !== image) {
        steps.push({ kind: 'setOsImage', key: `image:${uid}:${name}`, node: name, image });
      }
    }
  }

  for (const node of world.nodes) {
    const until = rebooting(node);
    if (until === undefined) continue;
    const name = node.metadata?.name ?? '';
    if (until > world.now) due(until);
    else steps.push({ kind: 'comeBack', key: `up:${name}:${until}`, node: name, conditions: readyCondition(true, at) });
  }

  const goingDown = new Set<string>();
  for (const pod of world.rebootPods) {
    const node = nodes.get(pod.spec?.nodeName ?? '');
    if (node === undefined || rebooting(node) !== undefined || !isRunning(pod)) continue;
    const name = node.metadata?.name ?? '';
    // Two reboot pods at once reboot the host once.
    if (goingDown.has(name)) continue;
    goingDown.add(name);
    const until = world.now + world.config.rebootSeconds * 1000;
    steps.push({
      kind: 'goDown',
      key: `down:${pod.metadata?.uid ?? ''}`,
      node: name,
      until,
      conditions: readyCondition(false, at),
    });
    due(until);
  }
  return { steps, ...(nextAt !== undefined ? { nextAt } : {}) };
}
