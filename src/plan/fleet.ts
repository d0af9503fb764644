/**
 * Stage admission across a fleet of clusters, from their status branches alone (pure: no clock,
 * no I/O). A change to a shared spec (its kind, name and revision) starts in a cluster only when
 * every stage before the cluster's has passed it:
 *
 *   every member reports that revision Complete (a member that failed it, or whose status
 *   branch is stale, is excused up to the stage's tolerance; one more holds every later stage)
 *   → the stage's soak since the last of them → the stage's approval for that revision, if asked.
 *
 * A stale member counts as unreachable, never as done: a cluster that stopped writing may have
 * stopped anywhere.
 */
import type { SpecKind } from '../spec/model.js';
import type { SpecPhase, SpecRef } from './types.js';

export interface FleetStage {
  readonly name: string;
  /** Its clusters, by name (a selector is resolved to names when the fleet file is read). */
  readonly clusters: readonly string[];
  readonly soakMs: number;
  readonly approval: boolean;
  /** Members that may fail or be unreachable, together, before every later stage is held. */
  readonly tolerate: number;
}

export interface FleetPlan {
  readonly stages: readonly FleetStage[];
  /** A status branch not written for longer than this is unreachable. */
  readonly staleAfterMs: number;
}

/** One spec as a member's status branch reports it. */
export interface MemberSpec {
  readonly revision: string;
  readonly phase: SpecPhase;
  /** When the branch first said Complete at this revision (ms), if it says so now. */
  readonly completeSince?: number;
}

/** One member's status branch, as read this round. */
export interface MemberReport {
  /** When its tip was written (ms); absent when the branch does not exist. */
  readonly writtenAt?: number;
  /** By "Kind/name". */
  readonly specs: ReadonlyMap<string, MemberSpec>;
}

/** A merged FleetApproval: this revision of this spec may go on past this stage. */
export interface StageApproval {
  readonly stage: string;
  readonly target: { readonly kind: SpecKind; readonly name: string };
  readonly revision: string;
}

/** The change a cluster wants to start. */
export interface FleetChange {
  readonly spec: SpecRef;
  readonly revision: string;
}

export interface FleetInput {
  readonly fleet: FleetPlan;
  readonly change: FleetChange;
  /** By cluster name; a member without one has never written its branch. */
  readonly reports: ReadonlyMap<string, MemberReport>;
  readonly approvals: readonly StageApproval[];
  /**
   * Members that do not carry the change (their own folder replaces the spec's file): they are
   * neither waited for nor counted.
   */
  readonly skip?: ReadonlySet<string>;
  readonly now: number;
}

export type MemberState = 'done' | 'pending' | 'failed' | 'unreachable';

/** Where one stage stands with the change. */
export type StageVerdict =
  | { readonly state: 'passed'; readonly since: number }
  | { readonly state: 'waiting'; readonly cluster: string; readonly reason: string }
  | { readonly state: 'held'; readonly reason: string }
  | { readonly state: 'soaking'; readonly until: number; readonly reason: string }
  | { readonly state: 'approval'; readonly path: string; readonly reason: string };

/** Whether the change may start in a cluster, and if not, what it waits for and until when. */
export type Admission =
  | { readonly open: true }
  | {
      readonly open: false;
      readonly reason: string;
      /** The stage that holds it. */
      readonly stage: string;
      /** The cluster it waits for, when one member is what it waits for. */
      readonly cluster?: string;
      readonly until?: number;
      /** The FleetApproval file that lets it go on. */
      readonly approvalPath?: string;
    };

const specKey = (s: SpecRef): string => `${s.kind}/${s.name}`;

/** Where FleetApproval files go: fleet/approvals/<stage>-<spec>.yaml. */
export function stageApprovalPath(stage: string, spec: SpecRef): string {
  return `fleet/approvals/${stage}-${spec.name}.yaml`;
}

/** One member's state for the change. Stale first: an old Complete is not proof of anything now. */
export function memberState(
  report: MemberReport | undefined,
  change: FleetChange,
  staleAfterMs: number,
  now: number,
): MemberState {
  if (report?.writtenAt === undefined || now - report.writtenAt > staleAfterMs) return 'unreachable';
  const spec = report.specs.get(specKey(change.spec));
  if (spec === undefined || spec.revision !== change.revision) return 'pending';
  if (spec.phase === 'Complete') return 'done';
  if (spec.phase === 'Failed' || spec.phase === 'Halted') return 'failed';
  return 'pending';
}

const what = (c: FleetChange): string => `${specKey(c.spec)} revision ${c.revision}`;

