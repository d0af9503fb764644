/**
 * The state of one NodeImage's replace rollout as the planner sees it this round: its scaling
 * groups, every instance with its node in rollout order, and who holds each node. Built fresh
 * from the observed state every time; what the round decides is returned by its steps and
 * folded in tally.ts.
 */
import type { GroupDescription, Instance } from '../../cloud/provider.js';
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { DesiredState, NodeImage, ScalingGroup } from '../../spec/model.js';
import type { ClusterBudget } from '../budget.js';
import type { PlanBuilder } from '../builder.js';
import type { ResolvedOptions } from '../options.js';
import { compareStrings, tierOf, type Ordered, compareOrdered } from '../order.js';
import { lockValue } from '../protocol.js';
import { resolveLimits } from '../quantity.js';
import { standing, type Standing } from '../sequence/holder.js';
import type { SpecRef } from '../types.js';
import { nodeOf, type ClusterView } from '../view.js';

export interface GroupState {
  readonly sg: ScalingGroup;
  readonly group: GroupDescription;
  readonly byId: ReadonlyMap<string, Instance>;
  /** The group's size without the replacements in flight: what percentages are of. */
  readonly base: number;
  /** Replacement instances allowed at once. */
  readonly maxSurge: number;
  /** Nodes of this group in flight at once. */
  readonly parallelism: number;
}

/** Who holds a node, from this rollout's point of view. */
export type Ownership = Exclude<Standing, 'done'>;

export interface Entry {
  readonly group: GroupState;
  readonly instance: Instance;
  readonly node: ObservedNode | undefined;
  readonly order: Ordered;
  /** The instance runs another image than the desired one. */
  readonly outdated: boolean;
}

/** What a round says about a ScalingGroup before any node moves, in rollout order. */
export type GroupNotice =
  | { readonly kind: 'unobserved'; readonly sg: ScalingGroup; readonly why: string; readonly until?: number }
  | { readonly kind: 'settingImage'; readonly sg: ScalingGroup; readonly groupId: string; readonly from: string }
  | { readonly kind: 'zeroSurge'; readonly sg: ScalingGroup };

export interface RolloutContext {
  readonly desired: DesiredState;
  readonly image: NodeImage;
  readonly spec: SpecRef;
  readonly lock: string;
  readonly now: number;
  readonly nowIso: string;
  readonly options: ResolvedOptions;
  readonly view: ClusterView;
  readonly b: PlanBuilder;
  readonly budget: ClusterBudget;
  readonly groups: readonly GroupState[];
  /** Groups whose state is unknown or whose image is being set: nothing else happens there. */
  readonly blockedGroups: number;
  readonly notices: readonly GroupNotice[];
  /** Every non-terminating instance of the observed groups, in rollout order. */
  readonly entries: readonly Entry[];
  /**
   * The instances of groups whose image is being set this round, in rollout order: nothing
   * happens to them yet, but the forecast shows them.
   */
  readonly upcoming: readonly Entry[];
  /** The groups of `upcoming`. */
  readonly upcomingGroups: readonly GroupState[];
  readonly entryByNode: ReadonlyMap<string, Entry>;
  /**
   * Whether the rollout has anything left to do in a group the cluster-autoscaler may scale,
   * as observed before this round acts (which keeps the autoscaler paused): derived here once.
   * A group that says `autoscaling: false` is not the autoscaler's, so its work does not count.
   */
  readonly running: boolean;
  /**
   * Stale-revision nodes the settle stage took over under the current revision (tally.ts):
   * empty until then, after it the round goes on with a context that names them.
   */
  readonly adopted: ReadonlySet<string>;
}

export function ownership(ctx: Pick<RolloutContext, 'image' | 'adopted' | 'view'>, node: ObservedNode): Ownership {
  const own = standing(node, ctx.view.stateOf(node), {
    // Only this NodeImage replaces nodes of its groups, so any NodeImage lock here is ours:
    // another name is left from before the ScalingGroup pointed at this NodeImage. An in-place
    // hold is the in-place kind's.
    mine: (lock, state) => lock.kind === 'NodeImage' && !state.inPlaceHold,
    current: (lock) =>
      ctx.adopted.has(node.name) || (lock.name === ctx.image.name && lock.revision === ctx.image.revision),
  });
  return own === 'done' ? 'free' : own;
}

/** The group's limits: its size without replacements in flight, and what that allows. */
function groupState(view: ClusterView, image: NodeImage, sg: ScalingGroup, group: GroupDescription): GroupState {
  const byId = new Map<string, Instance>();
  for (const inst of group.instances) if (inst.state !== 'terminating') byId.set(inst.id, inst);
  let replacements = 0;
  for (const inst of byId.values()) if (view.claimed.has(inst.id)) replacements++;
  const size = Math.max(0, group.targetSize - replacements);
  const limits = resolveLimits(image.rollout.maxSurge, image.rollout.maxUnavailable, size);
  // Replacing needs one new instance per node in flight, whatever maxSurge says.
  const maxSurge = Math.max(1, limits.maxSurge);
  // A cordoned node whose replacement is Ready takes no capacity away, so maxUnavailable 0
  // does not stop a surge-first replacement; a positive one caps the nodes drained at once.
  const unavailable = limits.maxUnavailable > 0 ? limits.maxUnavailable : maxSurge;
  return { sg, group, byId, base: size, maxSurge, parallelism: Math.min(maxSurge, unavailable) };
}

