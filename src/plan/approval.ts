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

/** The Approval's metadata.name (and file name): `<spec>-start` or `<spec>-after-canary`. */
export function approvalName(specName: string, stage: ApprovalStage): string {
  return `${specName}-${stage === 'start' ? 'start' : 'after-canary'}`;
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
};

/** The approvals that count for this NodeImage as it is now, in file order. */
export function approvalsInForce(desired: DesiredState, image: NodeImage): Approval[] {
  return desired.approvals.filter(
    (a) =>
      a.target.kind === 'NodeImage' &&
      a.target.name === image.name &&
      a.image === image.image &&
      (a.targetRevision === undefined || a.targetRevision === image.revision),
  );
}

export function findApproval(desired: DesiredState, image: NodeImage, stage: ApprovalStage): Approval | undefined {
  return approvalsInForce(desired, image).find((a) => a.stage === stage);
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
  image: NodeImage,
  stage: ApprovalStage,
): ApprovalWait {
  const path = approvalPath(image.name, stage, config);
  return {
    reason:
      `${WAIT_PREFIX} (${STAGE_WORDS[stage]}): merge ${path} ` +
      `(kind Approval, target NodeImage/${image.name}, image ${image.image}, stage ${stage})`,
    approval: {
      stage,
      path,
      target: { kind: 'NodeImage', name: image.name, revision: image.revision, image: image.image },
    },
  };
}

/**
 * The approvals that count for an in-place spec as it is now, in file order: a NodeImage
 * (inPlace) by the same rule as approvalsInForce, a NodeOpUpgrade by its image, a NodeOp by
 * its exact revision (or any revision when the approval names none).
 */
export function nodeOpApprovalsInForce(
  desired: DesiredState,
  op: NodeOp,
  target: { kind: SpecKind; name: string },
): Approval[] {
  const revisionOk = (a: Approval): boolean => a.targetRevision === undefined || a.targetRevision === op.revision;
  return desired.approvals.filter(
    (a) =>
      a.target.kind === target.kind &&
      a.target.name === target.name &&
      (target.kind === 'NodeOpUpgrade'
        ? a.image === op.image
        : target.kind === 'NodeImage'
          ? a.image === op.image && revisionOk(a)
          : revisionOk(a)),
  );
}

export function findNodeOpApproval(
  desired: DesiredState,
  op: NodeOp,
  target: { kind: SpecKind; name: string },
  stage: ApprovalStage = 'start',
): Approval | undefined {
  return nodeOpApprovalsInForce(desired, op, target).find((a) => a.stage === stage);
}

export function nodeOpApprovalNeeded(
  config: Pick<RepoConfig, 'paths'>,
  op: NodeOp,
  target: { kind: SpecKind; name: string },
  stage: ApprovalStage = 'start',
): ApprovalWait {
  // The Approval's field names: spec.revision for a NodeOp, spec.image for the other kinds.
  const byImage = target.kind !== 'NodeOp';
  const what = byImage ? `image ${op.image}` : `revision ${op.revision}`;
  const path = approvalPath(target.name, stage, config);
  const kind = target.kind === 'NodeImage' || target.kind === 'NodeOpUpgrade' ? target.kind : 'NodeOp';
  return {
    reason:
      `${WAIT_PREFIX} (${STAGE_WORDS[stage]}): merge ${path} ` +
      `(kind Approval, target ${target.kind}/${target.name}, ${what}, stage ${stage})`,
    approval: {
      stage,
      path,
      target: { kind, name: target.name, revision: op.revision, ...(byImage ? { image: op.image } : {}) },
    },
  };
}
