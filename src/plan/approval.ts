/**
 * Git-native approvals: an Approval file merged into the tracked branch that names the
 * NodeImage, the exact image, and the stage it opens. An approval for another image does not
 * carry over to a new one.
 */
import type { Approval, DesiredState, NodeImage } from '../spec/model.js';

export type ApprovalStage = Approval['stage'];

export function findApproval(desired: DesiredState, image: NodeImage, stage: ApprovalStage): Approval | undefined {
  return desired.approvals.find(
    (a) => a.target.kind === 'NodeImage' && a.target.name === image.name && a.image === image.image && a.stage === stage,
  );
}

/** The file a person merges to approve, with what it must say. */
export function approvalNeeded(image: NodeImage, stage: ApprovalStage): string {
  return (
    `approval needed (${stage === 'start' ? 'before the first node' : 'after the canary wave'}): ` +
    `merge approvals/${image.name}-${stage === 'start' ? 'start' : 'after-canary'}.yaml ` +
    `(kind Approval, target NodeImage/${image.name}, image ${image.image}, stage ${stage})`
  );
}
