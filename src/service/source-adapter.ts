/**
 * Plugs the Git source into the service (service.ts): a DesiredSource whose sync()
 * fetches and loads through Sync (bursts coalesced: one fetch in flight, one queued) and whose
 * webhook route triggers it, and a StatusSink that writes the service's snapshot to the status
 * branch.
 */
import path from 'node:path';
import type { DesiredRevision, DesiredSource, StatusSink } from './service.js';
import type { StatusSnapshot } from './status.js';
import type { SpecStatus } from '../plan/types.js';
import type { StatusReport } from '../report/types.js';
import type { GitSourceError } from '../source/errors.js';
import { coalesce } from '../source/coalesce.js';
import type { StatusWriter } from '../source/status-writer.js';
import type { Sync } from '../source/sync.js';
import { webhookHandler } from '../source/webhook.js';

/**
 * The Git source as the service's DesiredSource: Sync's record of the commits (the newest and
 * the one in force, restored from the status branch after a restart) is the one the service
 * reads.
 */
export function desiredSourceFromSync(opts: {
  sync: Sync;
  webhookSecret?: string;
  webhookPath?: string;
}): DesiredSource {
  let failure: GitSourceError | undefined;
  const runner = coalesce(async () => {
    const outcome = await opts.sync.run();
    failure = outcome.kind === 'fetch-failed' ? outcome.error : undefined;
  });
  const commits = opts.sync.commits;
  const source: DesiredSource = {
    commits,
    async sync(): Promise<DesiredRevision> {
      await runner.trigger();
      if (failure !== undefined) throw failure;
      if (commits.newest === undefined) throw new Error('no commit fetched yet');
      return commits.newest;
    },
  };
  const secret = opts.webhookSecret;
  if (secret !== undefined) {
    source.webhook = (notify) =>
      webhookHandler({ secret, trigger: notify, ...(opts.webhookPath ? { path: opts.webhookPath } : {}) });
  }
  return source;
}

/**
 * A spec's status with its file paths made repository paths: spec files are named relative to
 * `root` (--path inside the repository), and the status branch shows repository paths.
 */
function withRepoPaths(x: SpecStatus, root: string): SpecStatus {
  if (!root) return x;
  const wanted = x.approvalWanted;
  return {
    ...x,
    ...(x.approvals !== undefined
      ? { approvals: x.approvals.map((a) => ({ ...a, file: path.posix.join(root, a.file) })) }
      : {}),
    ...(wanted !== undefined ? { approvalWanted: { ...wanted, path: path.posix.join(root, wanted.path) } } : {}),
  };
}

/**
 * The service's snapshot as the status branch's report. The approvals shown are the ones the
 * plan counted; `root` is --path inside the repository.
 */
export function reportFromSnapshot(s: StatusSnapshot, root = ''): StatusReport {
  const specs = s.specs.map((x) => withRepoPaths(x, root));
  const notes = [
    ...(s.loadWarnings ?? []).map((w) => `${w.file}:${w.line}: warning: ${w.message} (${w.hint})`),
    ...s.problems.map((p) => `${p.source}: ${p.message}`),
    ...(s.lastError ? [`round failed (${s.lastError.code}): ${s.lastError.message}`] : []),
  ];
  return {
    cluster: s.cluster,
    ...(s.sourceCommit !== undefined ? { sourceCommit: s.sourceCommit } : {}),
    ...(s.newestCommit !== undefined && s.newestCommit !== s.sourceCommit ? { newestCommit: s.newestCommit } : {}),
    specs,
    ...(s.loadErrors.length > 0 ? { errors: s.loadErrors } : {}),
    ...(notes.length > 0 ? { notes } : {}),
    ...(s.budget !== undefined ? { budget: s.budget } : {}),
  };
}

export function statusBranchSink(writer: StatusWriter, root?: string): StatusSink {
  return {
    branch: writer.branch,
    async write(snapshot) {
      return (await writer.write(reportFromSnapshot(snapshot, root))).commit;
    },
    readSpecs: () => writer.readSpecs(),
  };
}
