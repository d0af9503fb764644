/**
 * A rollout's metricGates: Prometheus alerts and PromQL thresholds checked before each node
 * starts. Checked here what the schema cannot say: URLs that parse as http(s), a query with
 * exactly one threshold, a finite one.
 */
import type { MetricGatesSpec, MetricQuerySpec } from '../generated/common.schema.js';
import type { MetricGates, MetricQuery } from '../model.js';
import type { PathSegment } from '../parse.js';
import type { NormaliseContext } from './context.js';
import { durationSeconds } from './values.js';

const DEFAULT_TIMEOUT_SECONDS = 5;

/** The URL as written when it is an http(s) URL; reported at `path` otherwise. */
function httpUrl(ctx: NormaliseContext, path: readonly PathSegment[], text: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    ctx.report(
      'invalid-value',
      path,
      `${JSON.stringify(text)} is not an http or https URL`,
      'write the base URL, e.g. http://prometheus.monitoring:9090',
    );
    return undefined;
  }
  if (url.username !== '' || url.password !== '') {
    ctx.report(
      'invalid-value',
      path,
      'the URL carries credentials, which would show in waits and logs',
      'put a token in a file and name it in bearerTokenFile',
    );
    return undefined;
  }
  return text.replace(/\/+$/, '');
}

function query(ctx: NormaliseContext, path: readonly PathSegment[], raw: MetricQuerySpec): MetricQuery | undefined {
  const both = raw.above !== undefined && raw.below !== undefined;
  if (both || (raw.above === undefined && raw.below === undefined)) {
    ctx.report(
      'invalid-value',
      path,
      both ? 'the query has both above and below' : 'the query has no threshold',
      'give exactly one of above: <number> or below: <number>',
    );
    return undefined;
  }
  const op = raw.above !== undefined ? 'above' : 'below';
  const value = raw.above ?? raw.below ?? 0;
  if (!Number.isFinite(value)) {
    ctx.report('invalid-value', [...path, op], `${String(value)} is not a finite number`, 'write a number, e.g. 0.05');
    return undefined;
  }
  return { name: raw.name ?? raw.query, query: raw.query, op, value };
}

/** The spec's metricGates as the planner and the observer read them; undefined when left out. */
export function metricGates(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  raw: MetricGatesSpec | undefined,
): MetricGates | undefined {
  if (raw === undefined) return undefined;
  const prometheus = httpUrl(ctx, [...path, 'prometheus'], raw.prometheus);
  const alertmanager =
    raw.alertmanager !== undefined ? httpUrl(ctx, [...path, 'alertmanager'], raw.alertmanager) : undefined;
  const timeout = raw.timeout !== undefined ? durationSeconds(ctx, [...path, 'timeout'], raw.timeout) : undefined;
  if (timeout === 0)
    ctx.report('invalid-value', [...path, 'timeout'], 'a timeout of 0s lets no request finish', "write e.g. '5s'");
  const queries = (raw.queries ?? []).flatMap((q, i) => query(ctx, [...path, 'queries', i], q) ?? []);
  if (prometheus === undefined) return undefined;
  return {
    prometheus,
    ...(alertmanager !== undefined ? { alertmanager } : {}),
    ...(raw.bearerTokenFile !== undefined ? { bearerTokenFile: raw.bearerTokenFile } : {}),
    timeoutSeconds: timeout !== undefined && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS,
    onBreach: raw.onBreach ?? 'hold',
    alerts: (raw.alerts ?? []).map((a) => ({ name: a.name, labels: { ...(a.labels ?? {}) } })),
    queries,
  };
}
