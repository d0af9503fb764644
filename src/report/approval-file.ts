/**
 * The Approval file a person merges to let a rollout go on: for one spec, its exact image (when
 * it has one) or its exact revision (a NodeOp), and the stage. `drydock plan --head` shows it and
 * `drydock approve` writes it, so an approval is always a reviewed file, never a hand-typed
 * image or revision. Where the file goes and what it is called is plan/approval.ts's, the same
 * the planner's wait names.
 */
import { stringify } from 'yaml';
import { approvalName, approvalPath, type ApprovalStage } from '../plan/approval.js';
import type { RepoConfig } from '../spec/model.js';

export type { ApprovalStage } from '../plan/approval.js';

/** The spec an approval is for, as much of it as the approval names. */
export interface ApprovalTarget {
  readonly kind: 'NodeImage' | 'NodeOp' | 'NodeOpUpgrade';
  readonly name: string;
  readonly revision: string;
  /** NodeImage and NodeOpUpgrade: the image approved. */
  readonly image?: string;
}

export interface ApprovalFile {
  /** Repository-relative path (under the specs directory). */
  readonly path: string;
  readonly content: string;
}

export function approvalFile(
  target: ApprovalTarget,
  stage: ApprovalStage,
  config: Pick<RepoConfig, 'paths'>,
): ApprovalFile {
  const name = approvalName(target.name, stage);
  // The loader's rule: NodeImage and NodeOpUpgrade approvals name the image, a NodeOp's its revision.
  const byImage = target.image !== undefined;
  const header =
    `# Approves ${target.kind}/${target.name} at ${byImage ? `image ${target.image}` : `revision ${target.revision}`}, stage ${stage}.\n` +
    '# It counts once merged into the tracked branch; the author of that commit is the approver.\n' +
    `# ${byImage ? 'Another image' : `An edit of ${target.kind}/${target.name}`} needs a new approval: this one does not carry over.\n`;
  const doc = {
    apiVersion: 'drydock.dev/v1alpha1',
    kind: 'Approval',
    metadata: { name },
    spec: {
      target: { kind: target.kind, name: target.name },
      ...(byImage ? { image: target.image } : { revision: target.revision }),
      stage,
    },
  };
  return { path: approvalPath(target.name, stage, config), content: header + stringify(doc, { lineWidth: 0 }) };
}
