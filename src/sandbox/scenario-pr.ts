/**
 * `drydock sandbox --scenario pr`: the pull-request loop, run by itself the way a person runs
 * it, each step's output checked. In a clone of the fleet repository it opens a branch that
 * gives the worker NodeImage a new image and an approval after its canary; `drydock plan --base
 * main --head <branch> --format markdown` must say what that does and which file approves it;
 * the branch is merged and pushed; the rollout must stop after the canary and wait for that
 * file; `drydock approve` writes it, and it is committed and pushed; the rollout must then
 * finish, checked like the upgrade scenario's end.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { shortCommit } from '../commit.js';
import { DRYDOCK_BIN } from './components.js';
import { SandboxError } from './errors.js';
import { DEFAULT_STATUS_BRANCH, git, nextImage, readNodeImages, setNodeImages, TRACKED_BRANCH } from './fleet-repo.js';
import {
  approvalProblems,
  approvalWaitProblems,
  commentApproval,
  commentProblems,
  type BranchChange,
  type CommentApproval,
} from './scenario-pr-checks.js';
import { settled } from './scenario-nodeop.js';
import { finalProblems, guard, sameCommit, stuckSpec, describeWaiting, type ScenarioDeps } from './scenario.js';
import { formatDuration, type SandboxSnapshot } from './view.js';

export const PR_BRANCH = 'sandbox-pr';
/** The branch shortens the canary's soak: the scenario shows the loop, not the wait. */
export const PR_SOAK = '10s';

export type PrDeps = ScenarioDeps & {
  readonly kubeconfig: string;
  readonly cloudUrl: string;
  /** Says what a step did, above the live view. */
  print(lines: readonly string[]): void;
};

export interface PrSummary {
  readonly change: BranchChange;
  readonly approvalFile: string;
  readonly mergeCommit: string;
  readonly approvalCommit: string;
  readonly durationMs: number;
}

export function prSummaryLines(s: PrSummary): string[] {
  return [
    `pr complete in ${formatDuration(s.durationMs)}: NodeImage/${s.change.nodeImage} ${s.change.from} → ${s.change.to} on ${s.change.nodes} nodes, approved after the canary by ${s.approvalFile} (merge ${shortCommit(s.mergeCommit)}, approval ${shortCommit(s.approvalCommit)})`,
  ];
}

/** Runs the checked drydock, as the printed launcher does; resolves with its exit code and output. */
function drydock(
  args: readonly string[],
  cwd: string,
): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [DRYDOCK_BIN, ...args], { cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 2;
      resolve({ code, stdout, stderr });
    });
  });
}

function failed(step: string, message: string, problems: readonly string[], log?: string): SandboxError {
  return new SandboxError('CheckFailed', `${step}: ${message}`, {
    step,
    problems: [...problems],
    ...(log === undefined ? {} : { log }),
  });
}

/** The branch's edit of the NodeImage's file: a new image, an approval after the canary, a short soak. */
function editBranch(clone: string, nodeImage: string, nodes: number): BranchChange {
  const from = readNodeImages(clone).get(nodeImage) ?? nodeImage;
  const [edit] = setNodeImages(clone, new Map([[nodeImage, nextImage(from)]]));
  if (edit === undefined) throw failed('open the branch', `no NodeImage/${nodeImage} to change`, []);
  const file = path.join(clone, edit.file);
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  let canaryNodes = 1;
  for (const doc of Array.isArray(docs) ? docs : []) {
    if (doc.get('kind') !== 'NodeImage' || doc.getIn(['metadata', 'name']) !== nodeImage) continue;
    doc.setIn(['spec', 'rollout', 'approval', 'required'], 'afterCanary');
    doc.setIn(['spec', 'rollout', 'canary', 'soak'], PR_SOAK);
    const n = doc.getIn(['spec', 'rollout', 'canary', 'nodes']);
    if (typeof n === 'number') canaryNodes = n;
  }
  writeFileSync(file, (Array.isArray(docs) ? docs : []).map((d) => d.toString()).join(''));
  return { nodeImage, file: edit.file, from: edit.from, to: edit.to, nodes, canaryNodes };
}

/**
 * Follows the snapshots until `done` returns a value, failing at once when the commit is
 * refused or the NodeImage halts, and with a Timeout at the deadline.
 */
