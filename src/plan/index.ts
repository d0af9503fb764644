/**
 * plan(desired, observed, now): drydock's pure planner. No clock, randomness or I/O; every
 * list it reads or writes has a stable order, so the same input always gives a deep-equal
 * Plan. The executor applies `actions` in list order; the reporter renders `specs`, `waits`
 * and `notes`; the service wakes at `wakeAt` if nothing else happens first.
 */
import { ANNOTATIONS, type ObservedState } from '../observe/types.js';
import type { DesiredState, NodeImage } from '../spec/model.js';
import { planAutoscalers } from './autoscaler.js';
import { ClusterBudget } from './budget.js';
import { PlanBuilder } from './builder.js';
import { PlanError } from './errors.js';
import { forecastWaves } from './forecast.js';
import { resolveOptions, type PlanOptions } from './options.js';
import { compareStrings } from './order.js';
import { holdsLock, parseLock } from './protocol.js';
import { isReplace, planReplace } from './replace/index.js';
import type { Plan, SpecStatus, Wave } from './types.js';
import { buildView, type ClusterView } from './view.js';

export type { PlanOptions } from './options.js';
export { PlanError, type PlanErrorCode } from './errors.js';
export { checkWindow, formatInZone, isWindowOpen, nextWindowOpening, windowClosing } from './window.js';
export { PLAN_ANNOTATIONS, isCopiedLabel, lockValue, parseLock } from './protocol.js';
export type * from './types.js';

/** Whether a NodeImage's rollout has anything left to do (which keeps the autoscaler paused). */
function rolloutRunning(desired: DesiredState, view: ClusterView, image: NodeImage): boolean {
  for (const sg of desired.scalingGroups) {
    if (sg.nodeImage !== image.name) continue;
    const observed = view.observed.cloudGroups.find((g) => g.scalingGroup === sg.name);
    if (observed === undefined) continue;
    const group = observed.description;
    if (group.image !== image.image) return true;
    for (const inst of group.instances) {
      if (inst.state === 'terminating') continue;
      if (inst.image !== image.image) return true;
      const node = view.nodeByProviderID.get(inst.providerID);
      if (node !== undefined && holdsLock(node) && parseLock(node.annotations[ANNOTATIONS.operation])?.kind === 'NodeImage') return true;
    }
  }
  return view.observed.nodes.some((n) => {
    if (!holdsLock(n)) return false;
    const lock = parseLock(n.annotations[ANNOTATIONS.operation]);
    return lock?.kind === 'NodeImage' && lock.name === image.name;
  });
}

export function plan(desired: DesiredState, observed: ObservedState, now: Date, options?: PlanOptions): Plan {
  if (!(now instanceof Date) || !Number.isFinite(now.getTime())) {
    throw new PlanError('invalid-now', 'plan needs `now` as a valid Date', { value: String(now) });
  }
  const opts = resolveOptions(options);
  const nowMs = now.getTime();
  const view = buildView(observed, ANNOTATIONS.replacedBy);
  const b = new PlanBuilder();
  const budget = new ClusterBudget(desired.config, observed.nodes);
  const images = [...desired.nodeImages].sort((x, y) => compareStrings(x.name, y.name));
  const replacing = images.filter(isReplace);
  const active = replacing.some((image) => rolloutRunning(desired, view, image));
  const autoscalers = planAutoscalers(desired, view, active, b);

  const specs: SpecStatus[] = [...autoscalers.statuses];
  const waves: Wave[] = [];
  let eta: number | undefined = nowMs;
  for (const image of images) {
    if (!isReplace(image)) {
      const spec = { kind: 'NodeImage', name: image.name } as const;
      const text = `strategy inPlace is not planned by this version of drydock; NodeImage ${image.name} is left as it is`;
      b.note(spec, text);
      specs.push({
        spec,
        revision: image.revision,
        phase: 'Waiting',
        progress: { done: 0, total: 0 },
        failures: 0,
        conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NotSupported', message: text }],
        nodes: [],
        pending: [],
        waitingFor: text,
      });
      continue;
    }
    const result = planReplace(
      { desired, image, now: nowMs, options: opts, view, b, budget },
      autoscalers.blocking !== undefined ? { autoscaler: autoscalers.blocking } : {},
    );
    specs.push(result.status);
    const f = forecastWaves(result.forecast, opts.perNodeMs);
    waves.push(...f.waves);
    eta = eta === undefined || f.end === undefined ? undefined : Math.max(eta, f.end);
  }

  let wakeAt: number | undefined;
  for (const w of b.waits) {
    if (w.until === undefined) continue;
    const t = Date.parse(w.until);
    if (t > nowMs && (wakeAt === undefined || t < wakeAt)) wakeAt = t;
  }
  return {
    actions: b.actions,
    waits: b.waits,
    notes: b.notes,
    specs,
    forecast: { waves, ...(eta !== undefined ? { eta: new Date(eta).toISOString() } : {}) },
    ...(wakeAt !== undefined ? { wakeAt: new Date(wakeAt).toISOString() } : {}),
  };
}
