/**
 * What a pull request changes in the specs: every spec added, removed or changed between the
 * base and the head revision, with each changed field in words ("image v1 → v2",
 * "rollout.maxSurge 1 → 2"). Specs are compared in their normalised form, so a reformatted
 * file or a default written out is no change (the spec's revision says the same).
 */
import type { DesiredState, Spec, SpecKind } from '../spec/model.js';

export type SpecChangeKind = 'added' | 'removed' | 'changed';

export interface SpecChange {
  readonly kind: SpecKind;
  readonly name: string;
  readonly change: SpecChangeKind;
  /** Each changed field, in words; empty for added and removed specs. */
  readonly details: readonly string[];
  /** Where the spec is written in the head (the base, for a removed spec). */
  readonly file: string;
  readonly line: number;
  readonly baseRevision?: string;
  readonly headRevision?: string;
}

/** Fields every spec carries that say nothing about its behaviour. */
const META = new Set(['kind', 'name', 'apiVersion', 'source', 'revision', 'approvedBy']);

/** Every spec of a desired state, NodeOps generated from a NodeOpUpgrade left out (their source shows). */
export function allSpecs(d: DesiredState): Spec[] {
  return [
    ...d.scalingGroups,
    ...d.nodeImages,
    ...d.autoscalingStrategies,
    ...d.nodeMaintenances,
    ...d.nodeOps.filter((o) => o.generatedBy === undefined),
    ...d.nodeOpUpgrades,
    ...d.upgradeGates,
    ...d.maintenanceWindows,
    ...d.approvals,
    ...d.mutexTargets,
    ...d.mutexRunConfigs,
  ];
}

function show(value: unknown): string {
  if (value === undefined) return '(unset)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The leaves that differ between two values, as "path old → new", in key order. */
function fieldChanges(a: unknown, b: unknown, path: string, out: string[]): void {
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => path !== '' || !META.has(k)).sort();
    for (const k of keys) fieldChanges(a[k], b[k], path === '' ? k : `${path}.${k}`, out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path} ${show(a)} → ${show(b)}`);
}

function key(s: { readonly kind: string; readonly name: string }): string {
  return `${s.kind}/${s.name}`;
}

/**
 * The changes from base to head, sorted by kind and name. A base that did not load (invalid,
 * or absent) counts as empty: every head spec is then new.
 */
export function diffSpecs(base: DesiredState | undefined, head: DesiredState): SpecChange[] {
  const before = new Map((base ? allSpecs(base) : []).map((s) => [key(s), s] as const));
  const after = new Map(allSpecs(head).map((s) => [key(s), s] as const));
  const changes: SpecChange[] = [];
  for (const [k, h] of after) {
    const b = before.get(k);
    const at = { file: h.source.file, line: h.source.line, headRevision: h.revision };
    if (b === undefined) changes.push({ kind: h.kind, name: h.name, change: 'added', details: [], ...at });
    else if (b.revision !== h.revision) {
      const details: string[] = [];
      fieldChanges(b, h, '', details);
      changes.push({ kind: h.kind, name: h.name, change: 'changed', details, ...at, baseRevision: b.revision });
    }
  }
  for (const [k, b] of before) {
    if (!after.has(k))
      changes.push({
        kind: b.kind,
        name: b.name,
        change: 'removed',
        details: [],
        file: b.source.file,
        line: b.source.line,
        baseRevision: b.revision,
      });
  }
  return changes.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
}
