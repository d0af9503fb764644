/**
 * One function per Action kind, each safe to repeat: it reads what it must, does the least
 * change that reaches the action's intended state, and treats "already there" (404 on a
 * delete, an already-cordoned node) as success. Failures throw; `execute` classifies them.
 */
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Eviction,
  type V1Node,
} from '@kubernetes/client-node';
import { CloudError, type CloudProvider } from '../cloud/provider.js';
import type { NodeTaint } from '../protocol/jobs.js';
import { ANNOTATIONS, DRAIN_PENDING_TAINT, LABELS } from '../protocol/keys.js';
import { CORDON_TAINT } from './jobs/node-job.js';
import type { Action } from '../plan/types.js';
import type { Outcome } from './classify.js';
import { httpStatus } from './classify.js';
import { plural } from '../words.js';
import { noteWrite, type WriteListener } from '../kube/written.js';

export interface KubeApis {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  /** Jobs drydock runs on nodes (src/execute/node-jobs.ts). */
  readonly batch: BatchV1Api;
  /** MachineConfigPools (the MCO kind's pause and canary selector). */
  readonly custom: CustomObjectsApi;
}

export interface ActionDeps {
  readonly kube: KubeApis;
  /** The provider that owns a group id, if configured. */
  readonly cloud: (groupId: string) => CloudProvider | undefined;
  /** fieldManager for every write. */
  readonly fieldManager: string;
  /**
   * Told of each watched object written, with the version the API server gave it: the next
   * round starts once the caches have seen them (src/observe/seen-writes.ts).
   */
  readonly wrote?: WriteListener;
  /**
   * A node as the caches hold it (its resourceVersion, spec and annotations), if they do: a
   * cordon or an uncordon that this copy says to write is written with its version as the
   * precondition, without reading the node first; a 409 (the copy was behind) reads the node
   * then, and leaving a node as it is is decided only from a read (writeCordon).
   */
  readonly cachedNode?: (name: string) => V1Node | undefined;
}

export type ActionOf<K extends Action['kind']> = Extract<Action, { kind: K }>;

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const DONE: Outcome = { kind: 'done' };

/** Runs `fn`; a 404 from the API means the object is already gone, which is what we wanted. */
async function goneIsDone(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    await fn();
    return DONE;
  } catch (err) {
    if (httpStatus(err) === 404) return { kind: 'skipped', reason: 'already gone' };
    throw err;
  }
}

/**
 * Read-then-write with the read's resourceVersion as precondition; a 409 (someone else wrote
 * in between — the kubelet's heartbeat, a controller's status update) reads again. `fn` is
 * told whether this is the first try (which may decide from the caches instead of a read).
 */
async function withFreshRead<T>(fn: (first: boolean) => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn(i === 1);
    } catch (err) {
      if (httpStatus(err) !== 409 || i >= attempts) throw err;
    }
  }
}

/**
 * A cordon's or an uncordon's write, decided by `step` from the node as it stands: on the first
 * try from the caches' copy when they hold one and it calls for a patch (whose resourceVersion
 * precondition turns a stale copy into a 409, and the next try reads); a decision to leave the
 * node alone is only ever taken from a read, never from a copy that may be behind.
 */
async function writeCordon(
  d: ActionDeps,
  name: string,
  first: boolean,
  step: (node: NodeCordonState) => CordonStep,
): Promise<Outcome> {
  const cached = first ? d.cachedNode?.(name) : undefined;
  if (cached?.metadata?.resourceVersion !== undefined) {
    const decided = step(stateOf(cached));
    if (decided.kind === 'patch') return patchCordon(d, name, cached, decided);
  }
  const node = await d.kube.core.readNode({ name });
  return patchCordon(d, name, node, step(stateOf(node)));
}

function noCloud(groupId: string): never {
  throw new CloudError(
    'Permanent',
    `no cloud provider is configured for group ${groupId}; start drydock with --provider`,
    { groupId },
  );
}

/**
 * What an annotateNode action writes, to ride along in a cordon's or uncordon's patch: one
 * write instead of two, and the phase and the cordon change together (see pairedAnnotation).
 */
export interface NodeMetadataPatch {
  readonly annotations: Record<string, string | null>;
  readonly labels: Record<string, string | null>;
}

