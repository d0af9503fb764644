/**
 * What one NodeOp's round reads: the spec, the nodes it selects (control plane first), each
 * node's standing towards this NodeOp (done for this revision, held by it, held by another
 * operation, free), and the Jobs and reboot pods observed for it.
 */
import { matchesSelector } from '../../observe/selector.js';
import type { ObservedJob, ObservedNode, ObservedPod } from '../../observe/types.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../protocol/keys.js';
import { nodeJobName, rebootPodName, type OperationRef } from '../../protocol/jobs.js';
import type { DesiredState, NodeOp } from '../../spec/model.js';
import type { ClusterBudget } from '../budget.js';
import type { PlanBuilder } from '../builder.js';
import { compareNames } from '../order.js';
import { standing, type Standing } from '../sequence/holder.js';
import type { SpecRef } from '../types.js';
import { podsOn, type ClusterView } from '../view.js';

/** Where node Jobs and reboot pods run and how long a reboot may take (plan options). */
export interface NodeOpSettings {
  readonly jobNamespace: string;
  readonly rebootTimeoutMs: number;
  readonly rebootImage?: string;
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
  /** The selected nodes, control-plane nodes first, then by name. */
  readonly nodes: readonly ObservedNode[];
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
}

export function buildNodeOpContext(
  input: Omit<NodeOpContext, 'spec' | 'operation' | 'jobsByName' | 'nodes' | 'record' | 'appliesImage'>,
  inPlace?: InPlaceAs,
): NodeOpContext {
  const { op, view } = input;
  const nodes = view.observed.nodes
    .filter((n) => op.nodeSelector === undefined || matchesSelector(op.nodeSelector, n.labels))
    .sort((a, b) => Number(isControlPlane(b)) - Number(isControlPlane(a)) || compareNames(a.name, b.name));
  const jobsByName = jobsIn(view, input.settings.jobNamespace);
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
    };
  }
  const record = { key: nodeOpRecordKey(op.name), value: op.revision };
  return {
    ...input,
    spec: specOf(op),
    operation: { kind: 'NodeOp', name: op.name, revision: op.revision },
    jobsByName,
    nodes,
    record,
  };
}

export type { Standing } from '../sequence/holder.js';

/** A node's standing towards this NodeOp: its locks are its kind's of its name; done by its record. */
export function standingOf(ctx: NodeOpContext, node: ObservedNode): Standing {
  return standing(node, ctx.view.stateOf(node), {
    mine: (lock) => lock.kind === ctx.operation.kind && lock.name === ctx.op.name,
    current: (lock) => lock.revision === ctx.op.revision,
    done: (n) => n.annotations[ctx.record.key] === ctx.record.value,
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
