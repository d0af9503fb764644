/**
 * A spec's revision: a hash of its normalised content with keys sorted, so formatting,
 * comments, field order, defaults written out or left implicit, and the format it was written
 * in (apiVersion) do not make a new revision; any change of behaviour does.
 */
import { createHash } from 'node:crypto';
import type { Spec } from './model.js';

/**
 * followNewNodes decides which nodes a revision runs on, not what it does there: turning it on
 * or off must not run the NodeOp again on every node it already ran on. writtenNamespace and
 * writtenJobNamespaces are positions in a file, for validate's warnings. paused holds new starts
 * and changes nothing a node gets: pausing and resuming must not run a NodeOp again either.
 */
const EXCLUDED = new Set([
  'source',
  'revision',
  'apiVersion',
  'followNewNodes',
  'writtenNamespace',
  'writtenJobNamespaces',
  'paused',
]);

function canonical(value: unknown, top: boolean): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, false)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined && !(top && EXCLUDED.has(k)))
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k], false)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * rollout.metricGates decides when nodes start, not what is done to them: adding a Prometheus
 * gate (to a spec or to drydock.yaml's defaults) must not run a NodeOp again on every node.
 */
function withoutMetricGates(spec: Spec): unknown {
  if (!('rollout' in spec) || spec.rollout.metricGates === undefined) return spec;
  const { metricGates: _gates, ...rollout } = spec.rollout;
  return { ...spec, rollout };
}

/** 16 hex digits of SHA-256 over the canonical form. */
export function revisionOf(spec: Spec): string {
  return createHash('sha256')
    .update(canonical(withoutMetricGates(spec), true))
    .digest('hex')
    .slice(0, 16);
}
