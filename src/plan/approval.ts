/**
 * Git-native approvals: an Approval file merged into the tracked branch that names the
 * NodeImage, the exact image, and the stage it opens (and, when it says so, the exact spec
 * revision). An approval for another image does not carry over to a new one. This is the one
 * place that decides which approvals count; status shows the ones the plan reports.
 */
import type { Approval, DesiredState, NodeImage, NodeOp, SpecKind } from '../spec/model.js';
import type { ApprovalInForce } from './types.js';

export type ApprovalStage = Approval['stage'];

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

/** The file a person merges to approve, with what it must say. */
export function approvalNeeded(image: NodeImage, stage: ApprovalStage): string {
  return (
    `approval needed (${stage === 'start' ? 'before the first node' : 'after the canary wave'}): ` +
    `merge approvals/${image.name}-${stage === 'start' ? 'start' : 'after-canary'}.yaml ` +
    `(kind Approval, target NodeImage/${image.name}, image ${image.image}, stage ${stage})`
  );
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
  op: NodeOp,
  target: { kind: SpecKind; name: string },
  stage: ApprovalStage = 'start',
): string {
  const what = target.kind === 'NodeOp' ? `targetRevision ${op.revision}` : `image ${op.image}`;
  const when = stage === 'start' ? 'before the first node' : 'after the canary wave';
  const file = `approvals/${target.name}-${stage === 'start' ? 'start' : 'after-canary'}.yaml`;
  return `approval needed ${when}: merge ${file} (kind Approval, target ${target.kind}/${target.name}, ${what}, stage ${stage})`;
}
