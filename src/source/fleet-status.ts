/**
 * The fleet's members as their status branches say, read from the one repository: each
 * branch's tip, when it was written, and each spec's revision and phase, with when the branch
 * first said Complete at that revision (for the stage's soak). A report is parsed once per tip
 * commit and kept; a round where no member wrote reads one ref per member and nothing else.
 */
import fs from 'node:fs';
import git from 'isomorphic-git';
import type { Logger } from 'pino';
import { parse } from 'yaml';
import type { MemberReport, MemberSpec } from '../plan/fleet.js';
import { readSpecStatuses } from '../report/status-read.js';
import { specDocPath } from '../report/status-docs.js';
import { isGitSourceError } from './errors.js';
import type { GitSource } from './git-source.js';
import { readStatusFiles } from './status-writer.js';

/** Status commits looked back through for when a spec became Complete (older ones: soak counted from the oldest read). */
const HISTORY_DEPTH = 200;

interface Cached {
  readonly tip: string;
  readonly report: MemberReport;
}

export interface MemberRead {
  readonly cluster: string;
  readonly branch: string;
}

export class FleetStatusReader {
  private readonly byCluster = new Map<string, Cached>();
  /** Tip commits whose report was parsed (for the benchmark and the logs). */
  parsed = 0;

  constructor(
    private readonly source: GitSource,
    private readonly logger?: Logger,
  ) {}

  /** Every member's report now; a branch that is missing or cannot be read gives none (unreachable). */
  async read(members: readonly MemberRead[]): Promise<Map<string, MemberReport>> {
    const out = new Map<string, MemberReport>();
    for (const m of members) {
      const report = await this.readOne(m);
      if (report !== undefined) out.set(m.cluster, report);
    }
    return out;
  }

  private async readOne(m: MemberRead): Promise<MemberReport | undefined> {
    let tip: string;
    try {
      tip = await this.source.readBranchTip(m.branch);
    } catch (err) {
      if (!isGitSourceError(err)) throw err;
      if (err.code !== 'branch-missing')
        this.logger?.warn({ cluster: m.cluster, branch: m.branch, code: err.code }, 'fleet member status unreadable');
      this.byCluster.delete(m.cluster);
      return undefined;
    }
    const cached = this.byCluster.get(m.cluster);
    if (cached?.tip === tip) return cached.report;
    const report = await this.parse(tip, cached?.report);
    this.parsed += 1;
    this.byCluster.set(m.cluster, { tip, report });
    return report;
  }

  private async commitTime(oid: string): Promise<number> {
    const { commit } = await git.readCommit({ fs, gitdir: this.source.gitdir, oid, cache: this.source.cache });
    return commit.committer.timestamp * 1000;
  }

  private async parse(tip: string, before: MemberReport | undefined): Promise<MemberReport> {
    const files = await readStatusFiles(this.source, tip);
    const specs = new Map<string, MemberSpec>();
    for (const read of readSpecStatuses(files).values()) {
      if (!read.ok) continue;
      const { spec, revision, phase } = read.status;
      const key = `${spec.kind}/${spec.name}`;
      if (phase !== 'Complete') {
        specs.set(key, { revision, phase });
        continue;
      }
      // Still Complete at the same revision as at the last tip read: it became so no later.
      const was = before?.specs.get(key);
      const since =
        was?.phase === 'Complete' && was.revision === revision && was.completeSince !== undefined
          ? was.completeSince
          : await this.completeSince(tip, specDocPath(spec), revision);
      specs.set(key, { revision, phase, completeSince: since });
    }
    return { writtenAt: await this.commitTime(tip), specs };
  }

  /** The time of the oldest commit of the unbroken run, back from `tip`, whose file says Complete at `revision`. */
  private async completeSince(tip: string, file: string, revision: string): Promise<number> {
    const log = await git.log({
      fs,
      gitdir: this.source.gitdir,
      ref: tip,
      depth: HISTORY_DEPTH,
      cache: this.source.cache,
    });
    let since = log[0]!.commit.committer.timestamp * 1000;
    for (const entry of log) {
      if (!(await this.saysComplete(entry.oid, file, revision))) break;
      since = entry.commit.committer.timestamp * 1000;
    }
    return since;
  }

  private async saysComplete(oid: string, file: string, revision: string): Promise<boolean> {
    try {
      const { blob } = await git.readBlob({
        fs,
        gitdir: this.source.gitdir,
        oid,
        filepath: file,
        cache: this.source.cache,
      });
      const doc = parse(Buffer.from(blob).toString('utf8')) as { revision?: unknown; phase?: unknown } | null;
      return doc?.revision === revision && doc.phase === 'Complete';
    } catch {
      // The file did not exist then (NotFoundError) or was not YAML: not Complete then.
      return false;
    }
  }
}
