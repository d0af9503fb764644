/**
 * execute: applies a Plan's actions, each idempotent: each node's in plan order, different
 * nodes' side by side (lanes.ts). Stops early (without starting another action) as soon as
 * `shouldContinue` says no — leadership lost or shutdown — so the actions in flight finish and
 * nothing else starts. Every failure goes through classifyError; the results say what
 * happened to each action.
 */
import type { Logger } from 'pino';
import type { Action } from '../plan/types.js';
import { classifyError, type ActionResult, type Outcome } from './classify.js';
import * as impl from './actions.js';
import * as jobs from './job-actions.js';
import type { ActionDeps, ActionOf } from './actions.js';
import type { EventRecorder } from './events.js';
import { callKind, describeAction, eventFor } from './describe.js';
import { mutatingCallDone, mutatingCallStarts } from './crash-point.js';
import { eachAtMost, laneOf, laneOutlivesRound, laneSteps, nodeOf, nodesOf, segments, touchesOnePod } from './lanes.js';
import type { InFlight, Settled } from './in-flight.js';
import type { Written } from '../kube/written.js';
import type { EvictionPacer } from './pdb-pacer.js';

const DEFERRED: Outcome = { kind: 'transient', code: 'Deferred', reason: 'deferred' };

export type { ActionResult } from './classify.js';

export interface ExecuteOptions extends ActionDeps {
  readonly logger: Logger;
  readonly events: EventRecorder;
  readonly now: () => Date;
  /** Checked before each action; false stops the run. */
  readonly shouldContinue?: () => boolean;
  /** Called after each action (metrics). */
  readonly onResult?: (result: ActionResult) => void;
  /**
   * Nodes whose drain outlives its round (in-flight.ts). Without it, every call a round starts
   * has answered when the round returns.
   */
  readonly inFlight?: InFlight;
  /**
   * The nodes inFlight held when the round observed the cluster: a node whose work finished
   * since was planned on before the caches showed that work, so this round starts nothing on it.
   */
  readonly takenWhenObserved?: readonly string[];
  /** Evictions of one PDB one at a time (pdb-pacer.ts), with each pod's uid and the PDBs covering it. */
  readonly evictions?: {
    readonly pacer: EvictionPacer;
    readonly podOf: (namespace: string, pod: string) => { readonly uid?: string; readonly pdbs: readonly string[] };
  };
}

function run(a: Action, d: ActionDeps): Promise<Outcome> {
  switch (a.kind) {
    case 'setGroupImage':
      return impl.setGroupImage(a, d);
    case 'surge':
      return impl.surge(a, d);
    case 'annotateNode':
      return impl.annotateNode(a, d);
    case 'cordon':
      return impl.cordon(a, d);
    case 'uncordon':
      return impl.uncordon(a, d);
    case 'evict':
      return impl.evict(a, d);
    case 'deletePod':
      return impl.deletePod(a, d);
    case 'copyLabels':
      return impl.copyLabels(a, d);
    case 'removeInstance':
      return impl.removeInstance(a, d);
    case 'deleteNode':
      return impl.deleteNode(a, d);
    case 'scaleDeployment':
      return impl.scaleDeployment(a, d);
    case 'createNodeJob':
      return jobs.createNodeJobAction(a, d);
    case 'createBottlerocketUpdateJob':
      return jobs.createBottlerocketUpdateJobAction(a, d);
    case 'createRebootPod':
      return jobs.createRebootPodAction(a, d);
    case 'createGateJob':
      return jobs.createGateJobAction(a, d);
    case 'deleteJob':
      return jobs.deleteJobAction(a, d);
    case 'deleteRebootPod':
      return jobs.deleteRebootPodAction(a, d);
    case 'labelNode':
      return impl.labelNode(a, d);
    case 'markDrainPending':
      return impl.markDrainPending(a, d);
    case 'patchPool':
      return impl.patchPool(a, d);
  }
}