export function metadataOf(a: ActionOf<'annotateNode'>): NodeMetadataPatch {
  // The phase label changes in the same patch as the annotation, so the two never disagree.
  const phase = a.annotations[ANNOTATIONS.phase];
  return { annotations: { ...a.annotations }, labels: phase === undefined ? {} : { [LABELS.phase]: phase } };
}

const NO_METADATA: NodeMetadataPatch = { annotations: {}, labels: {} };

function labelsPart(m: NodeMetadataPatch): { labels?: Record<string, string | null> } {
  return Object.keys(m.labels).length > 0 ? { labels: m.labels } : {};
}

/** Cordons; `with` (an annotateNode's patch) is written in the same patch when the cordon is done. */
export function cordon(a: ActionOf<'cordon'>, d: ActionDeps, withMeta = NO_METADATA): Promise<Outcome> {
  return withFreshRead((first) => writeCordon(d, a.node, first, (node) => cordonStep(node, withMeta)));
}

/** A node as a cordon or an uncordon reads it before it writes. */
export interface NodeCordonState {
  readonly unschedulable: boolean;
  readonly annotations: Readonly<Record<string, string>>;
  /** Its taints: an uncordon takes drydock's mark of a node drained later off with it. */
  readonly taints?: NodeTaints;
}

/**
 * What a cordon or an uncordon writes: the node's metadata and spec.unschedulable, in one merge
 * patch; an uncordon's also the taint list without drydock's drain-pending mark, when it had it.
 */
export interface CordonPatch {
  readonly annotations: Record<string, string | null>;
  readonly labels?: Record<string, string | null>;
  readonly unschedulable: true | null;
  readonly taints?: NodeTaints;
}

/** A cordon's or an uncordon's decision: leave the node as it is (and why), or write the patch. */
export type CordonStep =
  Extract<Outcome, { kind: 'skipped' }> | { readonly kind: 'patch'; readonly patch: CordonPatch };

function stateOf(node: V1Node): NodeCordonState {
  return {
    unschedulable: node.spec?.unschedulable === true,
    annotations: node.metadata?.annotations ?? {},
    taints: taintsOf(node),
  };
}

/** A node's taints as read, for a write of the whole list. */
function taintsOf(node: V1Node): NodeTaints {
  return (node.spec?.taints ?? []).map((t) => ({
    key: t.key,
    effect: t.effect,
    ...(t.value !== undefined ? { value: t.value } : {}),
    ...(t.timeAdded !== undefined ? { timeAdded: t.timeAdded } : {}),
  }));
}

/** What a cordon does to a node as it stands (pure: the simulated worlds of the tests apply it too). */
export function cordonStep(node: NodeCordonState, withMeta = NO_METADATA): CordonStep {
  const ours = node.annotations[ANNOTATIONS.cordoned] === 'true';
  if (node.unschedulable) {
    // Cordoned by someone else: leave it and do not claim it, so drydock never uncordons it.
    return ours
      ? { kind: 'skipped', reason: 'already cordoned by drydock' }
      : { kind: 'skipped', reason: 'already cordoned by someone else; drydock will not uncordon it' };
  }
  return {
    kind: 'patch',
    patch: {
      annotations: { ...withMeta.annotations, [ANNOTATIONS.cordoned]: 'true' },
      ...labelsPart(withMeta),
      unschedulable: true,
    },
  };
}

/**
 * What an uncordon does to a node as it stands: only drydock's own cordon is lifted, and the
 * node's turn has passed, so drydock's mark of a node drained later goes in the same patch.
 * That patch writes the whole taint list, read while the node was cordoned: without the
 * controller's unschedulable taint too, which the uncordon makes stale (written back, it would
 * keep pods off the uncordoned node until the controller takes it off again).
 */
export function uncordonStep(node: NodeCordonState, withMeta = NO_METADATA): CordonStep {
  if (node.annotations[ANNOTATIONS.cordoned] !== 'true') {
    return { kind: 'skipped', reason: 'not cordoned by drydock; left as it is' };
  }
  const taints = unmarkedTaints({ taints: node.taints ?? [], annotations: node.annotations })?.filter(
    (t) => t.key !== CORDON_TAINT.key,
  );
  return {
    kind: 'patch',
    patch: {
      annotations: {
        ...withMeta.annotations,
        [ANNOTATIONS.cordoned]: null,
        ...(taints !== undefined ? { [ANNOTATIONS.drainPending]: null } : {}),
      },
      ...labelsPart(withMeta),
      unschedulable: null,
      ...(taints !== undefined ? { taints } : {}),
    },
  };
}

