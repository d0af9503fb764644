/**
 * Taking a free node, for every kind: whether it is this spec's to take now (no other
 * operation holds it, no NodeMaintenance names it, no spec took it earlier this round), then
 * the limits in one order: the spec's slots (concurrency, the canary's share), the kind's own
 * (a group's surge share), the cluster budget. A node held back by a limit is queued, and the
 * spec reports how many wait and for what; a node held by another operation is named.
 */
import type { ObservedNode } from '../../observe/types.js';
import type { DesiredState, RolloutPolicy } from '../../spec/model.js';
import { plural } from '../../words.js';
import type { ClusterBudget } from '../budget.js';
import type { PlanBuilder } from '../builder.js';
import type { NodeState } from '../protocol.js';
import type { SpecRef, WaitCode } from '../types.js';

/** A NodeMaintenance in Git for this node, if any (validation allows one per node). */
export function maintenanceOn(desired: Pick<DesiredState, 'nodeMaintenances'>, node: string) {
  return desired.nodeMaintenances.find((m) => m.nodeName === node);
}

/**
 * Why the node is not this spec's to take now, or undefined when it is. `heldByOther` is the
 * node's state when the kind reads its lock as another operation's, else undefined; `then` says
 * what happens once it is free ("it is replaced").
 */
export function heldElsewhere(
  desired: Pick<DesiredState, 'nodeMaintenances'>,
  b: PlanBuilder,
  node: ObservedNode,
  heldByOther: NodeState | undefined,
  then: string,
): string | undefined {
  if (heldByOther !== undefined) {
    const op = heldByOther.lockText ?? '?';
    const phase = heldByOther.phaseText ?? 'unknown';
    return `${node.name} is held by ${op} (phase ${phase}); ${then} once that operation is done`;
  }
  const maintenance = maintenanceOn(desired, node.name);
  if (maintenance !== undefined)
    return `${node.name} is in NodeMaintenance ${maintenance.name}; ${then} once the maintenance ends`;
  if (b.taken.has(node.name))
    return `${node.name} was taken by another operation this round; ${then} once that one is done`;
  return undefined;
}

interface LimitWait {
  readonly code: Extract<WaitCode, 'concurrency' | 'budget' | 'surge' | 'soak'>;
  readonly reason: string;
}

/**
 * A node of the spec finished this round (its release is among the round's actions): it still
 * counts in flight and against the budget, as observed, and hands its slot and its share of
 * the budget to one node started after its release, in its lane.
 */
export interface HandOver {
  readonly node: string;
  /** Whether the budget counts it unavailable (else only its reservation). */
  readonly unavailable: boolean;
  /**
   * The kind's own limit the node frees as well (a replace's scaling group), if it has one: the
   * slot goes past that limit only to a node under the same one.
   */
  readonly own?: string;
}

/** A node taken: `after`, the finished node whose slot it was handed, whose lane its steps join. */
export interface Taken {
  readonly after?: string;
  /** The hand-over it took, if it took one. */
  readonly from?: HandOver;
}

/** The spec's start slots this round: what concurrency and the canary leave, then the budget. */
export class StartSlots {
  private slots: number;
  private queued = 0;
  private started = 0;
  private first: LimitWait | undefined;
  private readonly handOvers: HandOver[];

  constructor(
    private readonly rollout: Pick<RolloutPolicy, 'canary'> & {
      readonly concurrency: number;
      /** concurrency 0 means "all at once" (a NodeOp's, as Kairos'): a budget that caps it says so. */
      readonly zeroIsAllAtOnce?: boolean;
    },
    inFlight: number,
    private readonly canaryLimit: number | undefined,
    private readonly budget: ClusterBudget,
    handOvers: readonly HandOver[] = [],
  ) {
    const concurrency = rollout.concurrency > 0 ? rollout.concurrency : Number.POSITIVE_INFINITY;
    this.concurrencySlots = concurrency - inFlight;
    this.concurrencyLeft = this.concurrencySlots;
    this.slots = Math.min(this.concurrencySlots, canaryLimit ?? Number.POSITIVE_INFINITY);
    this.handOvers = [...handOvers];
  }