/**
 * Whether an observed group has work left for this rollout: its image is not set yet, an
 * instance runs another image, or a node of it is still held by a NodeImage (any name: a lock
 * left from before the ScalingGroup pointed here is settled by this rollout).
 */
function groupRunning(view: ClusterView, image: NodeImage, group: GroupDescription): boolean {
  if (group.image !== image.image) return true;
  for (const inst of group.instances) {
    if (inst.state === 'terminating') continue;
    if (inst.image !== image.image) return true;
    const node = nodeOf(view, inst);
    const state = node !== undefined ? view.stateOf(node) : undefined;
    if (state?.holds === true && state.lock?.kind === 'NodeImage') return true;
  }
  return false;
}

/** The nodes of the observed groups that say `autoscaling: false`: their rollout leaves the autoscaler alone. */
function nodesOfUnscaledGroups(view: ClusterView, scalingGroups: readonly ScalingGroup[]): Set<string> {
  const names = new Set<string>();
  for (const sg of scalingGroups) {
    if (sg.autoscaling !== false) continue;
    const observed = view.observed.cloudGroups.find((g) => g.scalingGroup === sg.name);
    for (const inst of observed?.description.instances ?? []) {
      const node = nodeOf(view, inst);
      if (node !== undefined) names.add(node.name);
    }
  }
  return names;
}

function entriesOf(view: ClusterView, image: NodeImage, list: readonly GroupState[]): Entry[] {
  const out: Entry[] = [];
  for (const g of list) {
    const tier = tierOf(image.rollout.order, g.sg.role);
    for (const inst of g.byId.values()) {
      const node = nodeOf(view, inst);
      const name = node?.name ?? inst.id;
      out.push({
        group: g,
        instance: inst,
        node,
        order: { tier, group: image.rollout.order === 'byName' ? '' : g.sg.name, name },
        outdated: inst.image !== image.image,
      });
    }
  }
  return out.sort((x, y) => compareOrdered(x.order, y.order));
}

/**
 * The rollout as observed, before anything is decided: nothing is written to the plan here
 * (the round announces `notices` first thing), so it can be built before the autoscaler is
 * planned, which needs to know whether any rollout is `running`.
 */
export function buildRollout(
  base: Pick<RolloutContext, 'desired' | 'image' | 'now' | 'options' | 'view' | 'b' | 'budget'>,
): RolloutContext {
  const { desired, image, view } = base;
  const groups: GroupState[] = [];
  const upcomingGroups: GroupState[] = [];
  const notices: GroupNotice[] = [];
  let running = false;
  const scalingGroups = desired.scalingGroups
    .filter((sg) => sg.nodeImage === image.name)
    .sort(
      (x, y) =>
        tierOf(image.rollout.order, x.role) - tierOf(image.rollout.order, y.role) || compareStrings(x.name, y.name),
    );
  for (const sg of scalingGroups) {
    const observed = view.observed.cloudGroups.find((g) => g.scalingGroup === sg.name);
    const problem = view.observed.problems.find((p) => p.source === `cloud/${sg.name}`);
    if (observed !== undefined && sg.autoscaling !== false) running ||= groupRunning(view, image, observed.description);
    if (observed === undefined || problem !== undefined) {
      const why = problem !== undefined ? problem.message : `scaling group ${sg.groupId} was not observed this round`;
      const until = problem?.retryAfterSeconds !== undefined ? base.now + problem.retryAfterSeconds * 1000 : undefined;
      notices.push({ kind: 'unobserved', sg, why, ...(until !== undefined ? { until } : {}) });
      continue;
    }
    const group = observed.description;
    const state = groupState(view, image, sg, group);
    if (group.image !== image.image) {
      notices.push({ kind: 'settingImage', sg, groupId: group.groupId, from: group.image });
      upcomingGroups.push(state);
      continue;
    }
    if (resolveLimits(image.rollout.maxSurge, image.rollout.maxUnavailable, state.base).maxSurge === 0)
      notices.push({ kind: 'zeroSurge', sg });
    groups.push(state);
  }
  const notAutoscaled = nodesOfUnscaledGroups(view, scalingGroups);
  running ||= view.observed.nodes.some((n) => {
    const { holds, lock } = view.stateOf(n);
    return holds && lock?.kind === 'NodeImage' && lock.name === image.name && !notAutoscaled.has(n.name);
  });
  const entries = entriesOf(view, image, groups);
  const entryByNode = new Map<string, Entry>();
  for (const e of entries) if (e.node !== undefined) entryByNode.set(e.node.name, e);
  return {
    ...base,
    spec: { kind: 'NodeImage', name: image.name },
    lock: lockValue('NodeImage', image.name, image.revision),
    nowIso: new Date(base.now).toISOString(),
    groups,
    blockedGroups: notices.filter((n) => n.kind !== 'zeroSurge').length,
    notices,
    entries,
    entryByNode,
    upcoming: entriesOf(view, image, upcomingGroups),
    upcomingGroups,
    running,
    adopted: new Set(),
  };
}

/** When the node entered its current phase (drydock.dev/phase-since), or now. */
export function since(ctx: RolloutContext, node: ObservedNode): number {
  return ctx.view.stateOf(node).since ?? ctx.now;
}

/** The replacement instance the node names (drydock.dev/replaced-by), if any. */
export function replacementOf(e: Entry): string | undefined {
  const id = e.node?.annotations[ANNOTATIONS.replacedBy];
  return id === undefined || id === '' ? undefined : id;
}