/** Writes a cordon's or an uncordon's patch; resourceVersion makes the read-then-write atomic (409 on a race). */
async function patchCordon(d: ActionDeps, name: string, node: V1Node, step: CordonStep): Promise<Outcome> {
  if (step.kind === 'skipped') return step;
  const { unschedulable, taints, ...metadata } = step.patch;
  const written = await d.kube.core.patchNode(
    {
      name,
      fieldManager: d.fieldManager,
      body: {
        metadata: { resourceVersion: node.metadata?.resourceVersion, ...metadata },
        spec: { unschedulable, ...(taints !== undefined ? { taints } : {}) },
      },
    },
    MERGE,
  );
  noteWrite(d.wrote, 'nodes', written);
  return DONE;
}

/** Uncordons what drydock cordoned; `with` as for cordon. */
export function uncordon(a: ActionOf<'uncordon'>, d: ActionDeps, withMeta = NO_METADATA): Promise<Outcome> {
  return withFreshRead(async (first) => {
    try {
      return await writeCordon(d, a.node, first, (node) => uncordonStep(node, withMeta));
    } catch (err) {
      // Read or written from the caches' copy: a node deleted since has nothing to uncordon.
      if (httpStatus(err) === 404) return { kind: 'skipped', reason: 'node is gone' };
      throw err;
    }
  });
}

/**
 * A node's taints as a write of the whole list reads them: as observed, with the time each was
 * added, so that a list written back keeps it.
 */
export type NodeTaints = readonly (NodeTaint & { readonly timeAdded?: Date })[];

/** What a markDrainPending writes: the node's whole taint list (a merge patch replaces a list) and the annotation. */
export interface DrainPendingPatch {
  readonly taints: NodeTaints;
  readonly annotation: string | null;
}

/** A node as a markDrainPending reads it. */
type MarkableNode = { readonly taints: NodeTaints; readonly annotations: Readonly<Record<string, string>> };

const isDrainPending = (t: NodeTaints[number]): boolean =>
  t.key === DRAIN_PENDING_TAINT.key && t.effect === DRAIN_PENDING_TAINT.effect;

/**
 * The node's taints without drydock's mark of a node drained later; undefined when it carries
 * none of drydock's (no such taint, or one without drydock's annotation: someone else's).
 */
export function unmarkedTaints(node: MarkableNode): NodeTaints | undefined {
  if (!node.taints.some(isDrainPending) || node.annotations[ANNOTATIONS.drainPending] === undefined) return undefined;
  return node.taints.filter((t) => !isDrainPending(t));
}

/**
 * What markDrainPending does to a node as it stands (pure: the simulated worlds of the tests
 * apply it too): the taint added after the others, with the annotation naming `spec`, or
 * drydock's taken out of them; nothing when the node already is as asked, or when the taint
 * there is not drydock's (no annotation of it).
 */
export function drainPendingStep(
  node: MarkableNode,
  pending: boolean,
  spec: { readonly kind: string; readonly name: string },
): Extract<Outcome, { kind: 'skipped' }> | { readonly kind: 'patch'; readonly patch: DrainPendingPatch } {
  const there = node.taints.some(isDrainPending);
  if (pending) {
    if (there) return { kind: 'skipped', reason: 'already marked as drained later' };
    const patch = { taints: [...node.taints, { ...DRAIN_PENDING_TAINT }], annotation: `${spec.kind}/${spec.name}` };
    return { kind: 'patch', patch };
  }
  if (!there) return { kind: 'skipped', reason: 'not marked as drained later' };
  const taints = unmarkedTaints(node);
  if (taints === undefined) return { kind: 'skipped', reason: "the taint is not drydock's; left as it is" };
  return { kind: 'patch', patch: { taints, annotation: null } };
}

/**
 * Puts DRAIN_PENDING_TAINT on a node or takes drydock's off. The taint list is written whole,
 * so the read's resourceVersion guards the write (409: read again): a taint the node lifecycle
 * controller put on in between is never lost.
 */
