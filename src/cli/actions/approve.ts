/** What `drydock approve` does once its arguments are parsed (loaded only when it runs). */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { approvalFile, type ApprovalStage, type ApprovalTarget } from '../../report/approval-file.js';
import { specDocPath } from '../../report/status-docs.js';
import { readSpecStatus, type SpecStatusDoc } from '../../report/status-read.js';
import { GitSource, isGitSourceError, readStatusFiles } from '../../source/index.js';
import { loadFromDirectory, SpecSourceError, type DesiredState } from '../../spec/index.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import type { ApproveFlags } from '../flags.js';

const KINDS = ['NodeImage', 'NodeOp', 'NodeOpUpgrade'] as const;
type Kind = (typeof KINDS)[number];

class ApproveError extends Error {
  constructor(
    message: string,
    readonly code: ExitCode = EXIT_ERROR,
  ) {
    super(message);
  }
}

/** The spec as the working tree has it, and the stage its policy requires. */
function targetOf(
  desired: DesiredState,
  kind: Kind,
  name: string,
): { target: ApprovalTarget; required?: ApprovalStage } {
  const found =
    kind === 'NodeImage'
      ? desired.nodeImages.find((s) => s.name === name)
      : kind === 'NodeOp'
        ? desired.nodeOps.find((s) => s.name === name)
        : desired.nodeOpUpgrades.find((s) => s.name === name);
  if (found === undefined)
    throw new ApproveError(
      `${kind}/${name} is not in the working tree's specs; check the name (drydock validate lists them)`,
    );
  const image = found.kind === 'NodeOp' ? undefined : found.image;
  const required =
    'rollout' in found && found.rollout.approval.required !== 'none' ? found.rollout.approval.required : undefined;
  return {
    target: { kind, name, revision: found.revision, ...(image !== undefined ? { image } : {}) },
    ...(required ? { required } : {}),
  };
}

/** The spec's status on the status branch, or why none was read. */
async function statusOf(
  flags: ApproveFlags,
  kind: Kind,
  name: string,
): Promise<{ status: SpecStatusDoc; commit: string } | { none: string }> {
  try {
    const source = new GitSource({ repo: flags.statusRepo ?? flags.dir, retries: 1 });
    const commit = await source.readBranchTip(flags.statusBranch);
    const file = specDocPath({ kind, name });
    const read = readSpecStatus(await readStatusFiles(source, commit), file);
    if (read === undefined) return { none: `the status branch has no ${file} yet` };
    if (!read.ok) return { none: `${file} on the status branch is no spec status: ${read.why}` };
    return { status: read.status, commit };
  } catch (e) {
    if (isGitSourceError(e)) return { none: e.message };
    throw e;
  }
}

export async function runApprove(
  spec: string,
  flags: ApproveFlags,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<ExitCode> {
  try {
    const [kind, name, ...rest] = spec.split('/');
    if (!KINDS.includes(kind as Kind) || !name || rest.length > 0)
      throw new ApproveError(
        `${JSON.stringify(spec)} is not KIND/NAME with KIND one of ${KINDS.join(', ')} (e.g. NodeImage/worker)`,
      );
    const dir = path.resolve(flags.dir, flags.path);
    const load = await loadFromDirectory(dir);
    if (!load.ok)
      throw new ApproveError(
        `the specs in ${dir} are invalid (${load.errors.length} error(s)); run drydock validate and fix them first`,
        EXIT_FINDINGS,
      );
    const { target, required } = targetOf(load.desired, kind as Kind, name);
    const status = await statusOf(flags, kind as Kind, name);
    // A spec a metric gate halted waits for a resume, whatever its policy requires.
    const halt = 'status' in status ? status.status.metricHalt : undefined;
    const halted = halt !== undefined;
    const stage = flags.stage ?? (halted ? 'resume' : required);
    if (stage === undefined)
      throw new ApproveError(
        `${spec} requires no approval (rollout.approval.required is none); pass --stage to write one anyway`,
      );
    let origin: string;
    if ('status' in status) {
      const waiting = status.status.revision;
      if (waiting !== target.revision) {
        throw new ApproveError(
          `the cluster runs revision ${waiting} of ${spec} (status commit ${status.commit.slice(0, 7)}), but this working tree has revision ${target.revision}: ` +
            'check out the tracked branch as drydock applied it (git pull), or wait until drydock applies this revision, then approve',
          EXIT_FINDINGS,
        );
      }
      const waitingFor = status.status.waitingFor ?? 'nothing';
      origin = `the revision on the status branch (${status.commit.slice(0, 7)}); it waits for: ${waitingFor}`;
    } else {
      origin = `the working tree's revision (no status read: ${status.none})`;
    }
    const written = approvalFile(target, stage, load.desired.config);
    // Naming the halt makes each resume a new file content, so a new commit: the approval in force
    // when a breach came back does not release that halt (plan/sequence/metric-gate.ts).
    const file =
      stage === 'resume' && halt !== undefined
        ? { ...written, content: `# Resumes the metric halt since ${halt.since}: ${halt.breach}\n${written.content}` }
        : written;
    const where = path.join(dir, file.path);
    const same = existsSync(where) && readFileSync(where, 'utf8') === file.content;
    if (!same) {
      mkdirSync(path.dirname(where), { recursive: true });
      writeFileSync(where, file.content);
    }
    const rel = path.relative(process.cwd(), where) || where;
    out(
      `${same ? 'already written' : 'wrote'} ${rel}: ${spec} ${target.image !== undefined ? `image ${target.image}` : `revision ${target.revision}`}, stage ${stage}; approving ${origin}\n`,
    );
    out(`next: git add ${rel} && git commit -m "approve ${spec} (${stage})", then merge it through review\n`);
    return EXIT_OK;
  } catch (e) {
    if (e instanceof ApproveError) {
      err(`drydock approve: ${e.message}\n`);
      return e.code;
    }
    if (e instanceof SpecSourceError) {
      err(`drydock approve: ${e.message}\n`);
      return EXIT_ERROR;
    }
    throw e;
  }
}
