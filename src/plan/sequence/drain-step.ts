/**
 * One round of a node's drain, for every kind: which pods are evicted, which deleted, what holds
 * the rest, and what drain.onTimeout makes of a drain past its time (outcome.ts decides that).
 * A kind calls it while its node drains and writes what it returns; it never decides a pod.
 *
 * Its timeout runs while drydock drains: from the drain's start, or from when this drydock began
 * acting if it was down (or not the leader) when the drain started; a deadline that passed
 * while no drydock was evicting anything ends no drain unheard.
 *
 * A pod whose PDB allows no disruption now is not evicted (the Eviction API would refuse it):
 * it is named in the wait with that PDB and evicted in a later round, once the PDB allows.
 */
import type { ObservedNode, ObservedPod } from '../../observe/types.js';
import type { DrainOptions } from '../../spec/model.js';
import { drainLeft, drainView, podKey, type DrainView } from '../drain.js';
import { drainTimeout, forcedDeletes } from '../outcome.js';
import type { Action, PendingPod, SpecRef, WaitCode } from '../types.js';
import { podsOn, type ClusterView } from '../view.js';

export type DrainRound =
  /** Nothing of the drain is left on the node. */
  | { readonly kind: 'drained'; readonly pending: readonly PendingPod[] }
  /** Pods are moving (or being deleted after the timeout, onTimeout force). */
  | {
      readonly kind: 'moving';
      readonly actions: readonly Action[];
      readonly wait: {
        readonly code: Extract<WaitCode, 'drain' | 'pdb'>;
        readonly reason: string;
        readonly until?: number;
      };
      readonly pending: readonly PendingPod[];
      /** What holds the drain that a person must act on (a pod the options do not move, the timeout). */
      readonly lastError?: string;
    }
  /** Past drain.timeoutSeconds with onTimeout halt or skipNode: the node ends so (outcome.ts). */
  | {
      readonly kind: 'ended';
      readonly outcome: 'halted' | 'skipped';
      readonly reason: string;
      readonly cause: string;
      readonly pending: readonly PendingPod[];
    };

export interface DrainInput {
  readonly spec: SpecRef;
  readonly node: ObservedNode;
  readonly view: ClusterView;
  readonly policy: DrainOptions;
  /** When the drain started; undefined while it has not (its timeout does not run yet). */
  readonly started: number | undefined;
  readonly now: number;
  /**
   * When this drydock began acting (plan option actingSince): the timeout counts from then at
   * the earliest, for time drydock was down is no time it spent draining.
   */
  readonly actingSince?: number | undefined;
  /**
   * The node's own Job (namespace and name), made once the node was drained: its pod runs there
   * by design and is not the drain's to move. A NodeOp's Job is made beside the phase that says
   * the node is drained, so a node may still read as draining with it (nodeop/step.ts).
   */
  readonly ownJob?: { readonly namespace: string; readonly name: string };
}

/** The pods the drain moves: every pod on the node but the pod of its own Job (DrainInput.ownJob). */
function drainedPods(input: DrainInput): readonly ObservedPod[] {
  const pods = podsOn(input.view, input.node.name);
  const own = input.ownJob;
  if (own === undefined) return pods;
  return pods.filter((p) => !(p.ownerKind === 'Job' && p.namespace === own.namespace && p.ownerName === own.name));
}

/** The PDB that holds a pod on its node now: the first of its PDBs that allows no disruption. */
function holdingPdb(view: ClusterView, pod: ObservedPod): string | undefined {
  return pod.pdbs.find((key) => (view.pdbByKey.get(key)?.disruptionsAllowed ?? 1) <= 0);
}

/** Every pod the drain still has to move, and what holds it there, by namespace/name. */
export function pendingPods(view: ClusterView, d: DrainView): PendingPod[] {
  const out: PendingPod[] = [];
  for (const pod of d.evict) {
    const pdb = holdingPdb(view, pod);
    out.push({ pod: podKey(pod), ...(pdb !== undefined ? { pdb } : {}) });
  }
  for (const r of d.remove) out.push({ pod: podKey(r.pod) });
  for (const r of d.blocked) out.push({ pod: podKey(r.pod), blockedBy: r.reason });
  for (const pod of d.terminating) out.push({ pod: podKey(pod) });
  return out.sort((x, y) => (x.pod < y.pod ? -1 : x.pod > y.pod ? 1 : 0));
}

/** The drain's round: drained, moving (with the evictions and deletions to make), or ended by its timeout. */
export function drainRound(input: DrainInput): DrainRound {
  const { spec, node, view, policy, now } = input;
  const d = drainView(drainedPods(input), policy);
  const pending = pendingPods(view, d);
  if (drainLeft(d) === 0) return { kind: 'drained', pending };
  const from = input.started === undefined ? undefined : Math.max(input.started, input.actingSince ?? input.started);
  const timeout = from === undefined ? ({ kind: 'running' } as const) : drainTimeout(policy, d, from, now);
  if (timeout.kind === 'force') {
    const reason = `${node.name}: ${timeout.reason}; deleting the rest (onTimeout force)`;
    const actions = forcedDeletes(spec, node.name, policy, timeout);
    return { kind: 'moving', actions, wait: { code: 'drain', reason }, pending, lastError: timeout.reason };
  }
  if (timeout.kind !== 'running')
    return { kind: 'ended', outcome: timeout.kind, reason: timeout.reason, cause: timeout.cause, pending };
  const grace = policy.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: policy.gracePeriodSeconds } : {};
  const why = `${spec.kind} ${spec.name}: draining ${node.name}`;
  const actions: Action[] = [];
  for (const pod of d.evict)
    if (holdingPdb(view, pod) === undefined)
      actions.push({
        kind: 'evict',
        spec,
        node: node.name,
        namespace: pod.namespace,
        pod: pod.name,
        ...grace,
        reason: why,
      });
  for (const r of d.remove)
    actions.push({
      kind: 'deletePod',
      spec,
      node: node.name,
      namespace: r.pod.namespace,
      pod: r.pod.name,
      ...grace,
      reason: r.reason,
    });
  const held = pending.find((p) => p.pdb !== undefined || p.blockedBy !== undefined);
  const what =
    held?.pdb !== undefined
      ? `; PDB ${held.pdb} allows no disruption of ${held.pod}`
      : held?.blockedBy !== undefined
        ? `; ${held.blockedBy}`
        : '';
  return {
    kind: 'moving',
    actions,
    wait: {
      code: held?.pdb !== undefined ? 'pdb' : 'drain',
      reason: `draining ${node.name}: ${drainLeft(d)} pod(s) left${what}`,
      ...(timeout.deadline !== undefined ? { until: timeout.deadline } : {}),
    },
    pending,
    ...(held?.blockedBy !== undefined ? { lastError: held.blockedBy } : {}),
  };
}