type Toggle = ActionOf<'cordon'> | ActionOf<'uncordon'>;

/** One call's outcome: what it returned, or its error as classifyError words it. */
async function attempt(fn: () => Promise<Outcome>, what: string): Promise<Outcome> {
  try {
    return await fn();
  } catch (err) {
    return classifyError(err, what);
  }
}

/**
 * A cordon or uncordon and the annotateNode(s) of the same node beside it in the plan, written
 * as one patch (the planner emits a phase change with its cordon), keyed by the index of the
 * group's first action. A toggle between two annotations goes with the one after it (the phase
 * that says why), so the cordon is never written without that phase; a cordon also takes the
 * one before it (a NodeOp's lock): the node is locked, cordoned and in its next phase in one
 * write, and nothing of the three lands without the others.
 */
export interface NodeWriteGroup {
  readonly toggle: number;
  /** The annotateNode that says why (after the toggle), or the only one (before it). */
  readonly annotate: number;
  /** A cordon's annotateNode before it (the lock), written in the same patch. */
  readonly before?: number;
}

export function annotationPairs(actions: readonly Action[]): Map<number, NodeWriteGroup> {
  const pairs = new Map<number, NodeWriteGroup>();
  const toggles = (a: Action | undefined): a is Toggle => a?.kind === 'cordon' || a?.kind === 'uncordon';
  const together = (a: Action | undefined, b: Action | undefined): boolean =>
    a !== undefined && b !== undefined && nodeOf(a) === nodeOf(b) && laneOf(a) === laneOf(b);
  for (let i = 0; i + 1 < actions.length; i++) {
    const [a, b, c] = [actions[i], actions[i + 1], actions[i + 2]];
    if (a === undefined || b === undefined || !together(a, b)) continue;
    const annotatedAfter = c?.kind === 'annotateNode' && together(b, c);
    if (toggles(a) && b.kind === 'annotateNode') pairs.set(i, { toggle: i, annotate: i + 1 });
    else if (a.kind === 'annotateNode' && b.kind === 'cordon' && annotatedAfter) {
      pairs.set(i, { toggle: i + 1, annotate: i + 2, before: i });
      i++;
    } else if (a.kind === 'annotateNode' && toggles(b) && !annotatedAfter) pairs.set(i, { toggle: i + 1, annotate: i });
    else continue;
    i++;
  }
  return pairs;
}

/** The indices a group's patch writes for. */
function groupIndices(g: NodeWriteGroup): number[] {
  return [...(g.before !== undefined ? [g.before] : []), g.toggle, g.annotate];
}

/** What a group's annotateNodes write, merged in plan order (the later phase wins). */
function groupAnnotation(actions: readonly Action[], g: NodeWriteGroup): ActionOf<'annotateNode'> {
  const annotate = actions[g.annotate] as ActionOf<'annotateNode'>;
  if (g.before === undefined) return annotate;
  const before = actions[g.before] as ActionOf<'annotateNode'>;
  return { ...annotate, annotations: { ...before.annotations, ...annotate.annotations } };
}

/**
 * Runs a cordon or uncordon with its annotateNode(s) in one patch. Outcomes per index: each
 * action of the group has the patch's outcome, but when the toggle is skipped (someone else's
 * cordon, already uncordoned) the annotations are written alone, in one patch of their own.
 * A failed patch fails them all (the first of them reports its error; the executor holds the
 * rest of the node's steps).
 */
async function runPair(actions: readonly Action[], pair: NodeWriteGroup, d: ActionDeps): Promise<Map<number, Outcome>> {
  const toggle = actions[pair.toggle] as Toggle;
  const annotate = groupAnnotation(actions, pair);
  const meta = impl.metadataOf(annotate);
  const both = await attempt(
    () => (toggle.kind === 'cordon' ? impl.cordon(toggle, d, meta) : impl.uncordon(toggle, d, meta)),
    describeAction(toggle),
  );
  const indices = groupIndices(pair);
  if (both.kind !== 'skipped') return new Map(indices.map((i) => [i, both]));
  const alone = await attempt(() => impl.annotateNode(annotate, d), describeAction(annotate));
  return new Map(indices.map((i) => [i, i === pair.toggle ? both : alone]));
}

