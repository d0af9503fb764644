/**
 * NodeMaintenance, the node-maintenance operator's behaviour driven by Git, one round:
 * release the nodes whose maintenance left Git, then move every maintenance in Git one step
 * (take the node's lock, cordon, evict), and report the ended ones recorded on nodes or on
 * the status branch (an ending's record leaves its node once the branch holds it).
 * A maintenance is a person's order: no window or approval holds it, but it takes the node's
 * lock like every operation (one in flight there finishes first) and its share of the budget.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { NodeMaintenance } from '../../spec/model.js';
import { compareStrings } from '../order.js';
import { lockValue, HELD_ANNOTATIONS } from '../protocol.js';
import type { SpecRef, SpecStatus } from '../types.js';
import { drainStep } from './drain.js';
import { standing } from '../sequence/holder.js';
import { maintenanceOn } from '../sequence/admit.js';
import type { MaintenanceRound } from './round.js';

export type { MaintenanceRound } from './round.js';
import { readRecord, writeRecord, type MaintenanceRecord } from './record.js';
import { endedStatus, missingNodeStatus, waitingStatus } from './status.js';

const specOf = (name: string): SpecRef => ({ kind: 'NodeMaintenance', name });

/** Every NodeMaintenance's round; returns one status per maintenance in Git or recorded as ended. */
export function planMaintenances(round: MaintenanceRound): SpecStatus[] {
  const statuses = new Map<string, SpecStatus>();
  for (const node of round.view.observed.nodes) {
    const ended = endIfGone(round, node);
    if (ended !== undefined) statuses.set(ended.spec.name, ended);
  }
  const list = [...round.desired.nodeMaintenances].sort((x, y) => compareStrings(x.name, y.name));
  for (const m of list) statuses.set(m.name, planOne(round, m));
  for (const node of round.view.observed.nodes) {
    const r = readRecord(node);
    if (r === undefined || r.phase !== 'Ended' || round.view.stateOf(node).holds) continue;
    const before = statuses.get(r.name);
    // The newest ending of a name is its record; a maintenance in Git always wins.
    if (before === undefined || (before.phase === 'Ended' && (before.maintenance?.endedAt ?? '') < (r.endedAt ?? '')))
      statuses.set(r.name, endedStatus(r));
    clearPublished(round, node, r);
  }
  for (const s of carried(round)) if (!statuses.has(s.spec.name)) statuses.set(s.spec.name, s);
  return [...statuses.values()].sort((x, y) => compareStrings(x.spec.name, y.spec.name));
}

/** The status branch's Ended row of `name`, if it holds one. */
function publishedEnding(round: MaintenanceRound, name: string): SpecStatus | undefined {
  return round.options.published?.find(
    (s) => s.spec.kind === 'NodeMaintenance' && s.spec.name === name && s.phase === 'Ended',
  );
}

/**
 * An ended maintenance's record leaves its node once the status branch holds that very
 * ending (same node, same time): the node is left as the maintenance found it, and the
 * branch is the record. Until then the record stays: a crash before the branch was written
 * loses nothing.
 */
function clearPublished(round: MaintenanceRound, node: ObservedNode, r: MaintenanceRecord): void {
  const s = publishedEnding(round, r.name);
  if (s?.maintenance === undefined || r.endedAt === undefined) return;
  if (s.maintenance.endedAt !== r.endedAt || s.maintenance.nodeName !== node.name) return;
  round.b.act({
    kind: 'annotateNode',
    spec: specOf(r.name),
    node: node.name,
    annotations: { [ANNOTATIONS.maintenance]: null },
    reason: `NodeMaintenance ${r.name} ended at ${r.endedAt} and the status branch records it: its record leaves ${node.name}`,
  });
}

/**
 * The ended maintenances the status branch records, carried on while their node exists (as
 * the record on the node was): a name in Git starts afresh, and a node gone ends the row.
 */
function carried(round: MaintenanceRound): SpecStatus[] {
  return (round.options.published ?? []).filter(
    (s) =>
      s.spec.kind === 'NodeMaintenance' &&
      s.phase === 'Ended' &&
      s.maintenance !== undefined &&
      round.view.nodeByName.has(s.maintenance.nodeName) &&
      !round.desired.nodeMaintenances.some((m) => m.name === s.spec.name),
  );
}

