/**
 * What `drydock sandbox --scenario pr` expects of each step's output, as pure functions of the
 * text a person would read: the pull-request comment `drydock plan --format markdown` writes,
 * the wait the status branch shows before the approval, and the Approval file `drydock
 * approve` writes. Each returns the problems in words; empty when the step did what it should.
 */
import { parseAllDocuments } from 'yaml';
import type { SpecView } from './view.js';

/** The change the scenario's branch makes to one NodeImage. */
export interface BranchChange {
  readonly nodeImage: string;
  /** The NodeImage's file, relative to the repository's root. */
  readonly file: string;
  readonly from: string;
  readonly to: string;
  /** The worker nodes it will replace. */
  readonly nodes: number;
  /** rollout.canary.nodes of the head. */
  readonly canaryNodes: number;
}

/** The Approval a comment asks for: the file to merge and its content. */
export interface CommentApproval {
  readonly path: string;
  readonly content: string;
}

/** The comment's marker line: a CI step finds its earlier comment by it. */
const MARKER = '<!-- drydock-plan -->';

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The Approval file the comment asks to merge for `nodeImage`, with its YAML block. */
export function commentApproval(markdown: string, nodeImage: string): CommentApproval | undefined {
  const at = new RegExp(
    `^To let \\*\\*NodeImage/${escape(nodeImage)}\\*\\* go on \\(stage \`afterCanary\`\\), merge \`([^\`]+)\``,
    'm',
  ).exec(markdown);
  if (at === null || at[1] === undefined) return undefined;
  const block = /```yaml\n([\s\S]*?)\n```/.exec(markdown.slice(at.index));
  return block?.[1] === undefined ? undefined : { path: at[1], content: `${block[1]}\n` };
}

/** The `spec` of the one Approval document in `yaml`, or why there is none. */
function approvalSpec(yaml: string): Record<string, unknown> | string {
  const docs = parseAllDocuments(yaml);
  if (!Array.isArray(docs) || docs.length !== 1 || docs[0] === undefined || docs[0].errors.length > 0)
    return 'is not one YAML document';
  const value = docs[0].toJS() as { kind?: unknown; spec?: unknown } | null;
  if (value?.kind !== 'Approval') return `is a ${String(value?.kind)}, not an Approval`;
  return typeof value.spec === 'object' && value.spec !== null
    ? (value.spec as Record<string, unknown>)
    : 'has no spec';
}

/** What an Approval's YAML gets wrong for the change: it must approve exactly the new image, after the canary. */
export function approvalProblems(what: string, yaml: string, change: BranchChange): string[] {
  const spec = approvalSpec(yaml);
  if (typeof spec === 'string') return [`${what} ${spec}`];
  const target = spec.target as { kind?: unknown; name?: unknown } | undefined;
  const problems: string[] = [];
  if (target?.kind !== 'NodeImage' || target.name !== change.nodeImage)
    problems.push(`${what} targets ${String(target?.kind)}/${String(target?.name)}, not NodeImage/${change.nodeImage}`);
  if (spec.image !== change.to) problems.push(`${what} approves image ${String(spec.image)}, not ${change.to}`);
  if (spec.stage !== 'afterCanary') problems.push(`${what} is for stage ${String(spec.stage)}, not afterCanary`);
  return problems;
}

/**
 * What the pull-request comment gets wrong: it must open with the marker, say the image change
 * in words with the nodes it replaces, canary first, and name the afterCanary approval to
 * merge, with a file that approves exactly the new image.
 */
export function commentProblems(markdown: string, change: BranchChange): string[] {
  const problems: string[] = [];
  if (markdown.split('\n')[0] !== MARKER) problems.push(`the comment does not open with the marker ${MARKER}`);
  const line = new RegExp(
    `^- \\*\\*NodeImage/${escape(change.nodeImage)}\\*\\* \\(\`${escape(change.file)}:\\d+\`\\): (.*)$`,
    'm',
  ).exec(markdown)?.[1];
  if (line === undefined) {
    problems.push(`the comment has no line for NodeImage/${change.nodeImage} in ${change.file}`);
  } else {
    if (!line.includes(`image ${change.from} → ${change.to}`))
      problems.push(`the comment does not say "image ${change.from} → ${change.to}": ${line}`);
    if (!line.includes('rollout.approval.required none → afterCanary'))
      problems.push(`the comment does not say the approval policy becomes afterCanary: ${line}`);
    const impact = /(\d+) nodes? in 1 group will be replaced in (\d+) waves?, canary first/.exec(line);
    if (impact === null) problems.push(`the comment does not say how many nodes are replaced, canary first: ${line}`);
    else if (Number(impact[1]) !== change.nodes)
      problems.push(`the comment says ${impact[1]} nodes will be replaced, the group has ${change.nodes}`);
  }
  const approval = commentApproval(markdown, change.nodeImage);
  if (approval === undefined) problems.push('the comment names no afterCanary Approval file to merge');
  else problems.push(...approvalProblems(`the comment's ${approval.path}`, approval.content, change));
  if (!markdown.includes(`drydock approve NodeImage/${change.nodeImage} --stage afterCanary`))
    problems.push('the comment does not give the drydock approve command');
  return problems;
}

/**
 * What keeps the rollout from being the one that waits for the approval after its canary: the
 * spec waits for the afterCanary approval (its status's approvalWanted), for the file the
 * comment named, and exactly the canary's nodes are done. Empty when it waits as it should.
 */
export function approvalWaitProblems(spec: SpecView | undefined, change: BranchChange, file: string): string[] {
  if (spec === undefined) return [`the status branch has no status for NodeImage/${change.nodeImage}`];
  const problems: string[] = [];
  const wanted = spec.approvalWanted;
  if (wanted?.stage !== 'afterCanary')
    problems.push(
      `NodeImage/${change.nodeImage} waits for ${spec.waitingFor ?? 'nothing'}, not the afterCanary approval`,
    );
  else if (wanted.path !== file)
    problems.push(`NodeImage/${change.nodeImage} waits for ${wanted.path}, not ${file}: ${spec.waitingFor ?? ''}`);
  if (spec.done !== change.canaryNodes)
    problems.push(
      `NodeImage/${change.nodeImage} has ${spec.done}/${spec.total} done while waiting, expected the ${change.canaryNodes} canary node(s)`,
    );
  return problems;
}
