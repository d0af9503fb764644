/**
 * The replace rollout of one NodeImage across its ScalingGroups, one round: settle locks left
 * by older revisions, move every started node one step, start new nodes within the gates and
 * limits, then claim or surge their replacement instances. Returns the spec's status and what
 * the forecast needs.
 */
import type { NodeImage } from '../../spec/model.js';
import { canaryProgress } from './canary.js';
import { canaryNodesLeft } from '../sequence/canary.js';
import type { StartGate, StartGates } from '../sequence/start-gate.js';
import type { ForecastInput } from '../forecast.js';
import { replaceDefault } from '../pace.js';
import { advance } from './inflight.js';
import { settleLocks } from './settle.js';
import { compareOrdered } from '../order.js';
import { ownership, type RolloutContext } from './context.js';
import { fold, inFlightTotal, withStarted, type Tally } from './tally.js';
import { startNodes, windowOf } from './start.js';
import { buildStatus } from './status.js';
import { cleanUpReplaceGateJobs } from './gates.js';
import { claimAndSurge } from './surge.js';
import { withFailureBudget, withFailureCount } from './failure.js';
import type { SpecStatus } from '../types.js';

export interface ReplaceResult {
  readonly status: SpecStatus;
  readonly forecast: ForecastInput;
}

/**
 * One round of a replace rollout, in the order its steps decide: say what is happening to the
 * groups, settle what older revisions left, move every started node one step, start new
 * nodes, then claim or surge their replacements. Each stage returns what it decided and the
 * next reads only that (tally.ts); the status and the forecast are read from it, never
 * re-derived.
 */
export function planReplace(base: RolloutContext, gates: StartGates): ReplaceResult {
  const { b } = base;
  announceGroups(base);
  const settled = settleLocks(base);
  const ctx: RolloutContext = { ...base, adopted: settled.adopted };
  const tally = withFailureBudget(
    ctx,
    fold(
      ctx.entries.flatMap((entry) =>
        entry.node !== undefined && ownership(ctx, entry.node) === 'current'
          ? [{ entry, decided: advance(ctx, settled, entry) }]
          : [],
      ),
    ),
  );
  cleanUpReplaceGateJobs(ctx);
  reportNodelessInstances(ctx);
  const { gate, started } = startNodes(ctx, settled, tally, gates);
  setGroupImages(ctx, gate);
  claimAndSurge(ctx, tally.needers, started, new Set(tally.handOvers.map((h) => h.node)));

  const built = buildStatus(ctx, withStarted(tally, started), actionsCounted(ctx, gate.open), b.waitsFor(ctx.spec));
  const status = withFailureCount(ctx, tally, built);
  return { status, forecast: forecastInput(ctx, tally, gate) };
}

/**
 * The actions that say the rollout is under way: setting a group's image does not while the
 * start gate holds its nodes (the round says Waiting, with the gate's reason).
 */
function actionsCounted(ctx: RolloutContext, gateOpen: boolean): number {
  const all = ctx.b.actionsFor(ctx.spec);
  if (gateOpen) return all;
  const settingImage = ctx.notices.filter((n) => n.kind === 'settingImage').length;
  return all - settingImage;
}

/** What happens to the groups before any node moves: unobserved ones wait (new images: setGroupImages). */
function announceGroups(ctx: RolloutContext): void {
  const { b, spec } = ctx;
  for (const n of ctx.notices) {
    if (n.kind === 'unobserved') {
      b.wait(spec, 'cloud', `ScalingGroup ${n.sg.name}: ${n.why}`, n.until !== undefined ? { until: n.until } : {});
    } else if (n.kind === 'settingImage') {
      continue;
    } else {
      b.note(
        spec,
        `ScalingGroup ${n.sg.name}: maxSurge is 0, but replacing a node needs a new instance first; one at a time`,
      );
    }
  }
}

/**
 * A group's new image is set as the rollout begins: new instances (a scale-up too) boot it
 * from then on. In a fleet, that is the change reaching this cluster, so while the earlier
 * stages hold it (the start gate's `fleet`) the group keeps booting the image it had, and the
 * gate's wait says why. Other gates hold node starts only (a window, an approval, a pause).
 */
