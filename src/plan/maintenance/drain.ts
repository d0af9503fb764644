/**
 * One round of a NodeMaintenance that holds (or now takes) its node: lock and cordon, evict
 * what the drain options move, and write the counters to the node's record when they changed.
 * A pod whose PDB allows no disruption now is not evicted (the Eviction API would refuse it);
 * it is named in pendingPods with that PDB and evicted in a later round, once the PDB allows.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS, type NodePhase } from '../../protocol/keys.js';
import type { NodeMaintenance } from '../../spec/model.js';
import { drainView } from '../drain.js';
import { drainRound, pendingPods } from '../sequence/drain-step.js';
import { drainStarted } from '../outcome.js';
import type { Action, PendingPod, SpecStatus, WaitCode } from '../types.js';
import { podsOn } from '../view.js';
import type { MaintenanceRound } from './round.js';
import { readRecord, sameRecord, writeRecord, type MaintenanceRecord } from './record.js';
import { maintenanceStatus } from './status.js';

interface Outcome {
  readonly phase: MaintenanceRecord['phase'];
  /** The node's phase when not the drain's own (Failed, or Skipped: given back, not cordoned again). */
  readonly nodePhase?: 'Failed' | 'Skipped';
  readonly lastError?: string;
  /** Evictions and deletions, applied after the lock and the cordon. */
  readonly moves: readonly Action[];
  readonly wait?: { readonly code: WaitCode; readonly reason: string };
  readonly pending: readonly PendingPod[];
}

/**
 * The shared drain's round (sequence/drain-step.ts) as a maintenance records it. Its timeout
 * runs from when the node entered Draining under this maintenance.
 */
function moveOrTimeOut(round: MaintenanceRound, m: NodeMaintenance, node: ObservedNode, taking: boolean): Outcome {
  const spec = { kind: 'NodeMaintenance', name: m.name } as const;
  const state = round.view.stateOf(node);
  const started = taking || state.phase !== 'Draining' ? undefined : drainStarted(state, round.now);
  const drain = drainRound({
    spec,
    node,
    view: round.view,
    policy: m.drain,
    started,
    now: round.now,
    actingSince: round.options.actingSince,
  });
  if (drain.kind === 'drained') return { phase: 'Succeeded', moves: [], pending: drain.pending };
  if (drain.kind === 'ended')
    return endedOutcome(m, node, drain.outcome === 'halted' ? 'Failed' : 'Skipped', drain.cause, drain.pending);
  return {
    phase: 'Running',
    ...(drain.lastError !== undefined ? { lastError: drain.lastError } : {}),
    moves: drain.actions,
    wait: drain.wait,
    pending: drain.pending,
  };
}

/**
 * A maintenance whose drain timed out (now, or earlier: `why` is then its recorded lastError).
 * halt: the node stays cordoned until a person looks. skipNode: a maintenance has one node and
 * no other to move on to, so skipping it gives the node back: uncordoned (if drydock cordoned
 * it), phase Skipped, not cordoned again while the file stays; the maintenance is Failed, as
 * medik8s names a maintenance that could not drain its node.
 */
function endedOutcome(
  m: NodeMaintenance,
  node: ObservedNode,
  as: 'Failed' | 'Skipped',
  why: string,
  pending: readonly PendingPod[],
): Outcome {
  const again = `delete and re-add NodeMaintenance ${m.name} to try again`;
  if (as === 'Skipped') {
    const reason = `${node.name}: ${why}; drain.onTimeout skipNode gave the node back uncordoned; ${again}`;
    return {
      phase: 'Failed',
      nodePhase: 'Skipped',
      lastError: why,
      moves: [],
      wait: { code: 'skipped', reason },
      pending,
    };
  }
  const reason = `${node.name}: ${why}; it stays cordoned; evict the pods by hand, or ${again}`;
  return { phase: 'Failed', nodePhase: 'Failed', lastError: why, moves: [], wait: { code: 'halted', reason }, pending };
}

