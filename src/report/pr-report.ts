/**
 * What a pull request will do, for its reviewers: the spec changes between base and head, in
 * words; for each changed rollout, how many nodes in how many groups it replaces, in how many
 * waves and by when (from the head's live plan); the approvals it needs, as files to merge;
 * what blocks it now; and the head's validation errors and warnings. Plain data, read off the loader's and
 * the planner's results; pr-render.ts lays it out.
 */
import type { ObservedState } from '../observe/types.js';
import { approvalsInForce, imageTarget } from '../plan/approval.js';
import { describePace, plan as planOnce, type PlanOptions } from '../plan/index.js';
import type { Plan, Wait } from '../plan/types.js';
import type { DesiredState, LoadResult, NodeImage, SpecError } from '../spec/model.js';
import { approvalFile, type ApprovalFile, type ApprovalStage } from './approval-file.js';
import { diffSpecs, type SpecChange } from './spec-diff.js';
import { specWarnings } from './spec-warnings.js';

export interface Revision {
  /** The ref as given (a branch or a commit). */
  readonly ref: string;
  readonly commit: string;
}

/** What the head's rollout of one changed spec does on the live cluster. */
export interface Impact {
  /** How the nodes change: replace (new instances) or inPlace (a Job on each node, then a reboot). */
  readonly strategy: NodeImage['strategy'];
  readonly nodes: number;
  readonly groups: number;
  readonly waves: number;
  readonly canaryFirst: boolean;
  /** Minutes from the plan until its last wave ends; undefined while a PDB or a halt blocks it. */
  readonly etaMinutes?: number;
  /** The ETA counts from the approval it waits for. */
  readonly etaAfterApproval?: boolean;
  /** The per-node time the ETA used, and where it came from ("2m per node, default, no observations"). */
  readonly pace?: string;
  /** What holds it back now (a PDB, a window, an approval, ...). */
  readonly waits: readonly Wait[];
}

export interface ApprovalToMerge extends ApprovalFile {
  readonly kind: string;
  readonly name: string;
  readonly stage: ApprovalStage;
}

export interface ChangeReport extends SpecChange {
  /** Present when the live part ran and the spec rolls out nodes. */
  readonly impact?: Impact;
}

export interface PrReport {
  readonly base: Revision;
  readonly head: Revision;
  readonly cluster: string;
  /** ISO 8601. */
  readonly at: string;
  readonly changes: readonly ChangeReport[];
  readonly approvals: readonly ApprovalToMerge[];
  /** The head's validation errors: nothing of it would be applied. */
  readonly errors: readonly SpecError[];
  /** The head's warnings, the ones `drydock validate` prints (spec-warnings.ts): they refuse nothing. */
  readonly warnings: readonly SpecError[];
  /** The base did not load: every head spec shows as new. */
  readonly baseInvalid: boolean;
  /** Why the live part (cluster and cloud) was skipped; undefined when it ran. */
  readonly liveSkipped?: string;
}

export interface PrInputs {
  readonly base: Revision & { readonly load: LoadResult };
  readonly head: Revision & { readonly load: LoadResult };
  readonly at: Date;
  readonly cluster?: string;
  /** The head planned against the live cluster and cloud (planHead), or why that was skipped. */
  readonly live: LivePlan | { readonly skipped: string };
}

export interface LivePlan {
  readonly plan: Plan;
  readonly observed: ObservedState;
}

/**
 * The head planned as the rollout will first meet the cluster: a new image's first round only
 * sets the group image, so the plan is made again as if that were done; then the waits show
 * what holds the first nodes back (an approval, a PDB, a window), not just "set the image".
 */
export function planHead(desired: DesiredState, observed: ObservedState, at: Date, options?: PlanOptions): Plan {
  const first = planOnce(desired, observed, at, options);
  const images = new Map<string, string>();
  for (const a of first.actions) if (a.kind === 'setGroupImage') images.set(a.groupId, a.image);
  if (images.size === 0) return first;
  const cloudGroups = observed.cloudGroups.map((g) => {
    const image = images.get(g.description.groupId);
    return image === undefined ? g : { ...g, description: { ...g.description, image } };
  });
  return planOnce(desired, { ...observed, cloudGroups }, at, options);
}

/** The approval stage a NodeImage still needs, if any: the one its policy requires and no merged file gives. */
function missingApproval(desired: DesiredState, image: NodeImage): ApprovalStage | undefined {
  const required = image.rollout.approval.required;
  if (required === 'none') return undefined;
  return approvalsInForce(desired, imageTarget(image)).some((a) => a.stage === required) ? undefined : required;
}

/**
 * PDBs that allow no disruption now, over pods on the nodes the rollout will drain: the
 * planner meets them only when it drains each node; a reviewer wants them before merging.
 */
