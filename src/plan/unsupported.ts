/**
 * The specs this build reads and validates but does not act on yet. Each is reported, never
 * silently ignored: as a NotSupported row on the status branch (one per spec) and as a
 * warning of `drydock validate`, with what that means for the cluster in words.
 */
import type { DesiredState, SourcePosition, SpecKind } from '../spec/model.js';
import type { SpecStatus } from './types.js';

export interface NotActedOn {
  readonly kind: SpecKind;
  readonly name: string;
  readonly revision: string;
  readonly source: SourcePosition;
  /** What this build does not act on: "NodeOp", "NodeImage strategy inPlace". */
  readonly what: string;
  /** What that leaves undone on the cluster, in words. */
  readonly consequence: string;
  /** What a person can do about it. */
  readonly hint: string;
}

const KEEP = 'it is validated and kept for a build that acts on it; remove it if you rely on it now';

function targetsOf(targets: readonly { readonly kind: string; readonly name?: string }[]): string {
  return targets.map((t) => (t.name === undefined ? `every ${t.kind}` : `${t.kind}/${t.name}`)).join(', ');
}

/** "NodeOp is not acted on by this build: its Job runs on no node". */
export function notActedOnReason(n: NotActedOn): string {
  return `${n.what} is not acted on by this build: ${n.consequence}`;
}

/** Every spec of `desired` this build does not act on, in kind then name order. */
export function notActedOn(desired: DesiredState): NotActedOn[] {
  const out: NotActedOn[] = [];
  type Meta = { kind: SpecKind; name: string; revision: string; source: SourcePosition };
  const add = (spec: Meta, what: string, consequence: string, hint = KEEP): void => {
    out.push({
      kind: spec.kind,
      name: spec.name,
      revision: spec.revision,
      source: spec.source,
      what,
      consequence,
      hint,
    });
  };
  // UpgradeGates act on replace, inPlace, NodeOp and NodeOpUpgrade (src/plan/gates.ts); a
  // NodeMaintenance is a person's order, which no gate holds back in this build.
  for (const gate of desired.upgradeGates) {
    const forMaintenance = gate.appliesTo.targets.filter((t) => t.kind === 'NodeMaintenance');
    if (forMaintenance.length === 0) continue;
    const others = gate.appliesTo.targets.filter((t) => t.kind !== 'NodeMaintenance');
    add(
      gate,
      'UpgradeGate for NodeMaintenance',
      `its before and after Jobs do not run for ${targetsOf(forMaintenance)}${others.length > 0 ? ` (they do for ${targetsOf(others)})` : ''}`,
      `do not rely on it to hold a maintenance back; ${KEEP}`,
    );
  }
  const key = (n: NotActedOn): string => `${n.kind}/${n.name}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The status row of a spec this build does not act on: it waits, in effect, for a build that does. */
export function notSupportedStatus(n: NotActedOn): SpecStatus {
  return {
    spec: { kind: n.kind, name: n.name },
    revision: n.revision,
    phase: 'NotSupported',
    progress: { done: 0, total: 0 },
    failures: 0,
    conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NotSupported', message: notActedOnReason(n) }],
    nodes: [],
    pending: [],
    waitingFor: `a build of drydock that acts on ${n.what}; until then ${n.consequence}`,
  };
}