export function drainStep(
  round: MaintenanceRound,
  m: NodeMaintenance,
  node: ObservedNode,
  how: { taking: boolean; lock: string },
): SpecStatus {
  const { b, view } = round;
  const spec = { kind: 'NodeMaintenance', name: m.name } as const;
  const state = view.stateOf(node);
  if (how.taking) b.taken.add(node.name);
  const previous = readRecord(node);
  const own =
    previous !== undefined && previous.name === m.name && previous.phase !== 'Ended' && !how.taking
      ? previous
      : undefined;
  const pods = podsOn(view, node.name);
  // A drain that failed or was skipped stays so: a person looks, or deletes and re-adds the file.
  const ended = how.taking ? undefined : state.phase;
  const outcome: Outcome =
    ended === 'Failed' || ended === 'Skipped'
      ? endedOutcome(m, node, ended, own?.lastError ?? 'the drain failed', pendingPods(view, drainView(pods, m.drain)))
      : moveOrTimeOut(round, m, node, how.taking);
  const pending = outcome.pending;
  const evictionPods = Math.max(own?.evictionPods ?? 0, pending.length);
  const record: MaintenanceRecord = {
    name: m.name,
    revision: m.revision,
    phase: outcome.phase,
    nodeName: node.name,
    reason: m.reason,
    totalPods: own?.totalPods ?? pods.length,
    evictionPods,
    pendingPods: pending,
    drainProgress: evictionPods === 0 ? 100 : Math.floor(((evictionPods - pending.length) * 100) / evictionPods),
    ...(outcome.lastError !== undefined ? { lastError: outcome.lastError } : {}),
  };
  const changed = !sameRecord(own, record);
  const written: MaintenanceRecord = {
    ...record,
    ...(changed ? { lastUpdate: round.nowIso } : own?.lastUpdate !== undefined ? { lastUpdate: own.lastUpdate } : {}),
  };
  const target: NodePhase = outcome.nodePhase ?? (pending.length > 0 ? 'Draining' : 'Cordoned');
  const annotations: Record<string, string> = {
    ...(how.taking || state.lockText !== how.lock ? { [ANNOTATIONS.operation]: how.lock } : {}),
    ...(how.taking || state.phase !== target
      ? { [ANNOTATIONS.phase]: target, [ANNOTATIONS.phaseSince]: round.nowIso }
      : {}),
    ...(state.reason !== (m.reason || `NodeMaintenance ${m.name}`)
      ? { [ANNOTATIONS.reason]: m.reason || `NodeMaintenance ${m.name}` }
      : {}),
    ...(changed ? { [ANNOTATIONS.maintenance]: writeRecord(written) } : {}),
  };
  const why = how.taking
    ? `NodeMaintenance ${m.name} takes ${node.name}${m.reason ? ` (${m.reason})` : ''}`
    : `NodeMaintenance ${m.name}: ${node.name} ${target === 'Failed' ? 'failed' : target === 'Skipped' ? 'given back (skipNode)' : target.toLowerCase()}`;
  // The lock and phase are written before the cordon and the evictions, so a restart in
  // between finds the node held by this maintenance and goes on from there.
  if (Object.keys(annotations).length > 0)
    b.act({ kind: 'annotateNode', spec, node: node.name, annotations, reason: why });
  if (target === 'Skipped') {
    // Given back: after the record, so a restart in between finds it Skipped and uncordons again.
    if (state.keptCordoned)
      b.act({ kind: 'uncordon', spec, node: node.name, reason: `${why}: it takes workloads again` });
  } else if (!node.unschedulable)
    b.act({ kind: 'cordon', spec, node: node.name, reason: `${why}: no new pods go to it` });
  for (const a of outcome.moves) b.act(a);
  if (outcome.wait !== undefined) b.wait(spec, outcome.wait.code, outcome.wait.reason, { node: node.name });
  const since = annotations[ANNOTATIONS.phaseSince] ?? state.sinceText;
  return maintenanceStatus(m, node, written, since);
}
