/**
 * One round of a NodeMaintenance that holds (or now takes) its node: lock and cordon, evict
 * what the drain options move, and write the counters to the node's record when they changed.
 * A pod whose PDB allows no disruption now is not evicted (the Eviction API would refuse it);
 * it is named in pendingPods with that PDB and evicted in a later round, once the PDB allows.
 */
import type { ObservedNode, ObservedPod } from '../../observe/types.js';
import { ANNOTATIONS, type NodePhase } from '../../protocol/keys.js';
import type { NodeMaintenance } from '../../spec/model.js';
import { drainView, podKey, type DrainView } from '../drain.js';
import { drainStarted, drainTimeout, forcedDeletes } from '../outcome.js';
import { nodePhase } from '../protocol.js';
import type { Action, PendingPod, SpecStatus, WaitCode } from '../types.js';
import { podsOn, type ClusterView } from '../view.js';
import type { MaintenanceRound } from './round.js';
import { readRecord, sameRecord, writeRecord, type MaintenanceRecord } from './record.js';
import { maintenanceStatus } from './status.js';

/** The PDB that holds a pod on its node now: the first of its PDBs that allows no disruption. */
function holdingPdb(view: ClusterView, pod: ObservedPod): string | undefined {
  return pod.pdbs.find((key) => (view.pdbByKey.get(key)?.disruptionsAllowed ?? 1) <= 0);
}

function pendingOf(view: ClusterView, d: DrainView): PendingPod[] {
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

/** The drain's timeout, as outcome.ts decides it: it starts when the node entered Draining. */
function timeoutOf(round: MaintenanceRound, m: NodeMaintenance, node: ObservedNode, d: DrainView, taking: boolean) {
  if (taking || nodePhase(node) !== 'Draining') return { kind: 'running' } as const;
  return drainTimeout(m.drain, d, drainStarted(node, round.now), round.now);
}

interface Outcome {
  readonly phase: MaintenanceRecord['phase'];
  /** The node's phase when not the drain's own (Failed, or Skipped: given back, not cordoned again). */
  readonly nodePhase?: 'Failed' | 'Skipped';
  readonly lastError?: string;
  /** Evictions and deletions, applied after the lock and the cordon. */
  readonly moves: readonly Action[];
  readonly wait?: { readonly code: WaitCode; readonly reason: string };
}

/** What moves (evicted, or deleted where the options force it) and how the drain stands. */
function moveOrTimeOut(
  round: MaintenanceRound,
  m: NodeMaintenance,
  node: ObservedNode,
  d: DrainView,
  pending: readonly PendingPod[],
  taking: boolean,
): Outcome {
  const spec = { kind: 'NodeMaintenance', name: m.name } as const;
  const grace = m.drain.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: m.drain.gracePeriodSeconds } : {};
  if (pending.length === 0) return { phase: 'Succeeded', moves: [] };
  const timeout = timeoutOf(round, m, node, d, taking);
  if (timeout.kind === 'force') {
    const moves = forcedDeletes(spec, node.name, m.drain, timeout);
    const reason = `${node.name}: ${timeout.reason}; deleting the rest (onTimeout force)`;
    return { phase: 'Running', lastError: timeout.reason, moves, wait: { code: 'drain', reason } };
  }
  if (timeout.kind !== 'running')
    return endedOutcome(m, node, timeout.kind === 'halted' ? 'Failed' : 'Skipped', timeout.cause);
  const moves: Action[] = [];
  for (const pod of d.evict) {
    if (holdingPdb(round.view, pod) !== undefined) continue;
    moves.push({
      kind: 'evict',
      spec,
      node: node.name,
      namespace: pod.namespace,
      pod: pod.name,
      ...grace,
      reason: `NodeMaintenance ${m.name}: draining ${node.name}`,
    });
  }
  for (const r of d.remove)
    moves.push({
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
    phase: 'Running',
    ...(held?.blockedBy !== undefined ? { lastError: held.blockedBy } : {}),
    moves,
    wait: {
      code: held?.pdb !== undefined ? 'pdb' : 'drain',
      reason: `draining ${node.name}: ${pending.length} pod(s) left${what}`,
    },
  };
}

/**
 * A maintenance whose drain timed out (now, or earlier: `why` is then its recorded lastError).
 * halt: the node stays cordoned until a person looks. skipNode: a maintenance has one node and
 * no other to move on to, so skipping it gives the node back: uncordoned (if drydock cordoned
 * it), phase Skipped, not cordoned again while the file stays; the maintenance is Failed, as
 * medik8s names a maintenance that could not drain its node.
 */
function endedOutcome(m: NodeMaintenance, node: ObservedNode, as: 'Failed' | 'Skipped', why: string): Outcome {
  const again = `delete and re-add NodeMaintenance ${m.name} to try again`;
  if (as === 'Skipped') {
    const reason = `${node.name}: ${why}; drain.onTimeout skipNode gave the node back uncordoned; ${again}`;
    return { phase: 'Failed', nodePhase: 'Skipped', lastError: why, moves: [], wait: { code: 'skipped', reason } };
  }
  const reason = `${node.name}: ${why}; it stays cordoned; evict the pods by hand, or ${again}`;
  return { phase: 'Failed', nodePhase: 'Failed', lastError: why, moves: [], wait: { code: 'halted', reason } };
}

export function drainStep(
  round: MaintenanceRound,
  m: NodeMaintenance,
  node: ObservedNode,
  how: { taking: boolean; lock: string },
): SpecStatus {
  const { b, view } = round;
  const spec = { kind: 'NodeMaintenance', name: m.name } as const;
  if (how.taking) b.taken.add(node.name);
  const previous = readRecord(node);
  const own =
    previous !== undefined && previous.name === m.name && previous.phase !== 'Ended' && !how.taking
      ? previous
      : undefined;
  const pods = podsOn(view, node.name);
  const d = drainView(pods, m.drain);
  const pending = pendingOf(view, d);
  // A drain that failed or was skipped stays so: a person looks, or deletes and re-adds the file.
  const ended = how.taking ? undefined : nodePhase(node);
  const outcome: Outcome =
    ended === 'Failed' || ended === 'Skipped'
      ? endedOutcome(m, node, ended, own?.lastError ?? 'the drain failed')
      : moveOrTimeOut(round, m, node, d, pending, how.taking);
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
    ...(how.taking || node.annotations[ANNOTATIONS.operation] !== how.lock
      ? { [ANNOTATIONS.operation]: how.lock }
      : {}),
    ...(how.taking || nodePhase(node) !== target
      ? { [ANNOTATIONS.phase]: target, [ANNOTATIONS.phaseSince]: round.nowIso }
      : {}),
    ...(node.annotations[ANNOTATIONS.reason] !== (m.reason || `NodeMaintenance ${m.name}`)
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
    if (node.unschedulable && node.annotations[ANNOTATIONS.cordoned] === 'true')
      b.act({ kind: 'uncordon', spec, node: node.name, reason: `${why}: it takes workloads again` });
  } else if (!node.unschedulable)
    b.act({ kind: 'cordon', spec, node: node.name, reason: `${why}: no new pods go to it` });
  for (const a of outcome.moves) b.act(a);
  if (outcome.wait !== undefined) b.wait(spec, outcome.wait.code, outcome.wait.reason, { node: node.name });
  const since = annotations[ANNOTATIONS.phaseSince] ?? node.annotations[ANNOTATIONS.phaseSince];
  return maintenanceStatus(m, node, written, since);
}