export function markDrainPending(a: ActionOf<'markDrainPending'>, d: ActionDeps): Promise<Outcome> {
  return withFreshRead(async () => {
    let node: V1Node;
    try {
      node = await d.kube.core.readNode({ name: a.node });
    } catch (err) {
      if (httpStatus(err) === 404) return { kind: 'skipped', reason: 'node is gone' };
      throw err;
    }
    const step = drainPendingStep(
      { taints: taintsOf(node), annotations: node.metadata?.annotations ?? {} },
      a.pending,
      a.spec,
    );
    if (step.kind === 'skipped') return step;
    const written = await d.kube.core.patchNode(
      {
        name: a.node,
        fieldManager: d.fieldManager,
        body: {
          metadata: {
            resourceVersion: node.metadata?.resourceVersion,
            annotations: { [ANNOTATIONS.drainPending]: step.patch.annotation },
          },
          spec: { taints: step.patch.taints },
        },
      },
      MERGE,
    );
    noteWrite(d.wrote, 'nodes', written);
    return DONE;
  });
}

export async function annotateNode(a: ActionOf<'annotateNode'>, d: ActionDeps): Promise<Outcome> {
  const m = metadataOf(a);
  const written = await d.kube.core.patchNode(
    {
      name: a.node,
      fieldManager: d.fieldManager,
      body: { metadata: { annotations: m.annotations, ...labelsPart(m) } },
    },
    MERGE,
  );
  noteWrite(d.wrote, 'nodes', written);
  return DONE;
}

export async function copyLabels(a: ActionOf<'copyLabels'>, d: ActionDeps): Promise<Outcome> {
  const written = await d.kube.core.patchNode(
    { name: a.to, fieldManager: d.fieldManager, body: { metadata: { labels: { ...a.labels } } } },
    MERGE,
  );
  noteWrite(d.wrote, 'nodes', written);
  return DONE;
}

/** Sets and removes node labels in one merge patch (null removes; a missing label is no error). */
export async function labelNode(a: ActionOf<'labelNode'>, d: ActionDeps): Promise<Outcome> {
  const written = await d.kube.core.patchNode(
    { name: a.node, fieldManager: d.fieldManager, body: { metadata: { labels: { ...a.labels } } } },
    MERGE,
  );
  noteWrite(d.wrote, 'nodes', written);
  return DONE;
}

/** Where MachineConfigPools are served (cluster-scoped). */
export const MACHINE_CONFIG_POOLS = {
  group: 'machineconfiguration.openshift.io',
  version: 'v1',
  plural: 'machineconfigpools',
} as const;

/**
 * The merge patch of a patchPool: spec.paused with drydock.dev/paused-by (set with a pause,
 * removed with an unpause, so drydock unpauses only what it paused), or the nodeSelector whole.
 * The same patch twice leaves the pool as once.
 */
export function poolPatch(a: ActionOf<'patchPool'>): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (a.paused !== undefined) spec['paused'] = a.paused;
  if (a.nodeSelector !== undefined) spec['nodeSelector'] = a.nodeSelector;
  const pausedBy = a.paused === undefined ? undefined : a.paused ? `${a.spec.kind}/${a.spec.name}` : null;
  return {
    ...(pausedBy !== undefined ? { metadata: { annotations: { [ANNOTATIONS.pausedBy]: pausedBy } } } : {}),
    spec,
  };
}

export async function patchPool(a: ActionOf<'patchPool'>, d: ActionDeps): Promise<Outcome> {
  await d.kube.custom.patchClusterCustomObject(
    { ...MACHINE_CONFIG_POOLS, name: a.pool, body: poolPatch(a), fieldManager: d.fieldManager },
    MERGE,
  );
  return DONE;
}

export async function evict(a: ActionOf<'evict'>, d: ActionDeps): Promise<Outcome> {
  const body: V1Eviction = {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: a.pod, namespace: a.namespace },
    ...(a.gracePeriodSeconds !== undefined ? { deleteOptions: { gracePeriodSeconds: a.gracePeriodSeconds } } : {}),
  };
  // 429 (a PDB refuses) is left to classifyError: waiting, not failed.
  return goneIsDone(() => d.kube.core.createNamespacedPodEviction({ name: a.pod, namespace: a.namespace, body }));
}

