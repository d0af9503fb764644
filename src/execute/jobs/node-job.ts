/**
 * The batch/v1 Job that runs an operation on one node (NodeOp, NodeOpUpgrade, NodeImage
 * inPlace): pinned by nodeName, tolerating drydock's cordon and the node's own taints, with
 * the host's root filesystem mounted. Pure: the same input gives the same Job, name included,
 * so a retry after a crash finds the Job it made before.
 */
import type { V1Job, V1Toleration } from '@kubernetes/client-node';
import type { NodeOp } from '../../spec/model.js';
import { JOB_ANNOTATIONS, jobAnnotations, jobLabels, objectName, type JobStep, type OperationRef } from './names.js';

/** The taint a cordon puts on a node (the node lifecycle controller mirrors spec.unschedulable). */
export const CORDON_TAINT = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' } as const;

export interface NodeTaint {
  readonly key: string;
  readonly effect: string;
  readonly value?: string;
}

/** What the builders need to know of a node (an ObservedNode fits). */
export interface JobNode {
  readonly name: string;
  readonly taints: readonly NodeTaint[];
}

/** The job fields of a spec (NodeOp's, and the update Job of an inPlace NodeImage). */
export interface NodeJobSpec {
  readonly image: string;
  readonly command: readonly string[];
  readonly imagePullSecrets: readonly string[];
  readonly backoffLimit: number;
  readonly privileged: boolean;
  /** Where the host's root is mounted in the container; default /host. */
  readonly hostMountPath?: string;
  readonly env?: Readonly<Record<string, string>>;
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

/** The Job's name: operation, node and revision; ≤ 63 characters. */
export function nodeJobName(op: OperationRef, node: string): string {
  return objectName([op.kind.toLowerCase(), op.name, node, op.revision]);
}

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

export function nodeJob(input: NodeJobInput, step: JobStep = 'operation'): V1Job {
  const { operation: op, node, job } = input;
  const labels = jobLabels(op, node.name, step);
  const annotations = jobAnnotations(op, node.name);
  const podAnnotations =
    input.appliesImage === undefined ? annotations : { ...annotations, [JOB_ANNOTATIONS.image]: input.appliesImage };
  const hostMountPath = job.hostMountPath ?? DEFAULT_HOST_MOUNT_PATH;
  const env = Object.entries({ [HOST_DIR_ENV]: hostMountPath, ...job.env })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => ({ name, value }));
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: nodeJobName(op, node.name), namespace: input.namespace, labels, annotations },
    spec: {
      backoffLimit: job.backoffLimit,
      // No ttlSecondsAfterFinished: drydock deletes the Job once it recorded the outcome; a
      // Job gone before that would be made again.
      template: {
        metadata: { labels, annotations: podAnnotations },
        spec: {
          nodeName: node.name,
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          tolerations: nodeTolerations(node),
          ...(job.imagePullSecrets.length > 0
            ? { imagePullSecrets: job.imagePullSecrets.map((name) => ({ name })) }
            : {}),
          containers: [
            {
              name: 'operation',
              image: job.image,
              command: [...job.command],
              env,
              securityContext: { privileged: job.privileged },
              volumeMounts: [{ name: HOST_ROOT_VOLUME, mountPath: hostMountPath }],
              // The message kept in status: what the container wrote, or its last log lines.
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
          volumes: [hostRootVolume()],
        },
      },
    },
  };
}

/**
 * A NodeOp's (and so a NodeOpUpgrade's) job fields as a NodeJobSpec. It runs privileged: its
 * command works on the host through the mount (Kairos' upgrade binds the host's /dev and /run).
 */
export function nodeOpJobSpec(
  op: Pick<NodeOp, 'image' | 'command' | 'imagePullSecrets' | 'backoffLimit' | 'hostMountPath'>,
): NodeJobSpec {
  return {
    image: op.image,
    command: op.command,
    imagePullSecrets: op.imagePullSecrets,
    backoffLimit: op.backoffLimit,
    privileged: true,
    hostMountPath: op.hostMountPath,
  };
}