/**
 * Steps whose failure holds the node's later steps this round (see executeActions). A reboot
 * pod's deletion is one: a node whose reboot did not come back is uncordoned only once the pod
 * that could still reboot it is gone. A copy of a node's labels to its replacement is another:
 * the node is not removed, and its labels with it, before they are on the replacement.
 */
const HOLDING_STEPS: ReadonlySet<Action['kind']> = new Set([
  'cordon',
  'annotateNode',
  'removeInstance',
  'deleteRebootPod',
  'copyLabels',
]);

/**
 * How many nodes' steps run at once (lanes.ts): a whole wave of a wide rollout (twenty nodes at a
 * time is common) in one go, since a round lasts as long as its slowest lane; few enough not to
 * flood the API server (each lane has one call in flight, or one per pod while it drains).
 */
export const LANES_AT_ONCE = 32;

/** What the actions of one executeActions run share. */
interface Run {
  readonly actions: readonly Action[];
  readonly opts: ExecuteOptions;
  readonly results: (ActionResult | undefined)[];
  // A node whose cordon, annotation or instance removal failed gets nothing else this round:
  // draining a node that is still schedulable, or one whose lock was not written, would be
  // unsafe, and deleting the Node of an instance the cloud did not remove would orphan the
  // instance (nothing would then say it was being replaced).
  readonly held: Set<string>;
  /**
   * What a surge of this run must not outrun: nodes whose lock (an annotateNode) was not
   * written, and groups whose instance removal did not succeed (surge.ts counts a removed
   * instance's room as free, and a node started on a slot handed over waits for that removal).
   */
  readonly unwritten: { readonly nodes: Set<string>; readonly groups: Set<string> };
  readonly pairs: ReadonlyMap<number, NodeWriteGroup>;
  /** Nodes an earlier round's work still holds (opts.inFlight when this run began or the round observed). */
  readonly taken: ReadonlySet<string>;
  /** Lanes not run because an earlier round's work still holds their node (but for repeated evictions). */
  readonly skipped: string[];
  /** Lanes (or their last step) this run left running past its end (handed to opts.inFlight). */
  readonly detached: string[];
  /** The plan indices of what was left running: their results are reported by inFlight, not by this run. */
  readonly detachedIndices: Set<number>;
  mayStart(): boolean;
}

/**
 * Runs the plan: each node's steps in plan order, different nodes' steps side by side, steps
 * that touch no node alone (lanes.ts). Results come back in plan order; actions not started
 * (shouldContinue said no) have none.
 */
export async function executeActions(actions: readonly Action[], opts: ExecuteOptions): Promise<ActionResult[]> {
  const startedAt = Date.now();
  const results: (ActionResult | undefined)[] = [];
  let stopped = false;
  const r: Run = {
    actions,
    opts,
    results,
    held: new Set(),
    unwritten: { nodes: new Set(), groups: new Set() },
    pairs: annotationPairs(actions),
    taken: new Set([...(opts.takenWhenObserved ?? []), ...(opts.inFlight?.nodes() ?? [])]),
    skipped: [],
    detached: [],
    detachedIndices: new Set(),
    mayStart: () => {
      if (!stopped && opts.shouldContinue && !opts.shouldContinue()) {
        stopped = true;
        const remaining = actions.length - results.filter((x) => x !== undefined).length;
        opts.logger.info({ remaining }, 'execution stopped before the next action');
      }
      return !stopped;
    },
  };
  const all = segments(actions);
  for (const [k, segment] of all.entries()) {
    if ('lanes' in segment) {
      // No barrier comes after the last lanes: a lane of them may outlive the round.
      const last = k === all.length - 1;
      await eachAtMost([...segment.lanes], LANES_AT_ONCE, ([lane, indices]) => runLane(r, lane, indices, last));
    } else if (r.skipped.length > 0) {
      // A step before the barrier did not run (an earlier round's work on its node still runs): the barrier waits.
      opts.logger.info({ nodes: r.skipped }, 'execution stopped before a step that waits for work still running');
      break;
    } else {
      // Everything before the barrier has finished but the drains and clean-ups that outlive the
      // round: no barrier (a surge, a group's image, a scale, a pool) acts on what they do, and
      // no lane before a barrier is left running whole.
      await runLane(r, undefined, [segment.barrier]);
    }
    if (stopped) break;
  }
  const done = results.filter((x, i): x is ActionResult => x !== undefined && !r.detachedIndices.has(i));
  const fields = { actions: done.length, planned: actions.length, ms: Date.now() - startedAt };
  opts.logger.info({ ...fields, leftRunning: r.detached.length, waiting: r.skipped.length }, 'actions executed');
  return done;
}

