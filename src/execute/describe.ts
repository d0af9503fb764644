/**
 * What an action is called, in logs and errors (describeAction), in the reliability suite's
 * crash points (callKind), and in the Event it deserves once it has done something (eventFor).
 */
import type { Action } from '../plan/types.js';
import { ANNOTATIONS, BOTTLEROCKET_RECORD_DOMAIN } from '../protocol/keys.js';
import type { EventInput } from './events.js';
import { plural } from '../words.js';

/** Where an action lands, for logs and error context. */
export function describeAction(a: Action): string {
  switch (a.kind) {
    case 'setGroupImage':
      return `setGroupImage ${a.groupId} ${a.image}`;
    case 'surge':
      return `surge ${a.groupId} +${a.count}`;
    case 'annotateNode':
    case 'cordon':
    case 'uncordon':
    case 'deleteNode':
      return `${a.kind} ${a.node}`;
    case 'evict':
    case 'deletePod':
      return `${a.kind} ${a.namespace}/${a.pod}`;
    case 'copyLabels':
      return `copyLabels ${a.from} -> ${a.to}`;
    case 'labelNode':
      return `labelNode ${a.node}`;
    case 'markDrainPending':
      return `markDrainPending ${a.node} ${a.pending ? 'on' : 'off'}`;
    case 'patchPool':
      return `patchPool ${a.pool}`;
    case 'removeInstance':
      return `removeInstance ${a.groupId}/${a.instanceId}`;
    case 'scaleDeployment':
      return `scaleDeployment ${a.namespace}/${a.name} to ${a.replicas}`;
    case 'createNodeJob':
      return `createNodeJob ${a.namespace} on ${a.node}`;
    case 'createBottlerocketUpdateJob':
      return `createBottlerocketUpdateJob ${a.namespace} on ${a.node} (${a.version})`;
    case 'createRebootPod':
      return `createRebootPod ${a.namespace} on ${a.node} (bootID ${a.bootID})`;
    case 'createGateJob':
      return `createGateJob ${a.gate} ${a.step}[${a.index}] on ${a.node}`;
    case 'deleteJob':
    case 'deleteRebootPod':
      return `${a.kind} ${a.namespace}/${a.name}`;
  }
}

/**
 * The kind of call an action makes, finer than its action kind where a node's sequence has
 * several steps of one kind: an annotation by the phase it writes (`annotateNode:Draining`,
 * `annotateNode:released`; `:resolved` after it when it also records the version a Bottlerocket
 * `latest` resolved to) or, without one, the keys it sets (`annotateNode:replaced-by`); the
 * autoscaler's pause and restore; a gate Job's step; a reboot through Bottlerocket's API; a
 * MachineConfigPool's pause, unpause or nodeSelector; node labels set or taken off. The
 * reliability suite kills drydock once after (and before) each kind, so every step of every
 * node's sequence is interrupted once.
 */
export function callKind(a: Action): string {
  switch (a.kind) {
    case 'annotateNode': {
      const phase = a.annotations[ANNOTATIONS.phase];
      const resolves = Object.keys(a.annotations).some((k) => k.startsWith(`${BOTTLEROCKET_RECORD_DOMAIN}/`));
      if (phase !== undefined) return `annotateNode:${phase ?? 'released'}${resolves ? ':resolved' : ''}`;
      const keys = Object.keys(a.annotations)
        .filter((k) => k !== ANNOTATIONS.phaseSince)
        .map((k) => k.slice(k.indexOf('/') + 1))
        .sort();
      return `annotateNode:${keys.join('+')}`;
    }
    case 'scaleDeployment':
      return `scaleDeployment:${a.replicas === 0 ? 'pause' : 'restore'}`;
    case 'createGateJob':
      return `createGateJob:${a.step}`;
    case 'createRebootPod':
      return a.method !== undefined ? `createRebootPod:${a.method}` : a.kind;
    case 'patchPool':
      return `patchPool:${a.paused === undefined ? 'nodeSelector' : a.paused ? 'pause' : 'unpause'}`;
    case 'labelNode':
      // Two steps of an OpenShift run: a node labelled to wait, and admitted by taking them off.
      return `labelNode:${Object.values(a.labels).every((v) => v === null) ? 'remove' : 'set'}`;
    case 'markDrainPending':
      return `markDrainPending:${a.pending ? 'set' : 'remove'}`;
    default:
      return a.kind;
  }
}

/** The Event an action deserves once it has done something, or undefined (group-level actions). */
export function eventFor(a: Action): Omit<EventInput, 'spec'> | undefined {
  const op = `${a.spec.kind}/${a.spec.name}`;
  switch (a.kind) {
    case 'cordon':
      return { involved: { kind: 'Node', name: a.node }, reason: 'DrydockCordon', message: `cordoned for ${op}` };
    case 'uncordon':
      return { involved: { kind: 'Node', name: a.node }, reason: 'DrydockUncordon', message: `uncordoned after ${op}` };
    case 'evict':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockDrain',
        message: `evicted pod ${a.namespace}/${a.pod} for ${op}`,
      };
    case 'deletePod':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockForceDelete',
        type: 'Warning',
        message: `deleted pod ${a.namespace}/${a.pod} for ${op}: ${a.reason}`,
      };
    case 'annotateNode': {
      const phase = a.annotations[ANNOTATIONS.phase];
      if (phase === undefined) return undefined;
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockPhase',
        message: phase === null ? `released by ${op}` : `phase ${phase} for ${op}`,
      };
    }
    case 'copyLabels':
      return {
        involved: { kind: 'Node', name: a.to },
        reason: 'DrydockCopyLabels',
        message: `labels copied from ${a.from} for ${op}`,
      };
    case 'removeInstance':
      return a.node
        ? {
            involved: { kind: 'Node', name: a.node },
            reason: 'DrydockReplace',
            message: `instance ${a.instanceId} of ${a.groupId} removed for ${op}`,
          }
        : undefined;
    case 'deleteNode':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockDeleteNode',
        message: `node object deleted for ${op}`,
      };
    case 'scaleDeployment':
      return {
        involved: { kind: 'Deployment', name: a.name, namespace: a.namespace },
        reason: 'DrydockScaleAutoscaler',
        message: `scaled to ${plural(a.replicas, 'replica')} for ${op}`,
      };
    case 'createNodeJob':
      return { involved: { kind: 'Node', name: a.node }, reason: 'DrydockJob', message: `Job started for ${op}` };
    case 'createBottlerocketUpdateJob':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockJob',
        message: `Bottlerocket update Job (${a.version}) started for ${op}`,
      };
    case 'createGateJob':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockGateJob',
        message: `UpgradeGate ${a.gate} ${a.step}-Job ${a.index + 1} started for ${op}`,
      };
    case 'createRebootPod':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockReboot',
        message: `reboot started for ${op} (bootID ${a.bootID})`,
      };
    case 'labelNode':
      return {
        involved: { kind: 'Node', name: a.node },
        reason: 'DrydockLabel',
        message: `labels ${Object.keys(a.labels).join(', ')} changed for ${op}`,
      };
    case 'setGroupImage':
    case 'surge':
    case 'deleteJob':
    case 'deleteRebootPod':
    case 'patchPool':
    case 'markDrainPending':
      // A pool is no node: its change is in the plan and the log, not an Event. The taint of a
      // node drained later shows on the node with the annotation naming its rollout; an Event
      // for each of a rollout's nodes at its start, and another as each one's turn passes, would
      // double the rollout's writes to the API server for nothing a person needs to read.
      return undefined;
  }
}