/** Where one stage stands with the change, for the stages after it. */
export function stageVerdict(input: FleetInput, stage: FleetStage): StageVerdict {
  const { fleet, change, now } = input;
  const members = stage.clusters.filter((c) => !input.skip?.has(c));
  const states = members.map((c) => ({ c, s: memberState(input.reports.get(c), change, fleet.staleAfterMs, now) }));
  const of = (s: MemberState): string[] => states.filter((m) => m.s === s).map((m) => m.c);
  const failed = of('failed');
  const unreachable = of('unreachable');
  if (failed.length + unreachable.length > stage.tolerate) {
    const parts = [
      ...(failed.length > 0 ? [`failed in ${failed.join(', ')}`] : []),
      ...(unreachable.length > 0 ? [`unreachable: ${unreachable.join(', ')}`] : []),
    ];
    return {
      state: 'held',
      reason: `fleet: stage ${stage.name} is beyond its tolerance of ${stage.tolerate} for ${what(change)} (${parts.join('; ')}); every later stage is held`,
    };
  }
  const pending = of('pending')[0];
  if (pending !== undefined) {
    return {
      state: 'waiting',
      cluster: pending,
      reason: `fleet: waits for cluster ${pending} (stage ${stage.name}) to report ${what(change)} Complete`,
    };
  }
  let last = 0;
  for (const c of of('done'))
    last = Math.max(last, input.reports.get(c)?.specs.get(specKey(change.spec))?.completeSince ?? now);
  const until = last + stage.soakMs;
  if (now < until) {
    return {
      state: 'soaking',
      until,
      reason: `fleet: stage ${stage.name} soaks ${what(change)} until ${new Date(until).toISOString()}`,
    };
  }
  if (stage.approval && !approved(input, stage.name)) {
    const path = stageApprovalPath(stage.name, change.spec);
    return {
      state: 'approval',
      path,
      reason: `fleet: approval needed after stage ${stage.name}: merge ${path} (kind FleetApproval, stage ${stage.name}, target ${specKey(change.spec)}, revision ${change.revision})`,
    };
  }
  return { state: 'passed', since: until };
}

function approved(input: FleetInput, stage: string): boolean {
  const { change } = input;
  return input.approvals.some(
    (a) =>
      a.stage === stage &&
      a.target.kind === change.spec.kind &&
      a.target.name === change.spec.name &&
      a.revision === change.revision,
  );
}

/** The index of the stage a cluster belongs to, or -1 when it is in none. */
export function stageOf(fleet: FleetPlan, cluster: string): number {
  return fleet.stages.findIndex((s) => s.clusters.includes(cluster));
}

/** Whether the change may start in `cluster`: every stage before its own must have passed it. */
export function admit(input: FleetInput, cluster: string): Admission {
  const own = stageOf(input.fleet, cluster);
  for (const stage of input.fleet.stages.slice(0, Math.max(own, 0))) {
    const v = stageVerdict(input, stage);
    if (v.state === 'passed') continue;
    return {
      open: false,
      reason: v.reason,
      stage: stage.name,
      ...(v.state === 'waiting' ? { cluster: v.cluster } : {}),
      ...(v.state === 'soaking' ? { until: v.until } : {}),
      ...(v.state === 'approval' ? { approvalPath: v.path } : {}),
    };
  }
  return { open: true };
}

/** What a cluster's round knows of its fleet: read from Git by the service once per round. */
export interface FleetRound {
  /** This cluster. */
  readonly cluster: string;
  readonly fleet: FleetPlan;
  readonly reports: ReadonlyMap<string, MemberReport>;
  readonly approvals: readonly StageApproval[];
  /** Each member's own files (paths in its view): a member whose folder replaces a spec's file does not carry it. */
  readonly ownFiles: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A spec file of a cluster's own folder (the loader names it by its repository path). */
const OWN_FILE = /^clusters\/[^/]+\//;

/**
 * What holds `change` in this cluster, or undefined when nothing does. Only a shared spec is
 * ordered: one whose file (`file`, relative to the root) comes from this cluster's own folder
 * belongs to this cluster alone.
 */
export function fleetHold(
  round: FleetRound,
  change: FleetChange,
  file: string | undefined,
  now: number,
): Exclude<Admission, { open: true }> | undefined {
  if (file === undefined || OWN_FILE.test(file)) return undefined;
  const skip = new Set([...round.ownFiles].filter(([, files]) => files.has(file)).map(([c]) => c));
  const admission = admit(
    { fleet: round.fleet, change, reports: round.reports, approvals: round.approvals, skip, now },
    round.cluster,
  );
  return admission.open ? undefined : admission;
}

/** One stage a shared change will move through, and the earliest it can start there. */
export interface StagePass {
  readonly stage: string;
  /** Its clusters that carry the change. */
  readonly clusters: readonly string[];
  /** No earlier than this (ms): the soaks before it, each counted from the earliest the stage could be done. */
  readonly earliest: number;
  readonly soakMs: number;
  /** The FleetApproval file the stages after it wait for, if it asks for one. */
  readonly approvalPath?: string;
}

/**
 * The stages a change merged at `from` will move through: a lower bound for each, as a stage
 * cannot be done before it starts and the next one waits for its soak (and its approval, whose
 * time no one can forecast). Stages whose every cluster replaces the spec are left out.
 */
export function stagePath(fleet: FleetPlan, spec: SpecRef, skip: ReadonlySet<string>, from: number): StagePass[] {
  const out: StagePass[] = [];
  let earliest = from;
  for (const stage of fleet.stages) {
    const clusters = stage.clusters.filter((c) => !skip.has(c));
    if (clusters.length === 0) continue;
    out.push({
      stage: stage.name,
      clusters,
      earliest,
      soakMs: stage.soakMs,
      ...(stage.approval ? { approvalPath: stageApprovalPath(stage.name, spec) } : {}),
    });
    earliest += stage.soakMs;
  }
  return out;
}
