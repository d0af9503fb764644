/** Tunables of plan(); every one has a default, and bad values are refused with PlanError. */
import { PlanError } from './errors.js';
import type { NodeTiming } from './pace.js';
import type { SpecStatus } from './types.js';
import type { FleetRound } from './fleet.js';

export interface PlanOptions {
  /**
   * Seconds one node takes, for every spec's forecast; forecast only. Absent: each spec's own,
   * from `observedNodes` or its kind's default (pace.ts).
   */
  readonly perNodeSeconds?: number;
  /** Nodes drydock saw done before (the status branch's history): the forecast's per-node times. */
  readonly observedNodes?: readonly NodeTiming[];
  /** Failed replacement attempts of one node (instances that never joined) before it is marked Failed. Default 3. */
  readonly maxAttempts?: number;
  /**
   * Tolerated difference between drydock's clock and the cloud's, in seconds: a new-image
   * instance created up to this long before a node was started may still be claimed as its
   * replacement. Default 60.
   */
  readonly clockSkewSeconds?: number;
  /** Namespace of the Jobs and reboot pods drydock runs on nodes (drydock's own, `--namespace`). Default kube-system, as the flag's. */
  readonly jobNamespace?: string;
  /** How long a node may take to come back from its reboot before it is marked Failed. Default 600. */
  readonly rebootTimeoutSeconds?: number;
  /** Image of the reboot pod (`--reboot-image`); default busybox with nsenter (execute/jobs/reboot-pod.ts). */
  readonly rebootImage?: string;
  /**
   * Image of the Bottlerocket update Job and of its API reboot pod (`--bottlerocket-image`): sh,
   * awk and curl; default curl's (execute/jobs/bottlerocket-update.ts).
   */
  readonly bottlerocketImage?: string;
  /**
   * The spec statuses the status branch holds, as last written there (durable). Given, an
   * ended NodeMaintenance's record leaves its node once the branch holds its ending, and its
   * Ended row is carried from here afterwards. Left out (no status branch), the record stays on
   * the node: it is then the only durable record of the ending.
   */
  readonly published?: readonly SpecStatus[];
  /** In a fleet: this round's view of the clusters before this one (plan/fleet.ts). */
  readonly fleet?: FleetRound;
  /**
   * When this drydock began acting, in ms since the epoch (the service's leadership began): a
   * drain's timeout counts from then at the earliest (sequence/drain-step.ts). Absent (a
   * one-shot plan), timeouts count from the drain's recorded start alone.
   */
  readonly actingSince?: number;
}

export interface ResolvedOptions {
  /** Set only by the perNodeSeconds option. */
  readonly perNodeMs?: number;
  readonly observedNodes: readonly NodeTiming[];
  readonly maxAttempts: number;
  readonly skewMs: number;
  readonly jobNamespace: string;
  readonly rebootTimeoutMs: number;
  readonly rebootImage?: string;
  readonly bottlerocketImage?: string;
  readonly published?: readonly SpecStatus[];
  readonly fleet?: FleetRound;
  readonly actingSince?: number;
}

function check(name: keyof PlanOptions, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new PlanError('invalid-option', `plan option ${name} must be a number >= ${min}, got ${String(value)}`, {
      option: name,
      value,
    });
  }
  return value;
}

export function resolveOptions(options: PlanOptions = {}): ResolvedOptions {
  return {
    ...(options.perNodeSeconds !== undefined
      ? { perNodeMs: check('perNodeSeconds', options.perNodeSeconds, 1, 1) * 1000 }
      : {}),
    observedNodes: options.observedNodes ?? [],
    maxAttempts: Math.floor(check('maxAttempts', options.maxAttempts, 3, 1)),
    skewMs: check('clockSkewSeconds', options.clockSkewSeconds, 60, 0) * 1000,
    jobNamespace: options.jobNamespace ?? 'kube-system',
    rebootTimeoutMs: check('rebootTimeoutSeconds', options.rebootTimeoutSeconds, 600, 1) * 1000,
    ...(options.rebootImage !== undefined ? { rebootImage: options.rebootImage } : {}),
    ...(options.bottlerocketImage !== undefined ? { bottlerocketImage: options.bottlerocketImage } : {}),
    ...(options.published !== undefined ? { published: options.published } : {}),
    ...(options.fleet !== undefined ? { fleet: options.fleet } : {}),
    ...(options.actingSince !== undefined ? { actingSince: check('actingSince', options.actingSince, 0, 0) } : {}),
  };
}
