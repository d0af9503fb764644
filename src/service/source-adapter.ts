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
 * The service keeps the commit in force itself, from the revisions sync() hands it. After a
 * restart whose newest tip is refused, Sync restores the commit in force from the status
 * branch; that revision is handed over first, and the refused tip at the next sync, so the
 * service learns both without a second interface.
 */
export function desiredSourceFromSync(opts: {
  sync: Sync;
  webhookSecret?: string;
  webhookPath?: string;
}): DesiredSource {
  let failure: GitSourceError | undefined;
  let handedRestored = false;
  const runner = coalesce(async () => {
    const outcome = await opts.sync.run();
    failure = outcome.kind === 'fetch-failed' ? outcome.error : undefined;
  });
  const source: DesiredSource = {
    async sync(): Promise<DesiredRevision> {
      await runner.trigger();
      if (failure !== undefined) throw failure;
      const newest = opts.sync.newest;
      const valid = opts.sync.lastValid;
      const inForce: DesiredRevision | undefined = valid
        ? { commit: valid.commit, load: { ok: true, desired: valid.desired, files: valid.files } }
        : undefined;
      if (newest && !newest.load.ok && inForce && !handedRestored) {
        handedRestored = true;
        return inForce;
      }
      handedRestored = true;
      if (newest) return newest;
      if (inForce) return inForce;
      throw failure ?? new Error('no commit fetched yet');
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
  };
}

export function statusBranchSink(writer: StatusWriter, root?: string): StatusSink {
  return {
    async write(snapshot) {
      await writer.write(reportFromSnapshot(snapshot, root));
    },
  };
}
