/**
 * The Job that puts a Bottlerocket node on a version through the node's own API: the script
 * assets/bottlerocket-update.sh, inlined as `sh -c`, so the Job needs no ConfigMap and runs in
 * any image with sh, awk and curl. It is pinned to the node by nodeName like every node Job, and
 * reaches the API through the host's socket, with the SELinux type Bottlerocket lets talk to it
 * (the one the Bottlerocket update operator's agent runs with); it needs neither the host's root
 * filesystem nor privilege. The script's termination message tells what it did, which
 * bottlerocketUpdateResult reads back.
 */
import { readFileSync } from 'node:fs';
import type { V1Container, V1Job, V1Pod, V1Volume } from '@kubernetes/client-node';
import type { OperationRef } from '../../protocol/jobs.js';
import { pinnedJob, type JobNode } from './node-job.js';
import { BOOT_ID_ENV, guardedRebootCommand, rebootPod, type RebootPodInput } from './reboot-pod.js';

/** assets/ of the package: four levels above dist/src/execute/jobs/ (shipped by `files`). */
const SCRIPT_FILE = new URL('../../../../assets/bottlerocket-update.sh', import.meta.url);

/** Where Bottlerocket's API listens on the host, and where the Job mounts it. */
export const BOTTLEROCKET_API_SOCKET = '/run/api.sock';
const SOCKET_VOLUME = 'bottlerocket-api-socket';

/** An image with sh, awk and curl: the update Job's and the API reboot pod's. */
export const DEFAULT_BOTTLEROCKET_IMAGE = 'curlimages/curl:8.10.1';

/** The script's inputs. */
export const BOTTLEROCKET_UPDATE_ENV = {
  version: 'BOTTLEROCKET_VERSION',
  reboot: 'BOTTLEROCKET_REBOOT',
  socket: 'BOTTLEROCKET_API_SOCKET',
} as const;

/** Bottlerocket's policy lets containers of this type use the API socket. */
export const BOTTLEROCKET_API_SELINUX = { user: 'system_u', role: 'system_r', type: 'super_t', level: 's0' } as const;

let script: string | undefined;

/** The script's text, read once. */
export function bottlerocketUpdateScript(): string {
  script ??= readFileSync(SCRIPT_FILE, 'utf8');
  return script;
}

export interface BottlerocketUpdateSpec {
  /** X.Y.Z (or vX.Y.Z), or latest: the newest update the node's repository offers. */
  readonly version: string;
  /** Reboot through the API once the update is Ready; false leaves the reboot to the caller. */
  readonly reboot: boolean;
  readonly image: string;
}

/** The container and the volume it needs. */
export function bottlerocketUpdateContainer(spec: BottlerocketUpdateSpec): {
  container: V1Container;
  volumes: V1Volume[];
} {
  return {
    container: {
      name: 'bottlerocket-update',
      image: spec.image,
      // $0 names the script in the shell's own messages.
      command: ['sh', '-c', bottlerocketUpdateScript(), 'bottlerocket-update'],
      env: [
        { name: BOTTLEROCKET_UPDATE_ENV.socket, value: BOTTLEROCKET_API_SOCKET },
        { name: BOTTLEROCKET_UPDATE_ENV.reboot, value: String(spec.reboot) },
        { name: BOTTLEROCKET_UPDATE_ENV.version, value: spec.version },
      ],
      // Root for the socket's permissions; the SELinux type for Bottlerocket's policy.
      securityContext: { runAsUser: 0, seLinuxOptions: { ...BOTTLEROCKET_API_SELINUX } },
      volumeMounts: [{ name: SOCKET_VOLUME, mountPath: BOTTLEROCKET_API_SOCKET }],
      terminationMessagePolicy: 'FallbackToLogsOnError',
    },
    volumes: [{ name: SOCKET_VOLUME, hostPath: { path: BOTTLEROCKET_API_SOCKET, type: 'Socket' } }],
  };
}

export interface BottlerocketUpdateJobInput {
  readonly operation: OperationRef;
  readonly node: JobNode;
  readonly namespace: string;
  readonly update: BottlerocketUpdateSpec;
  readonly imagePullSecrets: readonly string[];
  /** Retries are safe: a run finds an update it made Ready before and does not prepare it again. */
  readonly backoffLimit: number;
}

/** Named, labelled and pinned like nodeJob's Job, so the executor finds and reads it the same way. */
export function bottlerocketUpdateJob(input: BottlerocketUpdateJobInput): V1Job {
  const { container, volumes } = bottlerocketUpdateContainer(input.update);
  return pinnedJob({
    operation: input.operation,
    node: input.node,
    namespace: input.namespace,
    step: 'operation',
    backoffLimit: input.backoffLimit,
    imagePullSecrets: input.imagePullSecrets,
    container,
    volumes,
  });
}

/**
 * The reboot pod of a Bottlerocket node: named, labelled and tolerating like rebootPod's (its
 * name carries the bootID drydock recorded first, so the same boot is never rebooted twice),
 * but instead of entering the host it asks the API to reboot, as brupop's agent and
 * `apiclient reboot` do (POST /actions/reboot): Bottlerocket's own reboot, which boots the
 * partition the update activated. Neither privilege nor the host's PID namespace is needed.
 */
export function bottlerocketRebootPod(input: Omit<RebootPodInput, 'command'> & { readonly image: string }): V1Pod {
  const pod = rebootPod(input);
  const url = 'http://localhost/actions/reboot';
  return {
    ...pod,
    spec: {
      ...pod.spec,
      hostPID: false,
      containers: [
        {
          name: 'reboot',
          image: input.image,
          command: guardedRebootCommand([
            'curl',
            '--fail-with-body',
            '--silent',
            '--show-error',
            '--unix-socket',
            BOTTLEROCKET_API_SOCKET,
            '-X',
            'POST',
            url,
          ]),
          env: [{ name: BOOT_ID_ENV, value: input.bootID }],
          securityContext: { runAsUser: 0, seLinuxOptions: { ...BOTTLEROCKET_API_SELINUX } },
          volumeMounts: [{ name: SOCKET_VOLUME, mountPath: BOTTLEROCKET_API_SOCKET }],
        },
      ],
      volumes: [{ name: SOCKET_VOLUME, hostPath: { path: BOTTLEROCKET_API_SOCKET, type: 'Socket' } }],
    },
  };
}

export { bottlerocketUpdateResult, type BottlerocketUpdateResult } from '../../protocol/bottlerocket.js';
