/**
 * The metric gates as `drydock plan` shows them: what each checks, for which specs, and what
 * this round's reading says. Read off the desired state and the observation; it moves nothing.
 */
import { metricGatesKey, metricGatesOf, type ObservedMetrics } from '../observe/metrics.js';
import type { DesiredState, MetricGates } from '../spec/model.js';
import type { MetricGateView } from './types.js';

function checks(g: MetricGates): string[] {
  const labels = (l: Readonly<Record<string, string>>): string => {
    const keys = Object.keys(l).sort();
    return keys.length === 0 ? '' : `{${keys.map((k) => `${k}=${JSON.stringify(l[k])}`).join(',')}}`;
  };
  return [
    ...g.alerts.map((a) => `alert ${a.name}${labels(a.labels)} firing`),
    ...g.queries.map(
      (q) =>
        `query ${q.name === q.query ? q.query : `${q.name} (${q.query})`} ${q.op === 'above' ? '>' : '<'} ${q.value}`,
    ),
  ];
}

function state(g: MetricGates, readings: ObservedMetrics | undefined): string {
  const r = readings?.[metricGatesKey(g)];
  if (r === undefined) return 'not read';
  if (!r.reachable) return `${r.problem} (since ${r.since})`;
  if (r.breaches.length === 0) return 'passing';
  return `breached: ${r.breaches.map((b) => `${b.what} ${b.value} since ${b.since}`).join('; ')}`;
}

/** One view per distinct gates, with the specs that use them; empty when no rollout has any. */
export function metricGateViews(desired: DesiredState, readings: ObservedMetrics | undefined): MetricGateView[] {
  const users = new Map<string, string[]>();
  const use = (g: MetricGates | undefined, spec: string): void => {
    if (g === undefined) return;
    const k = metricGatesKey(g);
    users.set(k, [...(users.get(k) ?? []), spec]);
  };
  for (const s of desired.nodeImages) use(s.rollout.metricGates, `NodeImage/${s.name}`);
  for (const s of desired.nodeOps) use(s.rollout.metricGates, `NodeOp/${s.name}`);
  for (const s of desired.mutexRunConfigs) use(desired.config.defaults.rollout.metricGates, `MutexRunConfig/${s.name}`);
  return metricGatesOf(desired).map((g) => ({
    prometheus: g.prometheus,
    ...(g.alertmanager !== undefined ? { alertmanager: g.alertmanager } : {}),
    onBreach: g.onBreach,
    checks: checks(g),
    specs: users.get(metricGatesKey(g)) ?? [],
    state: state(g, readings),
  }));
}
