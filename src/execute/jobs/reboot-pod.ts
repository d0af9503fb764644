/**
 * The pod that reboots a node once its Job succeeded: privileged, in the host's PID
 * namespace, pinned to the node. Its name carries the bootID drydock recorded before it, so a
 * restarted drydock finds the same pod (AlreadyExists) rather than rebooting the node twice,
 * and the next boot (a new bootID) never matches it. The pod itself checks that bootID on the
 * host before it reboots (rebootGuard), so a reboot pod that reaches a node after its reboot,
 * whatever created it, reboots nothing.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { JOB_ANNOTATIONS, jobAnnotations, jobLabels, rebootPodName, type OperationRef } from '../../protocol/jobs.js';
import { hostRootVolume, nodeTolerations, type JobNode } from './node-job.js';

export const DEFAULT_REBOOT_IMAGE = 'busybox:1.36';
/** Enter the host's mount and IPC namespaces through PID 1 and reboot, as Kairos' reboot pod does. */
export const DEFAULT_REBOOT_COMMAND: readonly string[] = ['nsenter', '-i', '-m', '-t', '1', '--', 'reboot'];

/** The environment variable that carries the recorded bootID into the guard. */
export const BOOT_ID_ENV = 'DRYDOCK_BOOT_ID';

/**
 * The guard every reboot pod runs its reboot command behind: boot_id is the kernel's, the same in
 * every namespace, and is what the kubelet reports as status.nodeInfo.bootID. A node that booted
 * again since drydock recorded its bootID is left alone; the pod succeeds and says why.
 */
export const REBOOT_GUARD = [
  'booted=$(cat /proc/sys/kernel/random/boot_id) || exit 1',
  `if [ "$booted" != "$${BOOT_ID_ENV}" ]; then`,
  `  echo "not rebooted: the node booted again since boot $${BOOT_ID_ENV} (now $booted)"`,
  '  exit 0',
  'fi',
  'exec "$@"',
].join('\n');

/** `command` run behind the bootID guard: sh -c GUARD reboot-guard COMMAND... */
export function guardedRebootCommand(command: readonly string[]): string[] {
  return ['sh', '-c', REBOOT_GUARD, 'reboot-guard', ...command];
}

/**
 * The reboot makes the node NotReady, then unreachable; the taint manager would evict the pod
 * after the default 300 s and with it the record that the reboot was asked for. Tolerated
 * without tolerationSeconds, the taints are tolerated for as long as they last.
 */
const REBOOT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
] as const;

export interface RebootPodInput {
  readonly operation: OperationRef;
  readonly node: JobNode;
  /** status.nodeInfo.bootID as recorded on the node before the reboot. */
  readonly bootID: string;
  readonly namespace: string;
  readonly image?: string;
  readonly command?: readonly string[];
}

export function rebootPod(input: RebootPodInput): V1Pod {
  const { operation: op, node } = input;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: rebootPodName(node.name, input.bootID),
      namespace: input.namespace,
      labels: jobLabels(op, node.name, 'reboot'),
      annotations: { ...jobAnnotations(op, node.name), [JOB_ANNOTATIONS.bootID]: input.bootID },
    },
    spec: {
      nodeName: node.name,
      hostPID: true,
      // Once the host rebooted the pod is finished; restarting it would reboot again.
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      tolerations: [
        ...nodeTolerations(node),
        ...REBOOT_TOLERATIONS.filter((t) => !node.taints.some((n) => n.key === t.key && n.effect === t.effect)).map(
          (t) => ({ ...t }),
        ),
      ],
      containers: [
        {
          name: 'reboot',
          image: input.image ?? DEFAULT_REBOOT_IMAGE,
          command: guardedRebootCommand(input.command ?? DEFAULT_REBOOT_COMMAND),
          env: [{ name: BOOT_ID_ENV, value: input.bootID }],
          securityContext: { privileged: true, runAsUser: 0 },
          volumeMounts: [{ name: hostRootVolume().name, mountPath: '/host' }],
        },
      ],
      volumes: [hostRootVolume()],
    },
  };
}
