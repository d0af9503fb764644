/**
 * What one NodeOp's round reads: the spec, the nodes it selects (control plane first), each
 * node's standing towards this NodeOp (done for this revision, held by it, held by another
 * operation, free), and the Jobs and reboot pods observed for it.
 */
import { matchesSelector } from '../../observe/selector.js';
import type { ObservedJob, ObservedNode, ObservedPod } from '../../observe/types.js';
import { ANNOTATIONS, bottlerocketRecordKey, nodeOpRecordKey } from '../../protocol/keys.js';
import { bottlerocketOsImage, bottlerocketTarget, bottlerocketVersionOf } from '../../spec/os-image.js';
import { jobLabels, nodeJobName, rebootPodName, type OperationRef } from '../../protocol/jobs.js';
import type { DesiredState, NodeOp } from '../../spec/model.js';
import type { ClusterBudget } from '../budget.js';
import type { PlanBuilder } from '../builder.js';
import { compareNames } from '../order.js';
import { standing, type Standing } from '../sequence/holder.js';
import type { SpecRef } from '../types.js';
import { podsOn, type ClusterView } from '../view.js';
import { oneShotSelection, type OneShotSelection } from './selection.js';

/** Where node Jobs and reboot pods run, their images, and how long a reboot may take (plan options). */
export interface NodeOpSettings {
  readonly jobNamespace: string;
  readonly rebootTimeoutMs: number;
  readonly rebootImage?: string;
  /** The Bottlerocket update Job's and API reboot pod's image. */
  readonly bottlerocketImage?: string;
  /** When this drydock began acting: a drain's timeout counts from then at the earliest. */
  readonly actingSince?: number;
}

export interface NodeOpContext {
  readonly desired: DesiredState;
  readonly op: NodeOp;
  /** The spec status and actions are for: the NodeOpUpgrade a generated NodeOp stands for. */
  readonly spec: SpecRef;
  readonly operation: OperationRef;
  readonly now: number;
  readonly view: ClusterView;
  readonly b: PlanBuilder;
  readonly budget: ClusterBudget;
  readonly settings: NodeOpSettings;
  readonly jobsByName: ReadonlyMap<string, ObservedJob>;
  /** What a done node carries: `nodeop.drydock.dev/<name>` = revision, or for inPlace drydock.dev/image = image. */
  readonly record: { readonly key: string; readonly value: string };
  /** inPlace: the image the Job puts on the node (marked on its pod). */
  readonly appliesImage?: string;
  /**
   * A Bottlerocket NodeImage: its target as written (X.Y.Z or latest) and the version every Job
   * is pinned to: the written one, or what `latest` resolved to on the first node (absent until then).
   */
  readonly bottlerocket?: { readonly requested: string; readonly version?: string };
  /** What a node must report in status.nodeInfo.osImage after its reboot (exact, or /regex/); absent: not verified by the OS. */
  readonly expectedOsImage?: string;
  /** The selected nodes, control-plane nodes first, then by name (a one-shot NodeOp's: its members). */
  readonly nodes: readonly ObservedNode[];
  /** A one-shot NodeOp (followNewNodes false): the nodes it selected when first seen, and those that came later. */
  readonly oneShot?: OneShotSelection;
}

const CONTROL_PLANE_KEYS = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

export function isControlPlane(node: ObservedNode): boolean {
  return CONTROL_PLANE_KEYS.some((k) => k in node.labels || node.taints.some((t) => t.key === k));
}

export function specOf(op: NodeOp): SpecRef {
  if (op.generatedBy === undefined) return { kind: 'NodeOp', name: op.name };
  const slash = op.generatedBy.indexOf('/');
  return { kind: 'NodeOpUpgrade', name: op.generatedBy.slice(slash + 1) };
}

/** How an inPlace NodeImage runs on this machinery: its lock kind, record and image. */
export interface InPlaceAs {
  readonly spec: SpecRef;
  readonly image: string;
  /** The image is a Bottlerocket version or latest, applied through the node's update API. */
  readonly bottlerocket?: boolean;
}

/**
 * The version `latest` of this revision resolved to: recorded on the node whose update Job found
 * it (the first of the rollout; by name, should a second one ever carry it).
 */
export function resolvedVersion(view: ClusterView, op: Pick<NodeOp, 'name' | 'revision'>): string | undefined {
  const key = bottlerocketRecordKey(op.name);
  const found = view.observed.nodes
    .map((n) => ({ name: n.name, value: n.annotations[key] }))
    .filter((n) => n.value !== undefined && n.value.startsWith(`${op.revision} `))
    .sort((a, b) => compareNames(a.name, b.name))[0];
  return found?.value?.slice(op.revision.length + 1);
}

function bottlerocketOf(
  view: ClusterView,
  op: NodeOp,
  image: string,
): { bottlerocket: NonNullable<NodeOpContext['bottlerocket']>; expectedOsImage?: string } {
  const target = bottlerocketTarget(image);
  const version = target !== undefined && 'version' in target ? target.version : resolvedVersion(view, op);
  return {
    bottlerocket: { requested: image, ...(version !== undefined ? { version } : {}) },
    ...(version !== undefined ? { expectedOsImage: bottlerocketOsImage(version) } : {}),
  };
}