async function follow<T>(
  deps: PrDeps,
  deadline: number,
  commit: string,
  what: string,
  done: (s: SandboxSnapshot) => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const now = deps.now ?? Date.now;
  const images = new Set(deps.groups.map((g) => g.nodeImage));
  for (;;) {
    const snapshot = await deps.nextSnapshot();
    guard(deps, what);
    const refused = snapshot.git?.refused;
    if (refused !== undefined && sameCommit(refused.commit, commit))
      throw failed('the rollout', `drydock refused commit ${shortCommit(commit)}`, refused.errors, deps.log);
    const stuck = stuckSpec(snapshot.specs, images);
    if (stuck !== undefined && sameCommit(snapshot.git?.statusSource, commit)) {
      const why = stuck.lastError ?? stuck.waitingFor ?? 'no reason given';
      throw failed('the rollout', `NodeImage/${stuck.name} is ${stuck.phase}: ${why}`, [], deps.log);
    }
    const result = await done(snapshot);
    if (result !== undefined) return result;
    if (now() > deadline) {
      const waitingFor = `${what}; now: ${describeWaiting(snapshot, commit, images)}`;
      throw new SandboxError('Timeout', `the pr scenario did not finish within ${formatDuration(deps.timeoutMs)}`, {
        step: 'the rollout',
        waitingFor,
        timeoutSeconds: Math.round(deps.timeoutMs / 1000),
        log: deps.log,
      });
    }
  }
}

/** Steps 1–2: the branch, pushed, and the comment its plan writes, checked. Returns the approval it names. */
async function openAndPlan(deps: PrDeps, clone: string, change: BranchChange): Promise<CommentApproval> {
  const step = 'open the branch';
  git(['add', '--all'], { cwd: clone, step });
  git(['commit', '--quiet', '-m', `Upgrade ${change.nodeImage} to ${change.to}, approved after its canary`], {
    cwd: clone,
    step,
  });
  git(['push', '--quiet', '-u', 'origin', PR_BRANCH], { cwd: clone, step });
  deps.print([
    `scenario pr: 1/6 opened ${PR_BRANCH}: ${change.file} image ${change.from} → ${change.to}, rollout.approval.required afterCanary, canary soak ${PR_SOAK}; pushed`,
  ]);
  const args = ['plan', '--repo', '.', '--base', TRACKED_BRANCH, '--head', PR_BRANCH, '--format', 'markdown'];
  const live = ['--kubeconfig', deps.kubeconfig, '--cloud-endpoint', deps.cloudUrl];
  const plan = await drydock([...args, ...live], clone);
  const command = `drydock ${args.join(' ')}`;
  if (plan.code !== 0 && plan.code !== 1)
    throw failed('the plan', `${command} exited ${plan.code}`, [plan.stderr.trim() || plan.stdout.trim()]);
  const problems = commentProblems(plan.stdout, change);
  if (problems.length > 0) throw failed('the plan', `the comment of ${command} is wrong`, [...problems, plan.stdout]);
  const approval = commentApproval(plan.stdout, change.nodeImage);
  if (approval === undefined) throw failed('the plan', `the comment of ${command} names no approval`, [plan.stdout]);
  deps.print([
    `scenario pr: 2/6 ${command} (exit ${plan.code}) says the change, ${change.nodes} nodes canary first, and the approval ${approval.path}:`,
    ...plan.stdout
      .trimEnd()
      .split('\n')
      .map((l) => `    ${l}`),
  ]);
  return approval;
}

/** Step 5: `drydock approve` in the clone; its file must be the one the comment showed, for the new image. */
async function approve(deps: PrDeps, clone: string, change: BranchChange, named: CommentApproval): Promise<string> {
  const file = named.path;
  const step = 'the approval';
  git(['fetch', '--quiet', 'origin'], { cwd: clone, step });
  const args = ['approve', `NodeImage/${change.nodeImage}`, '--stage', 'afterCanary'];
  const r = await drydock(args, clone);
  if (r.code !== 0) throw failed(step, `drydock ${args.join(' ')} exited ${r.code}`, [r.stderr.trim()]);
  const written = git(['status', '--porcelain', '--untracked-files=all'], { cwd: clone, step });
  if (written !== `?? ${file}`)
    throw failed(step, `drydock approve did not write exactly ${file}`, [written || 'no change in the working tree']);
  const content = readFileSync(path.join(clone, file), 'utf8');
  const problems = approvalProblems(file, content, change);
  if (content !== named.content) problems.push(`${file} differs from the one the comment showed:\n${content}`);
  if (problems.length > 0) throw failed(step, `the file drydock approve wrote is wrong`, problems);
  git(['add', file], { cwd: clone, step });
  git(['commit', '--quiet', '-m', `Approve NodeImage/${change.nodeImage} ${change.to} after its canary`], {
    cwd: clone,
    step,
  });
  git(['push', '--quiet', 'origin', `HEAD:refs/heads/${TRACKED_BRANCH}`], { cwd: clone, step });
  const commit = git(['rev-parse', 'HEAD'], { cwd: clone, step });
  deps.print([
    `scenario pr: 5/6 drydock ${args.join(' ')}: ${r.stdout.split('\n')[0] ?? ''}; committed and pushed to ${TRACKED_BRANCH} (${shortCommit(commit)})`,
  ]);
  return commit;
}

