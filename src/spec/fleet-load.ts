/**
 * Every view of a fleet repository loaded at once (`drydock validate` with no --cluster), or one
 * cluster's: the fleet file's findings, then each cluster's, each finding naming the clusters it
 * is found in and the file it is in. A finding in a shared file is the same in every cluster
 * that reads it, so it is reported once, naming them all.
 */
import { clusterView, inRepoPaths } from './cluster-view.js';
import { compareErrors, fileStart, specError, type CodedSpecError } from './errors.js';
import { FLEET_FILE, loadFleet, type Fleet, type FleetLoad } from './fleet.js';
import { loadFromSource, type LoadOptions } from './load.js';
import type { LoadResult, SpecError } from './model.js';
import type { SpecFileSource } from './source.js';

export interface ViewLoad {
  readonly cluster: string;
  readonly result: LoadResult;
}

export type FleetViews =
  | { readonly kind: 'single' }
  | { readonly kind: 'invalid-fleet'; readonly errors: readonly CodedSpecError[] }
  | { readonly kind: 'unknown-cluster'; readonly cluster: string; readonly fleet: Fleet }
  | { readonly kind: 'fleet'; readonly fleet: Fleet; readonly views: readonly ViewLoad[] };

/** One cluster's view of `source`, loaded with its files named by their repository paths. */
export async function loadClusterView(
  source: SpecFileSource,
  cluster: string,
  opts: LoadOptions = {},
): Promise<LoadResult> {
  const view = clusterView(source, cluster);
  return inRepoPaths(view, await loadFromSource(view, opts));
}

/** The fleet's views: every cluster's, or the one named. 'single' when there is no fleet file. */
export async function loadFleetViews(source: SpecFileSource, only?: string): Promise<FleetViews> {
  const fleet = await loadFleet(source);
  if (fleet === undefined) return { kind: 'single' };
  if (!fleet.ok) return { kind: 'invalid-fleet', errors: fleet.errors };
  const names = fleet.fleet.clusters.map((c) => c.name);
  if (only !== undefined && !names.includes(only))
    return { kind: 'unknown-cluster', cluster: only, fleet: fleet.fleet };
  const views: ViewLoad[] = [];
  for (const cluster of only !== undefined ? [only] : names)
    views.push({ cluster, result: await loadClusterView(source, cluster) });
  return { kind: 'fleet', fleet: fleet.fleet, views };
}

/** Findings of several views as one list: each once, its message naming the clusters that have it. */
export function mergeFindings(found: readonly { cluster: string; errors: readonly SpecError[] }[]): SpecError[] {
  const byKey = new Map<string, { error: SpecError; clusters: string[] }>();
  for (const { cluster, errors } of found) {
    for (const e of errors) {
      const key = `${e.file}\0${e.line}\0${e.column}\0${e.code}\0${e.message}`;
      const seen = byKey.get(key);
      if (seen) seen.clusters.push(cluster);
      else byKey.set(key, { error: e, clusters: [cluster] });
    }
  }
  return [...byKey.values()]
    .map(({ error, clusters }) => ({
      ...error,
      message: `${clusters.length === 1 ? 'cluster' : 'clusters'} ${clusters.join(', ')}: ${error.message}`,
    }))
    .sort(compareErrors);
}

/** A tree loaded for one cluster: its view when the tree holds a fleet file, the whole tree otherwise. */
export interface MemberLoad {
  readonly result: LoadResult;
  /** The fleet and its approvals, when the tree holds a valid fleet file and lists the cluster. */
  readonly fleet?: Extract<FleetLoad, { ok: true }>;
}

/**
 * What a cluster's drydock (and `drydock plan --cluster`) loads from a tree: the fleet file and
 * the cluster's view, or, without a fleet file, the whole tree as before. A wrong fleet file, or
 * a cluster it does not list, refuses the tree like any invalid spec.
 */
export async function loadMember(tree: SpecFileSource, cluster: string): Promise<MemberLoad> {
  const fleet = await loadFleet(tree);
  if (fleet === undefined) return { result: await loadFromSource(tree) };
  if (!fleet.ok) return { result: { ok: false, errors: fleet.errors, files: [FLEET_FILE] } };
  const names = fleet.fleet.clusters.map((c) => c.name);
  if (!names.includes(cluster)) {
    const why =
      cluster === ''
        ? `this repository serves a fleet (${FLEET_FILE}) and drydock was not told which cluster it is for`
        : `cluster ${JSON.stringify(cluster)} is not listed in ${FLEET_FILE}`;
    const hint = `pass --cluster with one of ${names.join(', ')}`;
    return {
      result: { ok: false, errors: [specError('config', fileStart(FLEET_FILE), why, hint)], files: [FLEET_FILE] },
    };
  }
  return { result: await loadClusterView(tree, cluster), fleet };
}
