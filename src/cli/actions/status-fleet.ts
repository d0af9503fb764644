/**
 * `drydock status --fleet`: every cluster of the fleet file (read from the tracked branch) by
 * stage, and each spec its status branch reports: phase, revision and what it waits for. A
 * cluster whose branch is missing or older than the fleet's staleAfter is shown unreachable,
 * as the stages after it count it.
 */
import fs from 'node:fs';
import git from 'isomorphic-git';
import { shortCommit } from '../../commit.js';
import { readSpecStatuses } from '../../report/status-read.js';
import { clusterStatusBranch } from '../../spec/cluster-view.js';
import { formatErrorsText } from '../../spec/format.js';
import { FLEET_FILE, loadFleet, type Fleet } from '../../spec/fleet.js';
import { isGitSourceError, readStatusFiles, type GitSource } from '../../source/index.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';

interface SpecRow {
  readonly spec: string;
  readonly phase: string;
  readonly revision: string;
  readonly waitingFor?: string;
}

interface ClusterRow {
  readonly cluster: string;
  readonly stage: string;
  readonly branch: string;
  readonly statusCommit?: string;
  readonly writtenAt?: string;
  readonly unreachable?: string;
  readonly specs: readonly SpecRow[];
}

async function clusterRow(
  source: GitSource,
  fleet: Fleet,
  stage: string,
  cluster: string,
  now: number,
): Promise<ClusterRow> {
  const branch = clusterStatusBranch(cluster);
  let tip: string;
  try {
    tip = await source.readBranchTip(branch);
  } catch (err) {
    if (!isGitSourceError(err, 'branch-missing')) throw err;
    return { cluster, stage, branch, unreachable: `no branch ${branch} yet`, specs: [] };
  }
  const { commit } = await git.readCommit({ fs, gitdir: source.gitdir, oid: tip, cache: source.cache });
  const written = commit.committer.timestamp * 1000;
  const specs: SpecRow[] = [];
  for (const read of readSpecStatuses(await readStatusFiles(source, tip)).values()) {
    if (!read.ok) continue;
    const s = read.status;
    specs.push({
      spec: `${s.spec.kind}/${s.spec.name}`,
      phase: s.phase,
      revision: s.revision,
      ...(s.waitingFor !== undefined ? { waitingFor: s.waitingFor } : {}),
    });
  }
  const stale = now - written > fleet.staleAfterMs;
  return {
    cluster,
    stage,
    branch,
    statusCommit: tip,
    writtenAt: new Date(written).toISOString(),
    ...(stale ? { unreachable: `status not written since ${new Date(written).toISOString()}` } : {}),
    specs,
  };
}

/** Columns padded to their widest cell; the last column is left as it is. */
function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function render(fleet: Fleet, commit: string, branch: string, rows: readonly ClusterRow[]): string {
  const lines: string[][] = [['STAGE', 'CLUSTER', 'SPEC', 'PHASE', 'REVISION', 'WAITS FOR']];
  for (const r of rows) {
    if (r.unreachable !== undefined) lines.push([r.stage, r.cluster, '-', 'Unreachable', '-', r.unreachable]);
    else if (r.specs.length === 0) lines.push([r.stage, r.cluster, '-', 'no specs', '-', '']);
    for (const s of r.unreachable === undefined ? r.specs : [])
      lines.push([r.stage, r.cluster, s.spec, s.phase, s.revision, s.waitingFor ?? '']);
  }
  const head = `fleet of ${fleet.clusters.length} clusters in ${fleet.stages.length} stages (${FLEET_FILE} at ${branch} ${shortCommit(commit)})`;
  return `${head}\n\n${table(lines)}\n`;
}

/** Prints the fleet's clusters × specs; exit 1 when the fleet file is invalid, 2 when there is none. */
export async function runFleetStatus(
  source: GitSource,
  branch: string,
  format: 'text' | 'json',
  out: (s: string) => void,
  err: (s: string) => void,
  now = Date.now(),
): Promise<ExitCode> {
  const commit = await source.readBranchTip(branch);
  const loaded = await loadFleet(source.readTree(commit));
  if (loaded === undefined) {
    err(`drydock status: ${source.display} has no ${FLEET_FILE} on ${branch}; --fleet needs a fleet repository\n`);
    return EXIT_ERROR;
  }
  if (!loaded.ok) {
    err(`${formatErrorsText(loaded.errors)}\ndrydock status: ${FLEET_FILE} on ${branch} is invalid\n`);
    return EXIT_FINDINGS;
  }
  const fleet = loaded.fleet;
  const rows: ClusterRow[] = [];
  for (const stage of fleet.stages)
    for (const cluster of stage.clusters) rows.push(await clusterRow(source, fleet, stage.name, cluster, now));
  if (format === 'json') out(`${JSON.stringify({ sourceCommit: commit, clusters: rows }, null, 2)}\n`);
  else out(render(fleet, commit, branch, rows));
  return EXIT_OK;
}