/** Whether the status branch records the approval, merged by `commit`, with its author. */
function approvalRecorded(deps: PrDeps, change: BranchChange, commit: string): string[] {
  const text = git(
    ['--git-dir', deps.bare, 'show', `refs/heads/${DEFAULT_STATUS_BRANCH}:status/NodeImage/${change.nodeImage}.yaml`],
    { step: 'the final checks' },
  );
  const doc = parse(text) as { approvals?: { stage?: string; approvedBy?: { commit?: string } }[] } | null;
  const after = (doc?.approvals ?? []).find((a) => a.stage === 'afterCanary');
  if (after === undefined) return [`status/NodeImage/${change.nodeImage}.yaml records no afterCanary approval`];
  return sameCommit(after.approvedBy?.commit, commit)
    ? []
    : [
        `the afterCanary approval is recorded from ${after.approvedBy?.commit ?? 'no commit'}, not ${shortCommit(commit)}`,
      ];
}

/** Runs the loop to the end; resolves with the summary or rejects naming the step that went wrong. */
export async function runPrScenario(deps: PrDeps): Promise<PrSummary> {
  const now = deps.now ?? Date.now;
  const deadline = now() + deps.timeoutMs;
  const group = deps.groups[0];
  if (group === undefined) throw failed('open the branch', 'no worker scaling group to upgrade', []);

  deps.setHeadline('scenario pr: waiting for drydock to settle on the current specs');
  const head = (await deps.nextSnapshot()).git?.head ?? '';
  await follow(deps, deadline, head, 'drydock to settle on the current specs', (s) => (settled(s) ? true : undefined));

  const clone = mkdtempSync(path.join(deps.workDir, 'pr-'));
  try {
    git(['clone', '--quiet', deps.bare, clone], { step: 'open the branch' });
    git(['switch', '--quiet', '-c', PR_BRANCH], { cwd: clone, step: 'open the branch' });
    const change = editBranch(clone, group.nodeImage, group.size);
    deps.setHeadline(`scenario pr: ${PR_BRANCH} changes NodeImage/${change.nodeImage}; planning it`);
    const named = await openAndPlan(deps, clone, change);
    const file = named.path;

    const step = 'merge the branch';
    git(['switch', '--quiet', TRACKED_BRANCH], { cwd: clone, step });
    git(['merge', '--quiet', '--ff-only', PR_BRANCH], { cwd: clone, step });
    git(['push', '--quiet', 'origin', TRACKED_BRANCH], { cwd: clone, step });
    const merge = git(['rev-parse', 'HEAD'], { cwd: clone, step });
    const mergedAt = now();
    deps.print([`scenario pr: 3/6 merged ${PR_BRANCH} into ${TRACKED_BRANCH} and pushed (${shortCommit(merge)})`]);
    deps.setHeadline(`scenario pr: canary of NodeImage/${change.nodeImage}; then it waits for ${file}`);

    const waiting = await follow(deps, deadline, merge, `the rollout to wait for ${file} after its canary`, (s) => {
      const spec = s.specs.find((v) => v.kind === 'NodeImage' && v.name === change.nodeImage);
      const reported = sameCommit(s.git?.statusSource, merge);
      return reported && spec?.approvalWanted !== undefined ? spec : undefined;
    });
    const problems = approvalWaitProblems(waiting, change, file);
    if (problems.length > 0)
      throw failed('the approval wait', 'the rollout does not wait as the comment said', problems);
    deps.print([`scenario pr: 4/6 the canary is done and the rollout waits: ${waiting.waitingFor ?? ''}`]);

    const approval = await approve(deps, clone, change, named);
    deps.setHeadline(`scenario pr: approved; rolling NodeImage/${change.nodeImage} out to the end`);
    let last: string[] = [];
    await follow(deps, deadline, approval, 'the rollout to finish and the final checks to pass', async (s) => {
      if (!sameCommit(s.git?.statusSource, approval)) return undefined;
      const spec = s.specs.find((v) => v.kind === 'NodeImage' && v.name === change.nodeImage);
      if (spec?.phase !== 'Complete' || spec.done !== spec.total) return undefined;
      const source = s.git?.statusSource;
      last = finalProblems([group], new Map([[change.nodeImage, change.to]]), approval, {
        instances: new Map([[group.groupId, (await deps.cloud.describeGroup(group.groupId)).instances]]),
        nodes: s.nodes,
        specs: s.specs,
        ...(source === undefined ? {} : { statusSource: source }),
      });
      return last.length === 0 ? true : undefined;
    }).catch((err: unknown) => {
      throw err instanceof SandboxError && last.length > 0
        ? new SandboxError(err.code, err.message, { ...err.data, problems: last })
        : err;
    });
    const recorded = approvalRecorded(deps, change, approval);
    if (recorded.length > 0) throw failed('the final checks', 'the approval is not on the status branch', recorded);
    deps.print([
      `scenario pr: 6/6 every ${group.groupId} node and instance runs ${change.to}; NodeImage/${change.nodeImage} Complete ${change.nodes}/${change.nodes}, the approval recorded`,
    ]);
    return { change, approvalFile: file, mergeCommit: merge, approvalCommit: approval, durationMs: now() - mergedAt };
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
}