function planOne(round: MaintenanceRound, m: NodeMaintenance): SpecStatus {
  const { b, view } = round;
  const spec = specOf(m.name);
  const node = view.nodeByName.get(m.nodeName);
  if (node === undefined) {
    const why = `node ${m.nodeName} does not exist; the maintenance starts when a node of that name appears (check spec.nodeName at ${m.source.file}:${m.source.line})`;
    b.wait(spec, 'node', why);
    return missingNodeStatus(m, why);
  }
  // A lock of another NodeMaintenance is one whose file left Git in the commit that added
  // this one (one maintenance per node): it is taken over (stale), and the node stays cordoned.
  const state = view.stateOf(node);
  const held = standing(node, state, {
    mine: (lock) => lock.kind === 'NodeMaintenance',
    current: (lock) => lock.name === m.name,
  });
  const ours = held === 'current';
  if (held === 'foreign') {
    const op = state.lockText ?? '?';
    const phase = state.phase ?? 'unknown';
    const why =
      phase === 'Failed' || phase === 'Skipped'
        ? `waits for ${op}, which ${phase === 'Failed' ? 'failed' : 'skipped'} on ${node.name} and holds it until a person looks (${state.reason ?? 'no reason recorded'})`
        : `waits for ${op} (phase ${phase}) to finish ${node.name}: an operation in flight finishes its node first`;
    b.wait(spec, 'lock', why, { node: node.name });
    return waitingStatus(m, why);
  }
  if (!ours) {
    const counted = state.unavailable || (state.holds && state.phase !== 'Failed');
    if (!counted) {
      if (!round.budget.canTakeDown()) {
        const why = `${node.name} not cordoned yet: ${round.budget.describe()}`;
        const until = round.budget.until;
        b.wait(spec, 'budget', why, { node: node.name, ...(until !== undefined ? { until } : {}) });
        return waitingStatus(m, why);
      }
      round.budget.reserve();
      round.budget.takeDown();
    }
  }
  return drainStep(round, m, node, { taking: !ours, lock: lockValue('NodeMaintenance', m.name, m.revision) });
}

/**
 * A node held or recorded by a NodeMaintenance that is no longer in Git: uncordoned (the
 * executor does it only if drydock cordoned it), its lock released, and the record kept as
 * Ended with the time, so the status branch still says what happened. A node that another
 * NodeMaintenance in Git names is left to that one, which takes it over still cordoned.
 */
function endIfGone(round: MaintenanceRound, node: ObservedNode): SpecStatus | undefined {
  const { b, desired } = round;
  const state = round.view.stateOf(node);
  const lock = state.holds ? state.lock : undefined;
  const record = readRecord(node);
  const name =
    lock?.kind === 'NodeMaintenance'
      ? lock.name
      : record !== undefined && record.phase !== 'Ended' && !state.holds
        ? record.name
        : undefined;
  if (name === undefined || maintenanceOn(desired, node.name) !== undefined) return undefined;
  const spec = specOf(name);
  const reason = `NodeMaintenance ${name} left Git: ${node.name} is released`;
  if (state.keptCordoned) b.act({ kind: 'uncordon', spec, node: node.name, reason });
  const ended: MaintenanceRecord = {
    name,
    revision: lock?.revision ?? record?.revision ?? '',
    phase: 'Ended',
    nodeName: node.name,
    reason: record?.name === name ? record.reason : (state.reason ?? ''),
    totalPods: record?.name === name ? record.totalPods : 0,
    evictionPods: record?.name === name ? record.evictionPods : 0,
    pendingPods: [],
    drainProgress: record?.name === name ? record.drainProgress : 0,
    lastUpdate: round.nowIso,
    endedAt: round.nowIso,
  };
  const annotations = lock?.kind === 'NodeMaintenance' ? { ...HELD_ANNOTATIONS } : {};
  b.act({
    kind: 'annotateNode',
    spec,
    node: node.name,
    annotations: { ...annotations, [ANNOTATIONS.maintenance]: writeRecord(ended) },
    reason,
  });
  b.note(spec, reason, node.name);
  return endedStatus(ended);
}