/**
 * Runs one lane's actions (plan indices) in order; `lane` undefined for a barrier. A lane with
 * no barrier after it (`mayOutlive`) whose every step may outlive its round (outlivesRound) is
 * left running whole; otherwise, when it ends with its evictions (and pod deletions) or with a
 * clean-up (cleansUp), only those are. Either way the run does not wait for them when
 * opts.inFlight is given (in-flight.ts); a lane whose node an earlier round's work still holds
 * is not run at all.
 */
async function runLane(
  r: Run,
  lane: string | undefined,
  indices: readonly number[],
  mayOutlive = false,
): Promise<void> {
  const inFlight = r.opts.inFlight;
  const taken = (i: number): boolean => {
    const a = r.actions[i];
    return a !== undefined && nodesOf(a).some((n) => r.taken.has(n));
  };
  if (lane !== undefined && indices.some(taken)) {
    // Evictions (or a clean-up) planned again while the earlier ones are still under way repeat
    // that work; only a lane with another step makes a barrier after it wait.
    if (!indices.every((i) => touchesOnePod(r.actions[i]) || cleansUp(r.actions[i]))) r.skipped.push(lane);
    return;
  }
  if (
    lane !== undefined &&
    inFlight !== undefined &&
    mayOutlive &&
    laneOutlivesRound(r.actions, indices, r.opts.cachedNode)
  ) {
    detachLane(r, lane, indices, inFlight);
    return;
  }
  await runSteps(r, lane, indices, inFlight);
}

/** A lane's steps one after another; the last one's evictions or clean-up handed to `inFlight` if given. */
async function runSteps(
  r: Run,
  lane: string | undefined,
  indices: readonly number[],
  inFlight: InFlight | undefined,
): Promise<void> {
  /** Outcomes of a write group's later actions, decided when its first ran. */
  let carried = new Map<number, Outcome>();
  const steps = laneSteps(r.actions, indices);
  for (const [n, step] of steps.entries()) {
    const last = n === steps.length - 1;
    if (touchesOnePod(r.actions[step[0] ?? -1]) || (last && cleansUp(r.actions[step[0] ?? -1]))) {
      // One after another: a node's pods often share a PDB, and two evictions updating one PDB
      // at once cost the API server a 500 ms retry.
      const all = (async () => {
        for (const i of step) if ((await runAction(r, lane, i, new Map())) === undefined) return false;
        return true;
      })();
      if (lane !== undefined && inFlight !== undefined && last) {
        // Taken is the node drained, which may run in another node's lane (forNode).
        const node = nodeOf(r.actions[step[0] ?? -1] as Action) ?? lane;
        leaveRunning(r, inFlight, node, [node], step, all, []);
        return;
      }
      if (!(await all)) return;
      continue;
    }
    // A step's later actions were planned beside its first (Action.beside): they start with it.
    const kinds = step.length > 1 ? step.map((i) => callKind(r.actions[i] as Action)) : [];
    const others = (k: number): string[] => kinds.filter((_, j) => j !== k);
    const [next] = await Promise.all([
      runAction(r, lane, step[0] ?? -1, carried, others(0)),
      ...step.slice(1).map((i, k) => runAction(r, lane, i, new Map(), others(k + 1))),
    ]);
    if (next === undefined) return;
    carried = next;
  }
}

