/**
 * execute: applies a Plan's actions, each idempotent: each node's in plan order, different
 * nodes' side by side (lanes.ts). Stops early (without starting another action) as soon as
 * `shouldContinue` says no — leadership lost or shutdown — so the actions in flight finish and
 * nothing else starts. Every failure goes through classifyError; the results say what
 * happened to each action.
 */
import type { Logger } from 'pino';
import type { Action } from '../plan/types.js';
import { classifyError, type Outcome } from './classify.js';
import * as impl from './actions.js';
import * as jobs from './job-actions.js';
import type { ActionDeps, ActionOf } from './actions.js';
import type { EventRecorder } from './events.js';
import { callKind, describeAction, eventFor } from './describe.js';
import { mutatingCallDone, mutatingCallStarts } from './crash-point.js';
import { eachAtMost, laneOf, nodeOf, segments } from './lanes.js';

const DEFERRED: Outcome = { kind: 'transient', code: 'Deferred', reason: 'deferred' };

export interface ActionResult {
  readonly action: Action;
  readonly outcome: Outcome;
  readonly durationMs: number;
}

export interface ExecuteOptions extends ActionDeps {
  readonly logger: Logger;
  readonly events: EventRecorder;
  readonly now: () => Date;
  /** Checked before each action; false stops the run. */
  readonly shouldContinue?: () => boolean;
  /** Called after each action (metrics). */
  readonly onResult?: (result: ActionResult) => void;
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
    case 'createRebootPod':
      return jobs.createRebootPodAction(a, d);
    case 'createGateJob':
      return jobs.createGateJobAction(a, d);
    case 'deleteJob':
      return jobs.deleteJobAction(a, d);
    case 'deleteRebootPod':
      return jobs.deleteRebootPodAction(a, d);
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
 * The index of the annotateNode that goes with a cordon or uncordon of the same node next to it
 * in the plan (the planner emits them together: a phase change with its cordon), keyed by
 * the index of the pair's first action. Each such pair is written as one patch.
 */
export function annotationPairs(actions: readonly Action[]): Map<number, { toggle: number; annotate: number }> {
  const pairs = new Map<number, { toggle: number; annotate: number }>();
  const toggles = (a: Action | undefined): a is Toggle => a?.kind === 'cordon' || a?.kind === 'uncordon';
  for (let i = 0; i + 1 < actions.length; i++) {
    const [a, b] = [actions[i], actions[i + 1]];
    if (a === undefined || b === undefined || nodeOf(a) !== nodeOf(b) || laneOf(a) !== laneOf(b)) continue;
    if (toggles(a) && b.kind === 'annotateNode') pairs.set(i, { toggle: i, annotate: i + 1 });
    else if (a.kind === 'annotateNode' && toggles(b)) pairs.set(i, { toggle: i + 1, annotate: i });
    else continue;
    i++;
  }
  return pairs;
}

/**
 * Runs a cordon or uncordon with its annotateNode in one patch. Outcomes per index: when the
 * toggle is skipped (someone else's cordon, already uncordoned) the annotation is written alone.
 */
async function runPair(
  actions: readonly Action[],
  pair: { toggle: number; annotate: number },
  d: ActionDeps,
): Promise<Map<number, Outcome>> {
  const toggle = actions[pair.toggle] as Toggle;
  const annotate = actions[pair.annotate] as ActionOf<'annotateNode'>;
  const meta = impl.metadataOf(annotate);
  const both = await attempt(
    () => (toggle.kind === 'cordon' ? impl.cordon(toggle, d, meta) : impl.uncordon(toggle, d, meta)),
    describeAction(toggle),
  );
  if (both.kind === 'done')
    return new Map([
      [pair.toggle, both],
      [pair.annotate, both],
    ]);
  const alone =
    both.kind === 'skipped'
      ? await attempt(() => impl.annotateNode(annotate, d), describeAction(annotate))
      : {
          kind: 'transient' as const,
          code: 'Deferred',
          reason: `${describeAction(annotate)}: deferred, ${describeAction(toggle)} did not succeed`,
        };
  return new Map([
    [pair.toggle, both],
    [pair.annotate, alone],
  ]);
}

/** Steps whose failure holds the node's later steps this round (see executeActions). */
const HOLDING_STEPS: ReadonlySet<Action['kind']> = new Set(['cordon', 'annotateNode', 'removeInstance']);

/** How many nodes' steps run at once (lanes.ts): enough for a wide wave, few enough not to flood the API server. */
export const LANES_AT_ONCE = 16;

/**
 * Runs the plan: each node's steps in plan order, different nodes' steps side by side, steps
 * that touch no node alone (lanes.ts). Results come back in plan order; actions not started
 * (shouldContinue said no) have none.
 */
export async function executeActions(actions: readonly Action[], opts: ExecuteOptions): Promise<ActionResult[]> {
  const results: (ActionResult | undefined)[] = [];
  // A node whose cordon, annotation or instance removal failed gets nothing else this round:
  // draining a node that is still schedulable, or one whose lock was not written, would be
  // unsafe, and deleting the Node of an instance the cloud did not remove would orphan the
  // instance (nothing would then say it was being replaced).
  const held = new Set<string>();
  const pairs = annotationPairs(actions);
  let stopped = false;
  const mayStart = (): boolean => {
    if (!stopped && opts.shouldContinue && !opts.shouldContinue()) {
      stopped = true;
      const remaining = actions.length - results.filter((r) => r !== undefined).length;
      opts.logger.info({ remaining }, 'execution stopped before the next action');
    }
    return !stopped;
  };
  /** Runs one lane's actions (plan indices) in order; `lane` undefined for a barrier. */
  const runLane = async (lane: string | undefined, indices: readonly number[]): Promise<void> => {
    /** Outcomes of the second action of a pair, decided when its first ran. */
    let carried = new Map<number, Outcome>();
    for (const index of indices) {
      const action = actions[index];
      if (action === undefined || !mayStart()) return;
      const started = Date.now();
      const what = describeAction(action);
      let outcome: Outcome;
      /** The kind of the mutating call this action made, if it made one (a pair's second made none). */
      let call: string | undefined;
      if (lane !== undefined && held.has(lane)) {
        outcome = {
          kind: 'transient',
          code: 'Deferred',
          reason: `${what}: deferred, an earlier step on node ${lane} did not succeed`,
        };
      } else {
        const pair = pairs.get(index);
        const decided = carried.get(index);
        // One kind per call: a pair's patch is one call, named by both of its actions.
        const kind =
          pair !== undefined
            ? `${actions[pair.toggle]?.kind ?? ''}+${callKind(actions[pair.annotate] ?? action)}`
            : callKind(action);
        if (decided === undefined) mutatingCallStarts(kind, what);
        if (pair !== undefined) {
          carried = await runPair(actions, pair, opts);
          outcome = carried.get(index) ?? DEFERRED;
        } else if (decided !== undefined) {
          outcome = decided;
        } else {
          outcome = await attempt(() => run(action, opts), what);
        }
        // The reliability suite's crash point: after a call that changed something, before its Event.
        // A pair's second action made no call of its own: the first one's patch carried it.
        if (outcome.kind === 'done' && decided === undefined) {
          mutatingCallDone(kind, what);
          call = kind;
        }
        if (lane !== undefined && HOLDING_STEPS.has(action.kind) && holds(outcome)) held.add(lane);
      }
      const result: ActionResult = { action, outcome, durationMs: Date.now() - started };
      results[index] = result;
      opts.onResult?.(result);
      await report(action, outcome, what, call, opts);
    }
  };
  for (const segment of segments(actions)) {
    if ('barrier' in segment) await runLane(undefined, [segment.barrier]);
    else await eachAtMost([...segment.lanes], LANES_AT_ONCE, ([lane, indices]) => runLane(lane, indices));
    if (stopped) break;
  }
  return results.filter((r): r is ActionResult => r !== undefined);
}

function holds(outcome: Outcome): boolean {
  return outcome.kind === 'transient' || outcome.kind === 'stalled' || outcome.kind === 'waiting';
}

/** The action's log line, and its Event once it has done something. */
async function report(
  action: Action,
  outcome: Outcome,
  what: string,
  call: string | undefined,
  opts: ExecuteOptions,
): Promise<void> {
  const fields = {
    action: action.kind,
    target: what,
    spec: `${action.spec.kind}/${action.spec.name}`,
    why: action.reason,
    outcome: outcome.kind,
    ...(call !== undefined ? { call } : {}),
  };
  if (outcome.kind === 'done') {
    opts.logger.info(fields, 'action applied');
    const event = eventFor(action);
    if (event) await opts.events.record({ ...event, spec: action.spec }, opts.now());
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