  private readonly concurrencySlots: number;
  /** Concurrency's slots left this round (below 0: more in flight than it allows now). */
  private concurrencyLeft: number;

  /**
   * Takes one slot (and reserves the budget's share) unless a limit holds the node: then a slot a
   * finished node hands over, when only concurrency, the budget or the kind's own limit held it
   * (never past the canary's share, nor past the kind's own limit but with a slot of that same
   * limit: `ownKey`); else it is queued. `own` is the kind's own limit for this node, checked
   * after the spec's.
   */
  take(own?: () => LimitWait | undefined, ownKey?: string): Taken | undefined {
    const spec = this.spec();
    const ownHeld = own?.();
    const held = spec ?? ownHeld ?? this.cluster();
    if (held === undefined) {
      this.budget.reserve();
      this.slots--;
      this.concurrencyLeft--;
      this.started++;
      return {};
    }
    // Past the kind's own limit only with a place of that same limit, so never without a key.
    const handed =
      ownHeld !== undefined && ownKey === undefined
        ? undefined
        : this.handOver(held, ownHeld === undefined ? undefined : ownKey);
    if (handed !== undefined) return handed;
    this.first ??= held;
    this.queued++;
    return undefined;
  }

  /**
   * A hand-over for a node `held` by a limit; `ownKey`, when the kind's own limit holds it too,
   * is the one its slot must come from (none such: no hand-over).
   */
  private handOver(held: LimitWait, ownKey: string | undefined): Taken | undefined {
    if (held.code === 'soak') return undefined;
    if (this.canaryLimit !== undefined && this.started >= this.canaryLimit) return undefined;
    // One for one, and only while that keeps within the limits: a concurrency or a budget
    // lowered under the nodes in flight is reached as they finish, not kept.
    if (this.concurrencyLeft < 0 || !this.budget.withinLimit) return undefined;
    const at = this.handOvers.findIndex((h) => ownKey === undefined || h.own === ownKey);
    const from = this.handOvers[at];
    if (from === undefined) return undefined;
    this.handOvers.splice(at, 1);
    this.budget.giveBack(from.unavailable);
    this.budget.reserve();
    this.started++;
    return { after: from.node, from };
  }

  /** Reports the queued nodes, if any, as one wait of the spec. */
  report(b: PlanBuilder, spec: SpecRef): void {
    if (this.queued === 0 || this.first === undefined) return;
    // A budget that changes with a window is looked at again when it does.
    const until = this.first.code === 'budget' ? this.budget.until : undefined;
    b.wait(
      spec,
      this.first.code,
      `${this.queued} node(s) queued: ${this.first.reason}`,
      until !== undefined ? { until } : {},
    );
  }

  private spec(): LimitWait | undefined {
    if (this.slots > 0) return undefined;
    if (this.canaryLimit !== undefined && this.canaryLimit < this.concurrencySlots)
      return { code: 'soak', reason: `the canary wave of ${this.rollout.canary?.nodes ?? 0} node(s) goes first` };
    return {
      code: 'concurrency',
      reason: `concurrency limit reached: ${plural(this.rollout.concurrency, 'node')} in flight at once`,
    };
  }

  private cluster(): LimitWait | undefined {
    if (this.budget.free > 0) return undefined;
    // "All at once" that runs one at a time must say why, or it reads as a bug.
    const allAtOnce =
      this.rollout.zeroIsAllAtOnce === true && this.rollout.concurrency === 0 ? `${allAtOnceLimit(this.budget)}: ` : '';
    return { code: 'budget', reason: `${allAtOnce}${this.budget.describe()}` };
  }
}

/** What concurrency 0 (all at once) comes to under the cluster budget. */
export function allAtOnceLimit(budget: Pick<ClusterBudget, 'max'>): string {
  return `concurrency 0 (all at once) is limited to the cluster budget of ${budget.max}`;
}