/**
 * A whole lane left running past the end of the round (in-flight.ts): every node it touches is
 * taken until its last step has answered, and its writes are what the next round waits to see.
 */
function detachLane(r: Run, lane: string, indices: readonly number[], inFlight: InFlight): void {
  const written: Written[] = [];
  const own: Run = { ...r, opts: { ...r.opts, wrote: (w) => void written.push(w) } };
  const nodes = indices.flatMap((i) => {
    const a = r.actions[i];
    return a === undefined ? [] : nodesOf(a);
  });
  leaveRunning(r, inFlight, lane, nodes, indices, runSteps(own, lane, indices, undefined), written);
}

/**
 * Hands `work` (the plan's `indices`, of lane or node `name`) to inFlight, taking `nodes` until
 * it has finished, and keeps its results out of this run's: what it came to is reported when it
 * settles. A refused eviction is retried when the API server said, not at once.
 */
function leaveRunning(
  r: Run,
  inFlight: InFlight,
  name: string,
  nodes: readonly string[],
  indices: readonly number[],
  work: Promise<unknown>,
  written: readonly Written[],
): void {
  inFlight.add(
    nodes,
    work.then(() => settledOf(r, indices, written)),
  );
  r.detached.push(name);
  for (const i of indices) r.detachedIndices.add(i);
}

/** What work left running came to, from the results of its actions. */
function settledOf(
  r: Run,
  indices: readonly number[],
  written: readonly Written[],
): Settled & { results: ActionResult[] } {
  const results = indices.flatMap((i) => {
    const x = r.results[i];
    return x === undefined ? [] : [x];
  });
  const retryInMs = Math.max(
    0,
    ...results.map((x) => (x.outcome.kind === 'waiting' ? x.outcome.retryAfterSeconds * 1000 : 0)),
  );
  return { retryInMs, written, results };
}

/**
 * A node's clean-up once its outcome is recorded (its finished Job, its reboot pod deleted):
 * nothing of this round or the next waits on it, so as a lane's last step it outlives the round.
 */
function cleansUp(a: Action | undefined): boolean {
  return a?.kind === 'deleteJob' || a?.kind === 'deleteRebootPod';
}

/**
 * Runs one action (or, for a cordon with its phase change, the one patch of its write group)
 * and records its result; undefined when it was not started (told to stop), else the outcomes
 * it decided for the group's later actions.
 */
