/**
 * A NodeMaintenance's status as it is kept on its node (drydock.dev/maintenance, JSON): the
 * counters taken when the maintenance took the node live nowhere else, and the record stays
 * after the file left Git, so the status branch can say that the maintenance ended and when;
 * once the status branch holds the ending (plan's `published`), the record leaves the node.
 * Parsed defensively: anyone with kubectl can edit it.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { MaintenancePhase, MaintenanceReport, PendingPod } from '../types.js';

export interface MaintenanceRecord extends MaintenanceReport {
  /** The NodeMaintenance's name and the revision that wrote the record. */
  readonly name: string;
  readonly revision: string;
  readonly phase: MaintenancePhase;
  readonly lastError?: string;
}

const PHASES: readonly MaintenancePhase[] = ['Running', 'Succeeded', 'Failed', 'Ended'];

const count = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function pendingPods(v: unknown): PendingPod[] {
  if (!Array.isArray(v)) return [];
  const out: PendingPod[] = [];
  for (const p of v as unknown[]) {
    if (typeof p !== 'object' || p === null) continue;
    const o = p as Record<string, unknown>;
    const pod = text(o['pod']);
    if (pod === undefined) continue;
    const pdb = text(o['pdb']);
    const blockedBy = text(o['blockedBy']);
    out.push({ pod, ...(pdb !== undefined ? { pdb } : {}), ...(blockedBy !== undefined ? { blockedBy } : {}) });
  }
  return out;
}

/** The node's maintenance record, or undefined when it has none (or an unreadable one). */
export function readRecord(node: ObservedNode): MaintenanceRecord | undefined {
  const raw = node.annotations[ANNOTATIONS.maintenance];
  if (raw === undefined) return undefined;
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    o = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const name = text(o['name']);
  const phase = PHASES.find((p) => p === o['phase']);
  if (name === undefined || phase === undefined) return undefined;
  const optional = (key: 'lastError' | 'lastUpdate' | 'endedAt'): Record<string, string> => {
    const v = text(o[key]);
    return v !== undefined ? { [key]: v } : {};
  };
  return {
    name,
    revision: text(o['revision']) ?? '',
    phase,
    nodeName: node.name,
    reason: text(o['reason']) ?? '',
    totalPods: count(o['totalPods']),
    evictionPods: count(o['evictionPods']),
    pendingPods: pendingPods(o['pendingPods']),
    drainProgress: Math.min(100, count(o['drainProgress'])),
    ...optional('lastError'),
    ...optional('lastUpdate'),
    ...optional('endedAt'),
  };
}

/** The annotation value: keys in a fixed order, so equal records give equal strings. */
export function writeRecord(r: MaintenanceRecord): string {
  return JSON.stringify({
    name: r.name,
    revision: r.revision,
    phase: r.phase,
    reason: r.reason,
    totalPods: r.totalPods,
    evictionPods: r.evictionPods,
    pendingPods: r.pendingPods.map((p) => ({
      pod: p.pod,
      ...(p.pdb !== undefined ? { pdb: p.pdb } : {}),
      ...(p.blockedBy !== undefined ? { blockedBy: p.blockedBy } : {}),
    })),
    drainProgress: r.drainProgress,
    ...(r.lastError !== undefined ? { lastError: r.lastError } : {}),
    ...(r.lastUpdate !== undefined ? { lastUpdate: r.lastUpdate } : {}),
    ...(r.endedAt !== undefined ? { endedAt: r.endedAt } : {}),
  });
}

/** Whether two records say the same, whenever they were written. */
export function sameRecord(a: MaintenanceRecord | undefined, b: MaintenanceRecord): boolean {
  if (a === undefined) return false;
  const { lastUpdate: _a, ...x } = a;
  const { lastUpdate: _b, ...y } = b;
  return writeRecord(x) === writeRecord(y);
}
