/**
 * The metric gates' readings: once per round, each distinct rollout.metricGates is asked of
 * Prometheus (its firing alerts, each query) and, for a firing alert, of Alertmanager (its
 * active silences). What breaches is a reading the planner holds on; a Prometheus that does
 * not answer is a reading of its own, never an empty (passing) one.
 */
import { readFile } from 'node:fs/promises';
import type { DesiredState, MetricAlert, MetricGates, MetricQuery } from '../spec/model.js';

/** One alert firing or one query past its threshold. */
export interface MetricBreach {
  /** `alert HighErrorRate{severity="page"}` or `query error-rate`. */
  readonly what: string;
  /** `firing`, or the sample's value against the threshold (`0.12 > 0.05`). */
  readonly value: string;
  /** ISO 8601: since when (the alert's activeAt; a query's first breaching round seen). */
  readonly since: string;
}

export type MetricReading =
  | { readonly reachable: true; readonly breaches: readonly MetricBreach[] }
  | { readonly reachable: false; readonly problem: string; readonly since: string };

/** Readings by metricGatesKey. */
export type ObservedMetrics = Readonly<Record<string, MetricReading>>;

/** Which readings a rollout's gates read: the same gates in two specs are asked once. */
export function metricGatesKey(g: MetricGates): string {
  return JSON.stringify([
    g.prometheus,
    g.alertmanager ?? '',
    g.bearerTokenFile ?? '',
    g.timeoutSeconds,
    g.alerts,
    g.queries,
  ]);
}

/**
 * Every distinct metricGates of the desired state: the specs' rollouts and drydock.yaml's
 * defaults (which an MCO upgrade runs under).
 */
export function metricGatesOf(desired: Partial<DesiredState>): MetricGates[] {
  const all = [
    desired.config?.defaults.rollout.metricGates,
    ...(desired.nodeImages ?? []).map((s) => s.rollout.metricGates),
    ...(desired.nodeOps ?? []).map((s) => s.rollout.metricGates),
  ];
  const byKey = new Map<string, MetricGates>();
  for (const g of all) if (g !== undefined) byKey.set(metricGatesKey(g), g);
  return [...byKey.values()];
}

/**
 * First sightings of each breach and each unreachable Prometheus in this process: Prometheus
 * says since when an alert is active but not since when a query is past its threshold.
 */
export class MetricSightings {
  private readonly first = new Map<string, number>();

  /** When `key` was first seen of the keys seen this round; the others are forgotten. */
  stamp(keys: readonly string[], now: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const k of keys) out.set(k, this.first.get(k) ?? now);
    this.first.clear();
    for (const [k, t] of out) this.first.set(k, t);
    return out;
  }
}

class MetricsError extends Error {}

interface Client {
  readonly timeoutMs: number;
  readonly headers: Record<string, string>;
}

async function getJson(client: Client, service: string, base: string, path: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { headers: client.headers, signal: AbortSignal.timeout(client.timeoutMs) });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new MetricsError(
      `${service} at ${base} unreachable: ${err instanceof Error ? err.message : String(err)}${cause}`,
    );
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    // A body cut off (or past the timeout) is no answer either.
    throw new MetricsError(`${service} at ${base} unreachable: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) {
    throw new MetricsError(`${service} at ${base} answered ${res.status} to ${path.split('?')[0]}: ${apiError(text)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MetricsError(`${service} at ${base} answered ${path.split('?')[0]} with something other than JSON`);
  }
}

/** Prometheus's own error text, short: never the whole body of a proxy's error page. */
function apiError(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error.slice(0, 300);
  } catch {
    // not JSON
  }
  return body.slice(0, 120).replace(/\s+/g, ' ');
}

const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
const labelsOf = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(record(v)).filter((e): e is [string, string] => typeof e[1] === 'string'));