function pdbPreflight(observed: ObservedState, image: NodeImage, nodes: readonly string[]): Wait[] {
  const pdbs = new Map<string, (typeof observed.pdbs)[number]>(
    observed.pdbs.map((p) => [`${p.namespace}/${p.name}`, p]),
  );
  const wanted = new Set(nodes);
  const seen = new Set<string>();
  const waits: Wait[] = [];
  for (const pod of observed.pods) {
    if (!wanted.has(pod.nodeName) || pod.mirror || pod.ownerKind === 'DaemonSet') continue;
    for (const key of pod.pdbs) {
      const pdb = pdbs.get(key);
      if (pdb === undefined || pdb.disruptionsAllowed > 0 || seen.has(key)) continue;
      seen.add(key);
      const reason = `PDB ${key} allows 0 disruptions now (pod ${pod.namespace}/${pod.name} on ${pod.nodeName} would be evicted)`;
      waits.push({ spec: { kind: 'NodeImage', name: image.name }, node: pod.nodeName, code: 'pdb', reason });
    }
  }
  return waits;
}

function impactOf(live: LivePlan, desired: DesiredState, image: NodeImage, at: number): Impact {
  const { plan, observed } = live;
  const status = plan.specs.find((s) => s.spec.kind === 'NodeImage' && s.spec.name === image.name);
  const waves = plan.forecast.waves.filter((w) => w.spec.kind === 'NodeImage' && w.spec.name === image.name);
  const planned = plan.waits.filter((w) => w.spec.kind === 'NodeImage' && w.spec.name === image.name);
  const pdbs = pdbPreflight(
    observed,
    image,
    waves.flatMap((w) => w.nodes),
  ).filter((p) => !planned.some((w) => w.code === 'pdb' && w.node === p.node));
  const waits = [...planned, ...pdbs];
  const last = waves.reduce<number | undefined>((m, w) => Math.max(m ?? 0, Date.parse(w.end)), undefined);
  const blocked = waits.some((w) => w.code === 'pdb' || w.code === 'halted');
  // Before the group image is set the spec counts no outdated node yet; the forecast names them.
  const forecast = new Set(waves.flatMap((w) => w.nodes)).size;
  const pace = plan.forecast.paces?.find((p) => p.spec.kind === 'NodeImage' && p.spec.name === image.name);
  return {
    strategy: image.strategy,
    nodes: forecast > 0 ? forecast : status ? status.progress.total - status.progress.done : 0,
    groups: desired.scalingGroups.filter((g) => g.nodeImage === image.name).length,
    waves: waves.length,
    canaryFirst: waves[0]?.label === 'canary',
    ...(last !== undefined && !blocked ? { etaMinutes: Math.max(0, Math.ceil((last - at) / 60_000)) } : {}),
    ...(waits.some((w) => w.code === 'approval') ? { etaAfterApproval: true } : {}),
    ...(pace !== undefined ? { pace: describePace(pace) } : {}),
    waits,
  };
}

export function buildPrReport(input: PrInputs): PrReport {
  const { base, head } = input;
  const common = {
    base: { ref: base.ref, commit: base.commit },
    head: { ref: head.ref, commit: head.commit },
    at: input.at.toISOString(),
    baseInvalid: !base.load.ok,
    warnings: specWarnings(head.load),
    ...('skipped' in input.live ? { liveSkipped: input.live.skipped } : {}),
  };
  if (!head.load.ok) {
    const cluster = input.cluster || (base.load.ok ? base.load.desired.config.cluster : 'unknown');
    return { ...common, cluster, changes: [], approvals: [], errors: head.load.errors };
  }
  const desired = head.load.desired;
  const live = 'plan' in input.live ? input.live : undefined;
  const changes: ChangeReport[] = [];
  const approvals: ApprovalToMerge[] = [];
  for (const change of diffSpecs(base.load.ok ? base.load.desired : undefined, desired)) {
    const image =
      change.kind === 'NodeImage' && change.change !== 'removed'
        ? desired.nodeImages.find((i) => i.name === change.name)
        : undefined;
    if (image === undefined) {
      changes.push(change);
      continue;
    }
    changes.push(live ? { ...change, impact: impactOf(live, desired, image, input.at.getTime()) } : change);
    const stage = missingApproval(desired, image);
    if (stage !== undefined) {
      const file = approvalFile(
        { kind: 'NodeImage', name: image.name, image: image.image, revision: image.revision },
        stage,
        desired.config,
      );
      approvals.push({ kind: 'NodeImage', name: image.name, stage, ...file });
    }
  }
  return { ...common, cluster: input.cluster || desired.config.cluster, changes, approvals, errors: [] };
}
