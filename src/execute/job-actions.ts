/**
 * The Action functions for the objects drydock runs on nodes: they build the Job or reboot pod
 * from the action (execute/jobs) and hand it to the create-once and delete helpers
 * (execute/node-jobs.ts), so a repeat after a crash finds what was made before.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { ActionDeps, ActionOf } from './actions.js';
import type { Outcome } from './classify.js';
import {
  bottlerocketRebootPod,
  bottlerocketUpdateJob,
  DEFAULT_BOTTLEROCKET_IMAGE,
  gateJob,
  nodeJob,
  rebootPod,
} from './jobs/index.js';
import { createJob, createRebootPod, deleteFinishedJob, deleteRebootPod } from './node-jobs.js';

/** The Job a createNodeJob creates (the sequence tests' simulated hosts run the same one). */
export function nodeJobFor(a: ActionOf<'createNodeJob'>): V1Job {
  return nodeJob({
    operation: a.operation,
    node: { name: a.node, taints: a.taints },
    namespace: a.namespace,
    job: a.job,
    ...(a.appliesImage !== undefined ? { appliesImage: a.appliesImage } : {}),
  });
}

export function createNodeJobAction(a: ActionOf<'createNodeJob'>, d: ActionDeps): Promise<Outcome> {
  return createJob(nodeJobFor(a), d);
}

/**
 * The Job a createBottlerocketUpdateJob creates: the reboot is left to the reboot pod, which
 * drydock starts only once it recorded the node's bootID.
 */
export function bottlerocketUpdateJobFor(a: ActionOf<'createBottlerocketUpdateJob'>): V1Job {
  return bottlerocketUpdateJob({
    operation: a.operation,
    node: { name: a.node, taints: a.taints },
    namespace: a.namespace,
    update: { version: a.version, reboot: false, image: a.image ?? DEFAULT_BOTTLEROCKET_IMAGE },
    imagePullSecrets: [],
    // A failure of the API ("no update available", "prepare failed") is the node's answer.
    backoffLimit: 0,
  });
}

export function createBottlerocketUpdateJobAction(
  a: ActionOf<'createBottlerocketUpdateJob'>,
  d: ActionDeps,
): Promise<Outcome> {
  return createJob(bottlerocketUpdateJobFor(a), d);
}

/** The Job a createGateJob creates. */
export function gateJobFor(a: ActionOf<'createGateJob'>): V1Job {
  return gateJob({
    operation: a.operation,
    gate: a.gate,
    step: a.step,
    index: a.index,
    template: a.template,
    node: a.node,
    defaultNamespace: a.defaultNamespace,
    ...(a.replacement !== undefined ? { replacement: a.replacement } : {}),
    ...(a.mutexRule !== undefined ? { mutexRule: a.mutexRule } : {}),
  });
}

export function createGateJobAction(a: ActionOf<'createGateJob'>, d: ActionDeps): Promise<Outcome> {
  return createJob(gateJobFor(a), d);
}

/** The reboot pod a createRebootPod creates. */
export function rebootPodFor(a: ActionOf<'createRebootPod'>): V1Pod {
  if (a.method === 'bottlerocketApi')
    return bottlerocketRebootPod({
      operation: a.operation,
      node: { name: a.node, taints: a.taints },
      bootID: a.bootID,
      namespace: a.namespace,
      image: a.image ?? DEFAULT_BOTTLEROCKET_IMAGE,
    });
  return rebootPod({
    operation: a.operation,
    node: { name: a.node, taints: a.taints },
    bootID: a.bootID,
    namespace: a.namespace,
    ...(a.image !== undefined ? { image: a.image } : {}),
  });
}

export function createRebootPodAction(a: ActionOf<'createRebootPod'>, d: ActionDeps): Promise<Outcome> {
  return createRebootPod(rebootPodFor(a), d);
}

export function deleteJobAction(a: ActionOf<'deleteJob'>, d: ActionDeps): Promise<Outcome> {
  return deleteFinishedJob(a.namespace, a.name, d);
}

export function deleteRebootPodAction(a: ActionOf<'deleteRebootPod'>, d: ActionDeps): Promise<Outcome> {
  return deleteRebootPod(a.namespace, a.name, d);
}
