/**
 * How long one node of a spec takes, for the forecast: the median of the nodes drydock has
 * seen finish (from the status branch's history, read by the caller and passed in), or a
 * default for the kind of operation when there are none. The policy's own waits (the health
 * gate's minReadySeconds, the canary's soak, the window) are the forecast's and the defaults';
 * an observed node already spent its minReadySeconds.
 */
import type { DrainOptions, RolloutPolicy } from '../spec/model.js';
import type { Pace, PaceKind, SpecRef } from './types.js';

export type { Pace, PaceKind };

/** One node drydock saw go from taken to Done, as the status branch recorded it. */
export interface NodeTiming {
  readonly spec: SpecRef;
  readonly kind: PaceKind;
  readonly node: string;
  /** ISO 8601: when it was done (the most recent observations count first). */
  readonly doneAt: string;
  readonly seconds: number;
}

/** What a spec's forecast asks for: its kind of step, and the default when nothing was observed. */
export interface PaceRequest {
  readonly kind: PaceKind;
  readonly defaultSeconds: number;
}

/** The most recent nodes a median is taken of: an old rollout on other machines counts less than none. */
export const MAX_OBSERVATIONS = 25;

/** Assumed times of the steps nothing has been observed for, in seconds (a cloud VM, a real kubelet). */
export const DEFAULT_STEP_SECONDS = {
  /** A new instance's boot and join: launched, booted, kubelet registered and Ready. */
  bootAndJoin: 150,
  /** Drain of the old node: evictions and the pods' termination grace. */
  drain: 60,
  /** A node operation's Job, pulled and run. */
  job: 60,
  /** A reboot: down, booted, kubelet Ready again. */
  reboot: 120,
} as const;

const drainSeconds = (drain: DrainOptions): number => (drain.enabled ? DEFAULT_STEP_SECONDS.drain : 0);

/** replace: a new node boots and joins, passes its health gate, the old one is drained. */
export function replaceDefault(rollout: RolloutPolicy): number {
  return DEFAULT_STEP_SECONDS.bootAndJoin + rollout.healthGate.minReadySeconds + drainSeconds(rollout.drain);
}

/** inPlace and NodeOp: drained when cordoned, the Job, the reboot when there is one, the health gate. */
export function nodeOpDefault(o: {
  readonly cordon: boolean;
  readonly drain: DrainOptions;
  readonly reboot: boolean;
  readonly minReadySeconds: number;
}): number {
  return (
    (o.cordon ? drainSeconds(o.drain) : 0) +
    DEFAULT_STEP_SECONDS.job +
    (o.reboot ? DEFAULT_STEP_SECONDS.reboot : 0) +
    o.minReadySeconds
  );
}

/** The middle value, or the mean of the two middle ones for an even count (0 for none). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

const newestFirst = (a: NodeTiming, b: NodeTiming): number =>
  a.doneAt < b.doneAt ? 1 : a.doneAt > b.doneAt ? -1 : a.node < b.node ? -1 : a.node > b.node ? 1 : 0;

/**
 * The per-node time of `spec`: the median of its own most recent observed nodes; without any,
 * of the most recent nodes of the same kind of step on any spec; without any, the default.
 * Whole seconds, at least one.
 */
export function paceOf(spec: SpecRef, request: PaceRequest, timings: readonly NodeTiming[]): Pace {
  const sameKind = timings.filter((t) => t.kind === request.kind && t.seconds >= 0);
  const own = sameKind.filter((t) => t.spec.kind === spec.kind && t.spec.name === spec.name);
  const pool = own.length > 0 ? own : sameKind;
  if (pool.length === 0)
    return { spec, kind: request.kind, perNodeSeconds: Math.max(1, request.defaultSeconds), basis: 'default' };
  const recent = [...pool].sort(newestFirst).slice(0, MAX_OBSERVATIONS);
  return {
    spec,
    kind: request.kind,
    perNodeSeconds: Math.max(1, Math.round(median(recent.map((t) => t.seconds)))),
    basis: 'observed',
    observed: recent.length,
    sameSpec: own.length > 0,
  };
}

const KIND_WORDS: Readonly<Record<PaceKind, string>> = {
  replace: 'replacements',
  inPlace: 'in-place updates',
  nodeOp: 'node operations',
};

/** The pace in words, for the plan: "2m 10s per node, from 6 observed nodes of this spec". */
export function describePace(p: Pace): string {
  const m = Math.floor(p.perNodeSeconds / 60);
  const s = p.perNodeSeconds % 60;
  const time = m === 0 ? `${s}s` : s === 0 ? `${m}m` : `${m}m ${s}s`;
  const from =
    p.basis === 'option'
      ? 'as set by the perNodeSeconds option'
      : p.basis === 'default'
        ? 'default, no observations'
        : `from ${p.observed ?? 0} observed node${p.observed === 1 ? '' : 's'} of ${p.sameSpec === true ? 'this spec' : `other ${KIND_WORDS[p.kind]}`}`;
  return `${time} per node, ${from}`;
}