function labelText(labels: Readonly<Record<string, string>>, skip = ''): string {
  const parts = Object.keys(labels)
    .filter((k) => k !== skip)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

interface Silence {
  readonly matchers: readonly { name: string; value: string; isRegex: boolean; isEqual: boolean }[];
}

function silenced(silences: readonly Silence[], labels: Readonly<Record<string, string>>): boolean {
  return silences.some((s) =>
    s.matchers.every((m) => {
      const v = labels[m.name] ?? '';
      let hit: boolean;
      try {
        hit = m.isRegex ? new RegExp(`^(?:${m.value})$`).test(v) : v === m.value;
      } catch {
        hit = false;
      }
      return hit === m.isEqual;
    }),
  );
}

async function activeSilences(client: Client, alertmanager: string): Promise<Silence[]> {
  const body = await getJson(client, 'Alertmanager', alertmanager, '/api/v2/silences');
  if (!Array.isArray(body)) throw new MetricsError(`Alertmanager at ${alertmanager} answered silences with no list`);
  return body
    .map(record)
    .filter((s) => record(s['status'])['state'] === 'active')
    .map((s) => ({
      matchers: (Array.isArray(s['matchers']) ? s['matchers'] : []).map(record).map((m) => ({
        name: String(m['name']),
        value: String(m['value']),
        isRegex: m['isRegex'] === true,
        isEqual: m['isEqual'] !== false,
      })),
    }));
}

interface Firing {
  readonly labels: Record<string, string>;
  readonly activeAt: string;
}

async function firingAlerts(client: Client, gates: MetricGates, wanted: readonly MetricAlert[]): Promise<Firing[]> {
  const body = record(await getJson(client, 'Prometheus', gates.prometheus, '/api/v1/alerts'));
  const list = record(body['data'])['alerts'];
  if (!Array.isArray(list)) throw new MetricsError(`Prometheus at ${gates.prometheus} answered alerts with no list`);
  return list
    .map(record)
    .filter((a) => a['state'] === 'firing')
    .map((a) => ({ labels: labelsOf(a['labels']), activeAt: typeof a['activeAt'] === 'string' ? a['activeAt'] : '' }))
    .filter((a) =>
      wanted.some(
        (w) => a.labels['alertname'] === w.name && Object.entries(w.labels).every(([k, v]) => a.labels[k] === v),
      ),
    );
}

async function alertBreaches(client: Client, gates: MetricGates, nowIso: string): Promise<MetricBreach[]> {
  if (gates.alerts.length === 0) return [];
  const firing = await firingAlerts(client, gates, gates.alerts);
  if (firing.length === 0) return [];
  let silences: Silence[] = [];
  let unknown = '';
  if (gates.alertmanager !== undefined) {
    try {
      silences = await activeSilences(client, gates.alertmanager);
    } catch (err) {
      // Silences that cannot be read silence nothing: the alert holds, and says why.
      unknown = ` (its silences are unknown: ${err instanceof Error ? err.message : String(err)})`;
    }
  }
  return firing
    .filter((a) => !silenced(silences, a.labels))
    .map((a) => ({
      what: `alert ${a.labels['alertname'] ?? ''}${labelText(a.labels, 'alertname')}`,
      value: `firing${unknown}`,
      since: Number.isFinite(Date.parse(a.activeAt)) ? new Date(a.activeAt).toISOString() : nowIso,
    }))
    .sort((x, y) => (x.what < y.what ? -1 : x.what > y.what ? 1 : 0));
}

/** The query's samples as [labels, value]; a scalar is one sample without labels. */
function samples(gates: MetricGates, q: MetricQuery, body: unknown): [Record<string, string>, number][] {
  const data = record(record(body)['data']);
  const result = data['result'];
  if (data['resultType'] === 'scalar' && Array.isArray(result)) return [[{}, Number(result[1])]];
  if (data['resultType'] === 'vector' && Array.isArray(result)) {
    return result.map(record).map((s) => {
      const value = s['value'];
      return [labelsOf(s['metric']), Array.isArray(value) ? Number(value[1]) : Number.NaN];
    });
  }
  throw new MetricsError(
    `Prometheus at ${gates.prometheus} answered query ${q.name} with a ${String(data['resultType'])}, not a vector or scalar`,
  );
}

async function queryBreach(client: Client, gates: MetricGates, q: MetricQuery): Promise<MetricBreach | undefined> {
  const body = await getJson(
    client,
    'Prometheus',
    gates.prometheus,
    `/api/v1/query?query=${encodeURIComponent(q.query)}`,
  );
  const past = samples(gates, q, body)
    .filter(([, v]) => (q.op === 'above' ? v > q.value : v < q.value))
    .sort((x, y) => (q.op === 'above' ? y[1] - x[1] : x[1] - y[1]));
  const worst = past[0];
  if (worst === undefined) return undefined;
  const more = past.length > 1 ? ` (and ${past.length - 1} more samples)` : '';
  return {
    what: `query ${q.name}`,
    value: `${worst[1]}${labelText(worst[0])} ${q.op === 'above' ? '>' : '<'} ${q.value}${more}`,
    since: '',
  };
}

async function bearer(gates: MetricGates): Promise<Record<string, string>> {
  if (gates.bearerTokenFile === undefined) return {};
  let token: string;
  try {
    token = (await readFile(gates.bearerTokenFile, 'utf8')).trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new MetricsError(
      `cannot read bearerTokenFile ${gates.bearerTokenFile} (${code}) for Prometheus at ${gates.prometheus}`,
    );
  }
  return { authorization: `Bearer ${token}` };
}

async function readGates(gates: MetricGates, nowIso: string): Promise<MetricBreach[]> {
  const client: Client = { timeoutMs: gates.timeoutSeconds * 1000, headers: await bearer(gates) };
  const [alerts, queries] = await Promise.all([
    alertBreaches(client, gates, nowIso),
    Promise.all(gates.queries.map((q) => queryBreach(client, gates, q))),
  ]);
  return [...alerts, ...queries.filter((b): b is MetricBreach => b !== undefined)];
}

/**
 * Reads every gate of the desired state, all at once, each request bounded by its gates'
 * timeout. `sightings` keeps since-when across rounds; without it (a one-shot plan) it is now.
 */
export async function observeMetrics(
  desired: Partial<DesiredState>,
  now: number,
  sightings: MetricSightings = new MetricSightings(),
): Promise<ObservedMetrics | undefined> {
  const all = metricGatesOf(desired);
  if (all.length === 0) return undefined;
  const nowIso = new Date(now).toISOString();
  const read = await Promise.all(
    all.map(async (g) => {
      try {
        return { key: metricGatesKey(g), breaches: await readGates(g, nowIso) };
      } catch (err) {
        if (!(err instanceof MetricsError)) throw err;
        return { key: metricGatesKey(g), problem: err.message };
      }
    }),
  );
  const seen = read.flatMap((r) =>
    r.breaches === undefined ? [`${r.key} unreachable`] : r.breaches.map((b) => `${r.key} ${b.what}`),
  );
  const first = sightings.stamp(seen, now);
  const since = (k: string): string => new Date(first.get(k) ?? now).toISOString();
  const out: Record<string, MetricReading> = {};
  for (const r of read) {
    out[r.key] =
      r.breaches === undefined
        ? { reachable: false, problem: r.problem, since: since(`${r.key} unreachable`) }
        : {
            reachable: true,
            breaches: r.breaches.map((b) => (b.since !== '' ? b : { ...b, since: since(`${r.key} ${b.what}`) })),
          };
  }
  return Object.freeze(out);
}
