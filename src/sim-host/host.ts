/**
 * The simulated hosts behind the sim cloud's KWOK nodes: what a real machine would do when
 * drydock runs something on it. KWOK runs no containers, so this plays them:
 * - a Job pod ends after `sim.drydock.dev/run-seconds` (default host.jobRunSeconds) with the
 *   exit code in `sim.drydock.dev/exit-code` (default 0); on a node listed in
 *   host.failJobsOnNodes or labelled `sim.drydock.dev/fail-jobs=true` it fails;
 * - a Job pod that succeeded with drydock's image annotation set (an in-place update) leaves that
 *   image as the node's osImage;
 * - a drydock reboot pod makes its node NotReady for host.rebootSeconds; the node then comes
 *   back Ready with a new bootID, the reboot pod finished and its other pods restarted;
 * - on the nodes of a group marked bottlerocket, drydock's Bottlerocket update Job ends as its
 *   script would against that update repository, and a reboot boots the version it staged
 *   (bottlerocket.ts).
 *
 * Level-triggered, like drydock itself: every decision is read off the API objects (a pod's
 * startTime, the node's `sim.drydock.dev/rebooting-until`), so a restarted simulator picks up
 * every run and every reboot where it stood.
 */
import { randomUUID } from 'node:crypto';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Rounds } from './rounds.js';
import { watchCollection, type WatchedCollection } from '../kube/informer.js';
import { JOB_LABELS } from '../protocol/keys.js';
import type { SimBottlerocketConfig, SimHostConfig } from '../cloud/sim/config.js';
import { KWOK_ANNOTATION, SIM_LABELS } from '../cloud/sim/nodes.js';
import { decideHost, type HostStep, HOST_KEYS } from './decide.js';

// Strategic merge: conditions merge by type, so a patch names only the ones it changes.
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const JOB_POD_SELECTOR = 'batch.kubernetes.io/job-name';

export interface SimHostOptions {
  readonly kubeConfig: KubeConfig;
  readonly config: SimHostConfig;
  /** The Bottlerocket groups by id, with what their update repositories offer now (read every round). */
  readonly bottlerocket?: () => ReadonlyMap<string, SimBottlerocketConfig>;
  readonly logger: Logger;
  /** Default Date.now. */
  readonly now?: () => number;
}

export interface SimHost {
  /** Resolves once the first lists are in. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

export function startSimHost(options: SimHostOptions): SimHost {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const log = options.logger.child({ component: 'sim-host' });
  const now = options.now ?? Date.now;
  const rounds = new Rounds(() => round());
  /** Steps already applied by this process; the API objects catch up a moment later. */
  const applied = new Set<string>();

  const onChange = (): void => rounds.schedule(0);
  const common = { kubeConfig: options.kubeConfig, logger: log, onChange };
  const jobPods: WatchedCollection<V1Pod> = watchCollection<V1Pod>({
    ...common,
    name: 'sim-job-pods',
    path: '/api/v1/pods',
    labelSelector: JOB_POD_SELECTOR,
    list: () => core.listPodForAllNamespaces({ labelSelector: JOB_POD_SELECTOR }),
  });
  const rebootSelector = `${JOB_LABELS.step}=reboot`;
  const rebootPods: WatchedCollection<V1Pod> = watchCollection<V1Pod>({
    ...common,
    name: 'sim-reboot-pods',
    path: '/api/v1/pods',
    labelSelector: rebootSelector,
    list: () => core.listPodForAllNamespaces({ labelSelector: rebootSelector }),
  });
  const nodes: WatchedCollection<V1Node> = watchCollection<V1Node>({
    ...common,
    name: 'sim-nodes',
    path: '/api/v1/nodes',
    labelSelector: SIM_LABELS.group,
    list: () => core.listNode({ labelSelector: SIM_LABELS.group }),
  });

  async function applySteps(mine: readonly HostStep[]): Promise<void> {
    for (const step of mine) {
      if (rounds.isStopped) return;
      try {
        await applyHostStep(core, step, new Date(now()).toISOString());
        applied.add(step.key);
        log.info(
          { step: step.kind, node: step.node, ...('pod' in step ? { pod: `${step.namespace}/${step.pod}` } : {}) },
          'host step applied',
        );
      } catch (err) {
        log.warn(
          { step: step.kind, node: step.node, code: (err as { code?: unknown }).code },
          'host step failed; retrying',
        );
        rounds.schedule(1000);
        // A node's later steps wait for this one: a host does not reboot before its Job ended.
        return;
      }
    }
  }

  async function round(): Promise<void> {
    if (rounds.isStopped || !(jobPods.isSynced() && rebootPods.isSynced() && nodes.isSynced())) return;
    const { steps, nextAt } = decideHost({
      jobPods: jobPods.list(),
      rebootPods: rebootPods.list(),
      nodes: nodes.list(),
      config: options.config,
      ...(options.bottlerocket ? { bottlerocket: options.bottlerocket() } : {}),
      now: now(),
    });
    // Hosts are separate machines: each node's steps in order, different nodes' at once (a wave of
    // twenty reboots does not come back one host after another).
    const byNode = new Map<string, HostStep[]>();
    for (const step of steps)
      if (!applied.has(step.key)) byNode.set(step.node, [...(byNode.get(step.node) ?? []), step]);
    await Promise.all([...byNode.values()].map(applySteps));
    if (nextAt !== undefined) rounds.schedule(nextAt - now());
  }