export function buildNodeOpContext(
  input: Omit<
    NodeOpContext,
    | 'spec'
    | 'operation'
    | 'jobsByName'
    | 'nodes'
    | 'record'
    | 'appliesImage'
    | 'bottlerocket'
    | 'expectedOsImage'
    | 'oneShot'
  >,
  inPlace?: InPlaceAs,
): NodeOpContext {
  const { op, view } = input;
  const nodes = view.observed.nodes
    .filter((n) => op.nodeSelector === undefined || matchesSelector(op.nodeSelector, n.labels))
    .sort((a, b) => Number(isControlPlane(b)) - Number(isControlPlane(a)) || compareNames(a.name, b.name));
  const jobsByName = jobsIn(view, input.settings.jobNamespace);
  if (inPlace?.bottlerocket === true) {
    const br = bottlerocketOf(view, op, inPlace.image);
    return {
      ...input,
      spec: inPlace.spec,
      operation: { kind: 'NodeImage', name: op.name, revision: op.revision },
      jobsByName,
      nodes,
      record: { key: ANNOTATIONS.image, value: br.bottlerocket.version ?? inPlace.image },
      ...br,
    };
  }
  if (inPlace !== undefined) {
    const record = { key: ANNOTATIONS.image, value: inPlace.image };
    return {
      ...input,
      spec: inPlace.spec,
      operation: { kind: 'NodeImage', name: op.name, revision: op.revision },
      jobsByName,
      nodes,
      record,
      appliesImage: inPlace.image,
      ...(op.osImage !== undefined ? { expectedOsImage: op.osImage } : {}),
    };
  }
  const record = { key: nodeOpRecordKey(op.name), value: op.revision };
  const oneShot = op.followNewNodes
    ? undefined
    : oneShotSelection(op, view.observed.nodes, nodes, input.now, (n) => {
        const { lock } = view.stateOf(n);
        const held = lock?.kind === 'NodeOp' && lock.name === op.name && lock.revision === op.revision;
        return held || n.annotations[record.key] === record.value;
      });
  return {
    ...input,
    spec: specOf(op),
    operation: { kind: 'NodeOp', name: op.name, revision: op.revision },
    jobsByName,
    nodes: oneShot?.members ?? nodes,
    ...(oneShot !== undefined ? { oneShot } : {}),
    record,
    ...(op.osImage !== undefined ? { expectedOsImage: op.osImage } : {}),
  };
}

export type { Standing } from '../sequence/holder.js';

/** A node's standing towards this NodeOp: its locks are its kind's of its name; done by its record. */
export function standingOf(ctx: NodeOpContext, node: ObservedNode): Standing {
  return standing(node, ctx.view.stateOf(node), {
    mine: (lock) => lock.kind === ctx.operation.kind && lock.name === ctx.op.name,
    current: (lock) => lock.revision === ctx.op.revision,
    // A Bottlerocket node is done when its OS reports the version, whoever put it there.
    done: (n) =>
      ctx.bottlerocket !== undefined
        ? ctx.bottlerocket.version !== undefined && bottlerocketVersionOf(n.osImage) === ctx.bottlerocket.version
        : n.annotations[ctx.record.key] === ctx.record.value,
  });
}

/** What settling a node needs: no NodeOp spec, since it may be gone from Git. */
export type SettleContext = Pick<NodeOpContext, 'spec' | 'b' | 'view' | 'settings' | 'jobsByName'>;

export function jobsIn(view: ClusterView, namespace: string): Map<string, ObservedJob> {
  const out = new Map<string, ObservedJob>();
  for (const j of view.observed.jobs) if (j.namespace === namespace) out.set(j.name, j);
  return out;
}

export function jobOf(
  ctx: Pick<NodeOpContext, 'jobsByName'>,
  op: OperationRef,
  node: string,
): { name: string; job?: ObservedJob } {
  const name = nodeJobName(op, node);
  const job = ctx.jobsByName.get(name);
  return job === undefined ? { name } : { name, job };
}

/** The reboot pod started for the recorded bootID, if observed. */
export function rebootPodOf(
  ctx: Pick<NodeOpContext, 'view' | 'settings'>,
  node: string,
  bootID: string,
): { name: string; pod?: ObservedPod } {
  const name = rebootPodName(node, bootID);
  const pod = podsOn(ctx.view, node).find((p) => p.namespace === ctx.settings.jobNamespace && p.name === name);
  return pod === undefined ? { name } : { name, pod };
}

/**
 * The reboot pod of `op` on `node` that says which boot it reboots (its recorded bootID),
 * whatever that boot is: the first by name. One made beside a Rebooting that was not written
 * is found so, the node's phase still Updating (step.ts enterRebooting).
 */
export function rebootPodMade(
  ctx: Pick<NodeOpContext, 'view' | 'settings'>,
  op: OperationRef,
  node: string,
): ObservedPod | undefined {
  const want = Object.entries(jobLabels(op, node, 'reboot'));
  return podsOn(ctx.view, node)
    .filter((p) => p.namespace === ctx.settings.jobNamespace && p.rebootsFrom !== undefined)
    .filter((p) => want.every(([k, v]) => p.labels[k] === v))
    .sort((a, b) => compareNames(a.name, b.name))[0];
}