async function runAction(
  r: Run,
  lane: string | undefined,
  index: number,
  carried: Map<number, Outcome>,
  beside: readonly string[] = [],
): Promise<Map<number, Outcome> | undefined> {
  const { actions, opts } = r;
  const action = actions[index];
  if (action === undefined || !r.mayStart()) return undefined;
  const started = Date.now();
  const what = describeAction(action);
  let outcome: Outcome;
  /** The kind of the mutating call this action made, if it made one (a pair's second made none). */
  let call: string | undefined;
  const outrun = action.kind === 'surge' ? surgeHeld(r, action) : undefined;
  if (lane !== undefined && r.held.has(lane)) {
    outcome = {
      kind: 'transient',
      code: 'Deferred',
      reason: `${what}: deferred, an earlier step on node ${lane} did not succeed`,
    };
  } else if (outrun !== undefined) {
    outcome = { kind: 'transient', code: 'Deferred', reason: `${what}: deferred, ${outrun}` };
  } else {
    const pair = r.pairs.get(index);
    const decided = carried.get(index);
    // One kind per call: a group's patch is one call, named by all of its actions.
    const kind =
      pair !== undefined
        ? groupIndices(pair)
            .map((i) => (i === pair.toggle ? (actions[i]?.kind ?? '') : callKind(actions[i] ?? action)))
            .join('+')
        : callKind(action);
    if (decided === undefined) mutatingCallStarts(kind, what);
    if (pair !== undefined) {
      carried = await runPair(actions, pair, opts);
      outcome = carried.get(index) ?? DEFERRED;
    } else if (decided !== undefined) {
      outcome = decided;
    } else {
      outcome = await attempt(() => paced(opts, action, () => run(action, opts)), what);
    }
    // The reliability suite's crash point: after a call that changed something, before its Event.
    // A group's later actions made no call of their own: the first one's patch carried them.
    if (outcome.kind === 'done' && decided === undefined) {
      mutatingCallDone(kind, what, beside);
      call = kind;
    }
    if (lane !== undefined && HOLDING_STEPS.has(action.kind) && holds(outcome)) r.held.add(lane);
  }
  if (outcome.kind !== 'done' && outcome.kind !== 'skipped') {
    if (action.kind === 'annotateNode') r.unwritten.nodes.add(action.node);
    if (action.kind === 'removeInstance') r.unwritten.groups.add(action.groupId);
  }
  const result: ActionResult = { action, outcome, durationMs: Date.now() - started };
  r.results[index] = result;
  opts.onResult?.(result);
  report(r, result, what, call);
  return carried;
}

/** Why a surge waits for the next round: a node it is for was not locked, or its group's removal failed. */
function surgeHeld(r: Run, a: ActionOf<'surge'>): string | undefined {
  if (r.unwritten.groups.has(a.groupId)) return `an instance removal in group ${a.groupId} did not succeed`;
  const node = a.forNodes?.find((n) => r.unwritten.nodes.has(n));
  return node === undefined ? undefined : `the lock of node ${node} was not written`;
}

/** An eviction waits for the one before it on the same PDB and for the PDB to settle (pdb-pacer.ts); other calls run at once. */
function paced(opts: ExecuteOptions, action: Action, call: () => Promise<Outcome>): Promise<Outcome> {
  const e = opts.evictions;
  if (e === undefined || action.kind !== 'evict') return call();
  const pod = e.podOf(action.namespace, action.pod);
  const uid = pod.uid;
  return e.pacer.run(
    pod.pdbs,
    call,
    uid === undefined ? undefined : { uid, evicted: (outcome) => outcome.kind === 'done' },
  );
}

function holds(outcome: Outcome): boolean {
  return outcome.kind === 'transient' || outcome.kind === 'stalled' || outcome.kind === 'waiting';
}

/** The action's log line, and its Event once it has done something (written beside the lane). */
function report(r: Run, result: ActionResult, what: string, call: string | undefined): void {
  const { action, outcome } = result;
  const { opts } = r;
  const fields = {
    action: action.kind,
    target: what,
    spec: `${action.spec.kind}/${action.spec.name}`,
    why: action.reason,
    outcome: outcome.kind,
    ms: result.durationMs,
    ...(call !== undefined ? { call } : {}),
  };
  if (outcome.kind === 'done') {
    opts.logger.info(fields, 'action applied');
    const event = eventFor(action);
    // Written beside the lanes; the round does not wait for it (events.ts).
    if (event) void opts.events.record({ ...event, spec: action.spec }, opts.now()).catch(() => undefined);
  } else if (outcome.kind === 'skipped') {
    opts.logger.debug({ ...fields, reason: outcome.reason }, 'action already in effect');
  } else if (outcome.kind === 'waiting') {
    opts.logger.info(
      { ...fields, code: outcome.code, reason: outcome.reason, retryAfterSeconds: outcome.retryAfterSeconds },
      'action must wait',
    );
  } else {
    opts.logger.warn({ ...fields, code: outcome.code, reason: outcome.reason }, 'action failed');
  }
}