  return {
    synced: Promise.all([jobPods.synced, rebootPods.synced, nodes.synced]).then(() => undefined),
    stop: async () => {
      rounds.stop();
      await Promise.all([jobPods.stop(), rebootPods.stop(), nodes.stop()]);
      await rounds.finished();
    },
  };
}

/** One host step against the API; each is safe to repeat. */
export async function applyHostStep(core: CoreV1Api, step: HostStep, at: string): Promise<void> {
  switch (step.kind) {
    case 'endPod':
      await core.patchNamespacedPodStatus(
        { name: step.pod, namespace: step.namespace, body: { status: step.status } },
        MERGE,
      );
      return;
    case 'setOsImage':
      await core.patchNodeStatus({ name: step.node, body: { status: { nodeInfo: { osImage: step.image } } } }, MERGE);
      return;
    case 'goDown':
      // Without KWOK's annotation nothing renews the node's lease or heartbeats: it is down.
      await core.patchNode(
        {
          name: step.node,
          body: {
            metadata: {
              annotations: { [KWOK_ANNOTATION]: null, [HOST_KEYS.rebootingUntil]: new Date(step.until).toISOString() },
            },
          },
        },
        MERGE,
      );
      await core.patchNodeStatus({ name: step.node, body: { status: { conditions: step.conditions } } }, MERGE);
      return;
    case 'stageBottlerocket':
      await core.patchNode(
        {
          name: step.node,
          body: {
            metadata: {
              annotations: {
                [HOST_KEYS.bottlerocketStaged]: step.staged ?? null,
                [HOST_KEYS.bottlerocketRebootRequestedBy]: step.rebootRequestedBy ?? null,
              },
            },
          },
        },
        MERGE,
      );
      return;
    case 'comeBack':
      await comeBack(core, step, at);
      return;
  }
}

/** The host is up again: its pods restart (or end), then the node reports a new boot, then KWOK takes it back. */
async function comeBack(core: CoreV1Api, step: Extract<HostStep, { kind: 'comeBack' }>, at: string): Promise<void> {
  const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${step.node}` });
  await Promise.all(
    pods.items.map(async (pod) => {
      const status = restartedStatus(pod, at);
      if (status === undefined) return;
      await core.patchNamespacedPodStatus(
        { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', body: { status } },
        MERGE,
      );
    }),
  );
  await core.patchNodeStatus(
    {
      name: step.node,
      body: {
        status: {
          conditions: step.conditions,
          nodeInfo: { bootID: randomUUID(), ...(step.osImage === undefined ? {} : { osImage: step.osImage }) },
        },
      },
    },
    MERGE,
  );
  // The boot used up what was staged (or fell back from it): nothing is next to boot any more.
  await core.patchNode(
    {
      name: step.node,
      body: {
        metadata: {
          annotations: {
            [KWOK_ANNOTATION]: 'fake',
            [HOST_KEYS.rebootingUntil]: null,
            [HOST_KEYS.bottlerocketStaged]: null,
            [HOST_KEYS.bottlerocketRebootRequestedBy]: null,
          },
        },
      },
    },
    MERGE,
  );
}

/**
 * A pod's status after its host rebooted: a reboot pod has done its work; a pod that is never
 * restarted (a Job's) ended with the host; every other pod's containers run again.
 */
export function restartedStatus(pod: V1Pod, at: string): V1Pod['status'] | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed' || pod.metadata?.deletionTimestamp !== undefined) return undefined;
  const containers = pod.spec?.containers ?? [];
  const previous = new Map((pod.status?.containerStatuses ?? []).map((s) => [s.name, s.restartCount]));
  const isReboot = pod.metadata?.labels?.[JOB_LABELS.step] === 'reboot';
  if (isReboot || pod.spec?.restartPolicy === 'Never') {
    const exitCode = isReboot ? 0 : 137;
    return {
      phase: isReboot ? 'Succeeded' : 'Failed',
      conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(at) }],
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: false,
        restartCount: previous.get(c.name) ?? 0,
        state: {
          terminated: {
            exitCode,
            reason: isReboot ? 'Completed' : 'Error',
            message: isReboot ? 'host rebooted' : 'host rebooted under the container',
            finishedAt: new Date(at),
          },
        },
      })),
    };
  }
  return {
    conditions: ['Ready', 'ContainersReady'].map((type) => ({
      type,
      status: 'True',
      lastTransitionTime: new Date(at),
    })),
    containerStatuses: containers.map((c) => ({
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: true,
      started: true,
      restartCount: (previous.get(c.name) ?? 0) + 1,
      state: { running: { startedAt: new Date(at) } },
    })),
  };
}