export async function deletePod(a: ActionOf<'deletePod'>, d: ActionDeps): Promise<Outcome> {
  return goneIsDone(() =>
    d.kube.core.deleteNamespacedPod({
      name: a.pod,
      namespace: a.namespace,
      ...(a.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: a.gracePeriodSeconds } : {}),
    }),
  );
}

export async function deleteNode(a: ActionOf<'deleteNode'>, d: ActionDeps): Promise<Outcome> {
  return goneIsDone(() => d.kube.core.deleteNode({ name: a.node }));
}

export function scaleDeployment(a: ActionOf<'scaleDeployment'>, d: ActionDeps): Promise<Outcome> {
  return withFreshRead(() => scaleOnce(a, d));
}

/** A Deployment as scaleDeployment reads it: its replicas and the count drydock remembered. */
export interface ScaleState {
  readonly replicas: number;
  /** The previous-replicas annotation, if set. */
  readonly remembered?: string;
}

/** scaleDeployment's decision: nothing to do (and why), or the replicas and remembered count to write (null clears it). */
export type ScaleStep =
  | Extract<Outcome, { kind: 'skipped' }>
  | { readonly kind: 'patch'; readonly replicas: number; readonly previous: string | null };

/** What a scaleDeployment does to a Deployment as it stands (pure: the simulated worlds of the tests apply it too). */
export function scaleStep(dep: ScaleState, a: ActionOf<'scaleDeployment'>): ScaleStep {
  let previous: string | null;
  if (a.rememberPrevious !== undefined) {
    // A count already remembered is the original one (a repeat after a crash must not overwrite it).
    previous = dep.remembered ?? String(a.rememberPrevious);
  } else {
    previous = null;
  }
  if (dep.replicas === a.replicas && (dep.remembered ?? null) === previous)
    return { kind: 'skipped', reason: `already at ${plural(a.replicas, 'replica')}` };
  return { kind: 'patch', replicas: a.replicas, previous };
}

async function scaleOnce(a: ActionOf<'scaleDeployment'>, d: ActionDeps): Promise<Outcome> {
  const dep = await d.kube.apps.readNamespacedDeployment({ name: a.name, namespace: a.namespace });
  const remembered = dep.metadata?.annotations?.[ANNOTATIONS.previousReplicas];
  const step = scaleStep({ replicas: dep.spec?.replicas ?? 1, ...(remembered !== undefined ? { remembered } : {}) }, a);
  if (step.kind === 'skipped') return step;
  // Replicas and the remembered count change in one patch, so a crash can never separate them.
  const written = await d.kube.apps.patchNamespacedDeployment(
    {
      name: a.name,
      namespace: a.namespace,
      fieldManager: d.fieldManager,
      body: {
        metadata: {
          resourceVersion: dep.metadata?.resourceVersion,
          annotations: { [ANNOTATIONS.previousReplicas]: step.previous },
        },
        spec: { replicas: step.replicas },
      },
    },
    MERGE,
  );
  noteWrite(d.wrote, 'deployments', written);
  return DONE;
}

export async function setGroupImage(a: ActionOf<'setGroupImage'>, d: ActionDeps): Promise<Outcome> {
  const provider = d.cloud(a.groupId) ?? noCloud(a.groupId);
  await provider.setGroupImage(a.groupId, a.image);
  return DONE;
}

export async function surge(a: ActionOf<'surge'>, d: ActionDeps): Promise<Outcome> {
  const provider = d.cloud(a.groupId) ?? noCloud(a.groupId);
  await provider.addCapacity(a.groupId, a.count);
  return DONE;
}

export async function removeInstance(a: ActionOf<'removeInstance'>, d: ActionDeps): Promise<Outcome> {
  const provider = d.cloud(a.groupId) ?? noCloud(a.groupId);
  try {
    await provider.removeInstance(a.groupId, a.instanceId);
    return DONE;
  } catch (err) {
    // NotFound on a removal means the instance is gone: what the action wanted.
    if (err instanceof CloudError && err.code === 'NotFound') {
      return { kind: 'skipped', reason: 'instance already gone' };
    }
    throw err;
  }
}
