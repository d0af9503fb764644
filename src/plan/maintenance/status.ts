/**
 * A NodeMaintenance's status row, medik8s' status fields included (spec.maintenance): read
 * from the record this round wrote or kept on the node, never re-derived.
 */
import type { ObservedNode } from '../../observe/types.js';
import type { NodeMaintenance } from '../../spec/model.js';
import type { Condition, MaintenanceReport, NodeRow, SpecStatus } from '../types.js';
import type { MaintenanceRecord } from './record.js';

function report(r: Omit<MaintenanceReport, 'drainProgress'> & { readonly drainProgress?: number }): MaintenanceReport {
  return {
    nodeName: r.nodeName,
    reason: r.reason,
    totalPods: r.totalPods,
    evictionPods: r.evictionPods,
    pendingPods: r.pendingPods,
    drainProgress: r.drainProgress ?? 0,
    ...(r.lastUpdate !== undefined ? { lastUpdate: r.lastUpdate } : {}),
    ...(r.endedAt !== undefined ? { endedAt: r.endedAt } : {}),
  };
}

const EMPTY = { totalPods: 0, evictionPods: 0, pendingPods: [] } as const;

function base(
  name: string,
  revision: string,
  phase: SpecStatus['phase'],
  condition: Condition,
  r: MaintenanceReport,
  nodes: NodeRow[],
): SpecStatus {
  return {
    spec: { kind: 'NodeMaintenance', name },
    revision,
    phase,
    progress: { done: r.evictionPods - r.pendingPods.length, total: r.evictionPods },
    failures: phase === 'Failed' ? 1 : 0,
    conditions: [condition],
    nodes,
    pending: [],
    maintenance: r,
  };
}

/** The node does not exist (yet): an error in status that names it; nothing is done. */
export function missingNodeStatus(m: NodeMaintenance, why: string): SpecStatus {
  const r = report({ nodeName: m.nodeName, reason: m.reason, ...EMPTY });
  return {
    ...base(
      m.name,
      m.revision,
      'Failed',
      { type: 'Ready', status: 'False', reason: 'NodeNotFound', message: why },
      r,
      [],
    ),
    waitingFor: why,
    lastError: why,
  };
}

/** Waiting to take the node (another operation holds it, or the budget is full). */
export function waitingStatus(m: NodeMaintenance, why: string): SpecStatus {
  const r = report({ nodeName: m.nodeName, reason: m.reason, ...EMPTY });
  return {
    ...base(m.name, m.revision, 'Running', { type: 'Ready', status: 'False', reason: 'Waiting', message: why }, r, [
      { node: m.nodeName, phase: 'Pending', message: why },
    ]),
    waitingFor: why,
  };
}

/** The maintenance holds its node: Running while pods are left, Succeeded once drained, or Failed. */
export function maintenanceStatus(
  m: NodeMaintenance,
  node: ObservedNode,
  rec: MaintenanceRecord,
  since: string | undefined,
): SpecStatus {
  const r = report(rec);
  const left = rec.pendingPods.length;
  const held = rec.pendingPods.find((p) => p.pdb !== undefined);
  const message =
    rec.phase === 'Succeeded'
      ? `${node.name} is cordoned and drained (${rec.evictionPods} pod(s) moved); it stays so until the file is deleted`
      : rec.phase === 'Failed'
        ? `${node.name}: ${rec.lastError ?? 'failed'}`
        : `draining ${node.name}: ${left} of ${rec.evictionPods} pod(s) left${held?.pdb !== undefined ? `; PDB ${held.pdb} allows no disruption of ${held.pod}` : ''}`;
  const condition: Condition = {
    type: 'Ready',
    status: rec.phase === 'Succeeded' ? 'True' : 'False',
    reason: rec.phase,
    message,
  };
  const phase = rec.phase === 'Failed' ? 'Failed' : left > 0 ? 'Draining' : 'Cordoned';
  const row: NodeRow = { node: node.name, phase, ...(since !== undefined ? { since } : {}), message };
  return {
    ...base(m.name, m.revision, rec.phase, condition, r, [row]),
    ...(rec.phase !== 'Succeeded' ? { waitingFor: message } : {}),
    ...(rec.lastError !== undefined ? { lastError: rec.lastError } : {}),
  };
}

/** A maintenance whose file left Git: the record kept on its node says when it ended. */
export function endedStatus(rec: MaintenanceRecord): SpecStatus {
  const message = `ended at ${rec.endedAt ?? 'an unknown time'}: the file left Git; ${rec.nodeName} was released (uncordoned if drydock had cordoned it)`;
  return base(
    rec.name,
    rec.revision,
    'Ended',
    { type: 'Ready', status: 'True', reason: 'Ended', message },
    report(rec),
    [{ node: rec.nodeName, phase: 'Done', ...(rec.endedAt !== undefined ? { since: rec.endedAt } : {}), message }],
  );
}