function setGroupImages(ctx: RolloutContext, gate: StartGate): void {
  const { b, spec, image } = ctx;
  for (const n of ctx.notices) {
    if (n.kind !== 'settingImage') continue;
    if (!gate.open && gate.code === 'fleet') {
      b.note(spec, `ScalingGroup ${n.sg.name}: new instances keep ${n.from} until the earlier stages have passed it`);
      continue;
    }
    const why = `ScalingGroup ${n.sg.name}: new instances get ${image.image} (was ${n.from})`;
    b.act({ kind: 'setGroupImage', spec, groupId: n.groupId, image: image.image, reason: why });
    b.note(spec, why);
  }
}

/**
 * An old-image instance with no node (it never joined, or its Node was deleted by hand) cannot
 * be replaced node-first; removing it would shrink the group, so a person decides.
 */
function reportNodelessInstances(ctx: RolloutContext): void {
  const timeout = ctx.image.rollout.joinTimeoutSeconds * 1000;
  for (const e of ctx.entries) {
    if (!e.outdated || e.node !== undefined || ctx.view.claimed.has(e.instance.id)) continue;
    const created = Date.parse(e.instance.createdAt);
    if (Number.isFinite(created) && created + timeout > ctx.now) continue;
    ctx.b.wait(
      ctx.spec,
      'join',
      `instance ${e.instance.id} in ScalingGroup ${e.group.sg.name} runs ${e.instance.image} but has no node; remove it from the group (or let it join) so the rollout can finish`,
    );
  }
}

/**
 * What the forecast needs. `gate` is the start gate this round's startNodes decided: starting
 * nodes can only turn an open gate into the canary's soak, which the forecast reads the same.
 */
function forecastInput(ctx: RolloutContext, tally: Tally, gate: StartGate): ForecastInput {
  const { image } = ctx;
  const inFlightNodes: string[] = [];
  const rest: string[] = [];
  /** Whether this revision took a node already (in flight, done or failed). */
  let begun = false;
  // Groups whose image is being set this round go in the forecast already: their outdated
  // nodes are known, and they are what the rollout will replace.
  const all =
    ctx.upcoming.length === 0
      ? ctx.entries
      : [...ctx.entries, ...ctx.upcoming].sort((x, y) => compareOrdered(x.order, y.order));
  for (const e of all) {
    const own = e.node !== undefined && ownership(ctx, e.node) === 'current';
    if (own && e.node !== undefined) {
      begun = true;
      if (!ctx.view.stateOf(e.node).settled) inFlightNodes.push(e.node.name);
    } else if (e.outdated && !ctx.view.claimed.has(e.instance.id)) {
      rest.push(e.node?.name ?? e.instance.id);
    }
  }
  const concurrency = image.rollout.concurrency > 0 ? image.rollout.concurrency : Number.POSITIVE_INFINITY;
  let groupLimit = Number.POSITIVE_INFINITY;
  for (const g of [...ctx.groups, ...ctx.upcomingGroups]) groupLimit = Math.min(groupLimit, g.parallelism);
  const parallelism = Math.min(concurrency, groupLimit, Math.max(1, ctx.budget.max));
  const canary = image.rollout.canary;
  const progress = canaryProgress(ctx, inFlightTotal(tally));
  const canaryNodes = canaryNodesLeft(progress, ctx.now);
  const blocked =
    !gate.open &&
    gate.until === undefined &&
    gate.code !== 'autoscaler' &&
    gate.code !== 'order' &&
    gate.code !== 'soak';
  const startAt = !gate.open && gate.until !== undefined ? gate.until : ctx.now;
  const window = windowOf(ctx);
  return {
    spec: ctx.spec,
    remaining: [...inFlightNodes, ...rest],
    parallelism,
    canaryNodes,
    soakSeconds: canary?.soakSeconds ?? 0,
    ...(window !== undefined ? { window } : {}),
    startAt: inFlightNodes.length > 0 ? ctx.now : startAt,
    blocked: blocked || tally.haltReason !== undefined,
    drains: true,
    begun: begun || progress.done.length > 0,
    pace: { kind: 'replace', defaultSeconds: replaceDefault(image.rollout) },
  };
}

/**
 * The first control-plane node of this rollout still on an old image (in flight or not yet
 * started, groups whose image is being set included), for controlPlaneFirst across specs.
 */
export function outdatedControlPlane(ctx: RolloutContext): string | undefined {
  for (const e of [...ctx.entries, ...ctx.upcoming]) {
    if (e.group.sg.role === 'control-plane' && e.outdated) return e.node?.name ?? e.instance.id;
  }
  return undefined;
}

export function isReplace(image: NodeImage): boolean {
  return image.strategy === 'replace';
}
