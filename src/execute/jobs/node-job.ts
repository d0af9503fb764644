/**
 * The batch/v1 Job that runs an operation on one node (NodeOp, NodeOpUpgrade, NodeImage
 * inPlace): pinned by nodeName, tolerating drydock's cordon and the node's own taints, with
 * the host's root filesystem mounted. Pure: the same input gives the same Job, name included,
 * so a retry after a crash finds the Job it made before.
 */
import type { V1Container, V1Job, V1Toleration, V1Volume } from '@kubernetes/client-node';
import {
  JOB_ANNOTATIONS,
  jobAnnotations,
  jobLabels,
  nodeJobName,
  type JobStep,
  type NodeJobSpec,
  type NodeTaint,
  type OperationRef,
} from '../../protocol/jobs.js';

/** The taint a cordon puts on a node (the node lifecycle controller mirrors spec.unschedulable). */
export const CORDON_TAINT = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' } as const;

/** What the builders need to know of a node (an ObservedNode fits). */
export interface JobNode {
  readonly name: string;
  readonly taints: readonly NodeTaint[];
}

export interface NodeJobInput {
  readonly operation: OperationRef;
  readonly node: JobNode;
  readonly namespace: string;
  readonly job: NodeJobSpec;
  /** inPlace: the image this Job puts on the node, marked on its pod for the host to see. */
  readonly appliesImage?: string;
}

export const DEFAULT_HOST_MOUNT_PATH = '/host';
/** Kairos tells its node Jobs where the host is mounted in this variable; scripts written for it use it. */
export const HOST_DIR_ENV = 'HOST_DIR';
const HOST_ROOT_VOLUME = 'host-root';

/**
 * Tolerations for a pod pinned to `node`: drydock's cordon, and every taint the node has now,
 * whatever its value. A pod bound by nodeName skips the scheduler, but the kubelet still
 * refuses pods that do not tolerate a NoExecute taint, and the taint manager evicts them.
 */
export function nodeTolerations(node: JobNode): V1Toleration[] {
  const seen = new Set<string>();
  const out: V1Toleration[] = [];
  for (const t of [CORDON_TAINT, ...node.taints]) {
    const key = `${t.key}:${t.effect}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ key: t.key, operator: 'Exists', effect: t.effect });
  }
  return out;
}

/** Shared by every pod drydock pins to a node. */
export function hostRootVolume(): { name: string; hostPath: { path: string } } {
  return { name: HOST_ROOT_VOLUME, hostPath: { path: '/' } };
}

/** What a Job pinned to a node runs: its container and volumes, with its pods' own annotations. */
export interface PinnedJobInput {
  readonly operation: OperationRef;
  readonly node: JobNode;
  readonly namespace: string;
  readonly step: JobStep;
  readonly backoffLimit: number;
  readonly imagePullSecrets: readonly string[];
  readonly container: V1Container;
  readonly volumes: readonly V1Volume[];
  /** Added to the pod's annotations (inPlace: the image the Job applies). */
  readonly podAnnotations?: Readonly<Record<string, string>>;
}

/**
 * A Job pinned to one node by nodeName, named, labelled and annotated after its operation, node
 * and step, tolerating drydock's cordon and the node's taints: every node Job is this, around
 * its own container, so the executor finds and reads them all the same way.
 */
export function pinnedJob(input: PinnedJobInput): V1Job {
  const { operation: op, node } = input;
  const labels = jobLabels(op, node.name, input.step);
  const annotations = jobAnnotations(op, node.name);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: nodeJobName(op, node.name), namespace: input.namespace, labels, annotations },
    spec: {
      backoffLimit: input.backoffLimit,
      // No ttlSecondsAfterFinished: drydock deletes the Job once it recorded the outcome; a
      // Job gone before that would be made again.
      template: {
        metadata: { labels, annotations: { ...annotations, ...input.podAnnotations } },
        spec: {
          nodeName: node.name,
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          tolerations: nodeTolerations(node),
          ...(input.imagePullSecrets.length > 0
            ? { imagePullSecrets: input.imagePullSecrets.map((name) => ({ name })) }
            : {}),
          containers: [input.container],
          volumes: [...input.volumes],
        },
      },
    },
  };
}

export function nodeJob(input: NodeJobInput, step: JobStep = 'operation'): V1Job {
  const { job } = input;
  const hostMountPath = job.hostMountPath ?? DEFAULT_HOST_MOUNT_PATH;
  const env = Object.entries({ [HOST_DIR_ENV]: hostMountPath, ...job.env })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => ({ name, value }));
  return pinnedJob({
    operation: input.operation,
    node: input.node,
    namespace: input.namespace,
    step,
    backoffLimit: job.backoffLimit,
    imagePullSecrets: job.imagePullSecrets,
    ...(input.appliesImage !== undefined ? { podAnnotations: { [JOB_ANNOTATIONS.image]: input.appliesImage } } : {}),
    container: {
      name: 'operation',
      image: job.image,
      command: [...job.command],
      env,
      securityContext: { privileged: job.privileged },
      volumeMounts: [{ name: HOST_ROOT_VOLUME, mountPath: hostMountPath }],
      // The message kept in status: what the container wrote, or its last log lines.
      terminationMessagePolicy: 'FallbackToLogsOnError',
    },
    volumes: [hostRootVolume()],
  });
}
