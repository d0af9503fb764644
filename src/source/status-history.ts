/**
 * The status branch's recent history, read back as each spec file's versions (oldest first),
 * for the forecast's observed per-node times (report/status-timings.ts). Walks the first-parent
 * line back a bounded number of commits, and parses a spec's file only in the commits where it
 * (or one of its node files) changed: a commit where one row moved reads one file.
 */
import fs from 'node:fs';
import git from 'isomorphic-git';
import type { NodeTiming } from '../plan/pace.js';
import { readSpecStatus } from '../report/status-read.js';
import { nodeTimings, type StatusVersion } from '../report/status-timings.js';
import { SPEC_DOC } from '../report/status-nodes.js';
import type { GitSource } from './git-source.js';

/** Status commits read back at most: a few rollouts' worth, without reading a year of history. */
export const HISTORY_COMMITS = 400;

/** Every file under status/ of a commit: path → blob id. */
async function statusBlobs(source: GitSource, commit: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir: source.gitdir, oid, cache: source.cache });
    for (const e of tree) {
      const p = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === 'tree' && (prefix !== '' || e.path === 'status')) await walk(e.oid, p);
      else if (e.type === 'blob' && prefix !== '') out.set(p, e.oid);
    }
  };
  await walk(commit, '');
  return out;
}

/** The commits of the first-parent line ending at `tip`, oldest first, with their times. */
async function firstParentLine(source: GitSource, tip: string, max: number): Promise<{ oid: string; at: string }[]> {
  const line: { oid: string; at: string }[] = [];
  let oid: string | undefined = tip;
  while (oid !== undefined && line.length < max) {
    let commit;
    try {
      ({ commit } = await git.readCommit({ fs, gitdir: source.gitdir, oid, cache: source.cache }));
    } catch {
      break; // a shallow or pruned history ends the walk
    }
    line.push({ oid, at: new Date(commit.committer.timestamp * 1000).toISOString() });
    oid = commit.parent[0];
  }
  return line.reverse();
}

/** The spec file a status file belongs to: itself, or for a node file (status/K/name/nodes-N.yaml) its spec's. */
function specFileOf(path: string): string | undefined {
  if (SPEC_DOC.test(path)) return path;
  const m = /^(status\/[^/]+\/[^/]+)\/[^/]+$/.exec(path);
  return m?.[1] === undefined ? undefined : `${m[1]}.yaml`;
}

/** Each spec file's own blob and its node files' blobs, grouped: any of them changing is a new version. */
function bySpec(blobs: ReadonlyMap<string, string>): Map<string, [string, string][]> {
  const out = new Map<string, [string, string][]>();
  for (const [p, oid] of blobs) {
    const spec = specFileOf(p);
    if (spec === undefined) continue;
    const group = out.get(spec) ?? [];
    group.push([p, oid]);
    out.set(spec, group);
  }
  return out;
}

async function readBlobs(source: GitSource, group: readonly [string, string][]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const [p, oid] of group) {
    const { blob } = await git.readBlob({ fs, gitdir: source.gitdir, oid, cache: source.cache });
    files.set(p, Buffer.from(blob).toString('utf8'));
  }
  return files;
}

/** Each spec file's versions over the last `max` commits ending at `tip`, oldest first. */
export async function readStatusHistory(
  source: GitSource,
  tip: string,
  max = HISTORY_COMMITS,
): Promise<Map<string, StatusVersion[]>> {
  const versions = new Map<string, StatusVersion[]>();
  const last = new Map<string, string>();
  for (const { oid, at } of await firstParentLine(source, tip, max)) {
    for (const [path, group] of bySpec(await statusBlobs(source, oid))) {
      if (!group.some(([p]) => p === path)) continue;
      const key = group.map(([p, o]) => `${p}=${o}`).join(',');
      if (last.get(path) === key) continue;
      last.set(path, key);
      const read = readSpecStatus(await readBlobs(source, group), path);
      if (read?.ok !== true) continue;
      const list = versions.get(path) ?? [];
      list.push({ at, status: read.status });
      versions.set(path, list);
    }
  }
  return versions;
}

/** The nodes drydock saw done in the status branch's recent history, for `drydock plan`'s forecast. */
export async function observedNodeTimings(source: GitSource, branch: string): Promise<NodeTiming[]> {
  const tip = await source.readBranchTip(branch);
  const history = await readStatusHistory(source, tip);
  return [...history.values()].flatMap(nodeTimings);
}
