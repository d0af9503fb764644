/**
 * Git-native approvals: an Approval file merged into the tracked branch that names the
 * NodeImage, the exact image, and the stage it opens (and, when it says so, the exact spec
 * revision). An approval for another image does not carry over to a new one. This is the one
 * place that decides which approvals count, where their files go and how a wait for one is
 * worded; status shows the ones the plan reports, report/approval-file.ts writes the file.
 */
import type { Approval, DesiredState, NodeImage, NodeOp, RepoConfig, SpecKind } from '../spec/model.js';
import type { ApprovalInForce, ApprovalWanted } from './types.js';

export type ApprovalStage = Approval['stage'];

/** The Approval's metadata.name (and file name): `<spec>-start`, `<spec>-after-canary` or `<spec>-resume`. */
export function approvalName(specName: string, stage: ApprovalStage): string {
  return `${specName}-${stage === 'afterCanary' ? 'after-canary' : stage}`;
}

/**
 * The directory approvals go to: `approvals` when drydock.yaml's paths read it, otherwise the
 * first path it reads (a file outside every path would never count).
 */
export function approvalsDir(config: Pick<RepoConfig, 'paths'>): string {
  const covered = config.paths.some(
    (p) => p === '.' || p === '' || p === 'approvals' || 'approvals'.startsWith(`${p.replace(/\/$/, '')}/`),
  );
  const first = config.paths[0];
  return covered || first === undefined ? 'approvals' : `${first.replace(/\/$/, '')}/approvals`;
}

/** The repository path of the Approval file for one spec and stage. */
export function approvalPath(specName: string, stage: ApprovalStage, config: Pick<RepoConfig, 'paths'>): string {
  return `${approvalsDir(config)}/${approvalName(specName, stage)}.yaml`;
}

const WAIT_PREFIX = 'approval needed';
const STAGE_WORDS: Readonly<Record<ApprovalStage, string>> = {
  start: 'before the first node',
  afterCanary: 'after the canary wave',
  resume: 'after a metric halt',
};

/** The spec an approval is for, as the Approval file names it (ApprovalWanted's target). */
export type ApprovalTarget = ApprovalWanted['target'];

/** A NodeImage's approval target: its exact image, and its revision when the approval names one. */
export function imageTarget(image: NodeImage): ApprovalTarget {
  return { kind: 'NodeImage', name: image.name, revision: image.revision, image: image.image };
}

/**
 * An in-place spec's approval target: a NodeImage (inPlace) and a NodeOpUpgrade by their image,
 * a NodeOp by its revision.
 */
export function opTarget(op: NodeOp, spec: { kind: SpecKind; name: string }): ApprovalTarget {
  const kind = spec.kind === 'NodeImage' || spec.kind === 'NodeOpUpgrade' ? spec.kind : 'NodeOp';
  return { kind, name: spec.name, revision: op.revision, ...(kind !== 'NodeOp' ? { image: op.image } : {}) };
}

/**
 * Whether an Approval counts for the target as it is now, one rule for every kind: the same
 * kind and name; the same image where the target has one (an approval for another image never
 * carries over); the same revision when the approval names one, except for a NodeOpUpgrade,
 * which is approved by its image alone.
 */
function counts(a: Approval, t: ApprovalTarget): boolean {
  if (a.target.kind !== t.kind || a.target.name !== t.name) return false;
  if (t.image !== undefined && a.image !== t.image) return false;
  return t.kind === 'NodeOpUpgrade' || a.targetRevision === undefined || a.targetRevision === t.revision;
}

/** The approvals that count for the target as it is now, in file order. */
export function approvalsInForce(desired: Pick<DesiredState, 'approvals'>, target: ApprovalTarget): Approval[] {
  return desired.approvals.filter((a) => counts(a, target));
}

export function findApproval(
  desired: Pick<DesiredState, 'approvals'>,
  target: ApprovalTarget,
  stage: ApprovalStage,
): Approval | undefined {
  return approvalsInForce(desired, target).find((a) => a.stage === stage);
}

/** How the plan reports an approval: what status shows, with its approver when known. */
export function approvalRef(a: Approval): ApprovalInForce {
  return {
    stage: a.stage,
    name: a.name,
    file: a.source.file,
    ...(a.approvedBy !== undefined ? { approvedBy: a.approvedBy } : {}),
  };
}

/** A wait for an approval: its words, and the file that ends it. */
export interface ApprovalWait {
  readonly reason: string;
  readonly approval: ApprovalWanted;
}

/** The file a person merges to approve, with what it must say. */
export function approvalNeeded(
  config: Pick<RepoConfig, 'paths'>,
  target: ApprovalTarget,
  stage: ApprovalStage,
): ApprovalWait {
  // The Approval's field names: spec.image where the target has an image, spec.revision otherwise.
  const what = target.image !== undefined ? `image ${target.image}` : `revision ${target.revision}`;
  const path = approvalPath(target.name, stage, config);
  return {
    reason:
      `${WAIT_PREFIX} (${STAGE_WORDS[stage]}): merge ${path} ` +
      `(kind Approval, target ${target.kind}/${target.name}, ${what}, stage ${stage})`,
    approval: { stage, path, target },
  };
}
