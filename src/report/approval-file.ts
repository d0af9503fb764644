/**
 * The Approval file a person merges to let a rollout go on: for one spec, its exact image (when
 * it has one) or its exact revision (a NodeOp), and the stage. `drydock plan --head` shows it and
 * `drydock approve` writes it, so an approval is always a reviewed file, never a hand-typed
 * image or revision. Where the file goes and what it is called is plan/approval.ts's, the same
 * the planner's wait names.
 */
import { stringify } from 'yaml';
import { approvalName, approvalPath, type ApprovalStage } from '../plan/approval.js';
import type { ApprovalWanted } from '../plan/types.js';
import type { RepoConfig } from '../spec/model.js';

export type { ApprovalStage } from '../plan/approval.js';

/** The spec an approval is for, as much of it as the approval names (the planner's shape). */
export type ApprovalTarget = ApprovalWanted['target'];

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
  return { path: approvalPath(target.name, stage, config), content: approvalContent(target, stage) };
}

/** The file a wait asks for, at `path` (its repository path), as status shows it. */
export function wantedApprovalFile(wanted: ApprovalWanted, path = wanted.path): ApprovalFile {
  return { path, content: approvalContent(wanted.target, wanted.stage) };
}

function approvalContent(target: ApprovalTarget, stage: ApprovalStage): string {
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
  return header + stringify(doc, { lineWidth: 0 });
}
