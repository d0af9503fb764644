/**
 * One cluster's view of a fleet repository. Two folders at the root belong to the fleet:
 * `fleet/` (the fleet file and its stage approvals) and `clusters/` (one folder per cluster);
 * everything else is shared. A cluster sees the shared tree with its own folder laid over it:
 *
 *   clusters/<name>/<path> replaces <path> when the shared tree has it, and adds it otherwise.
 *
 * So a cluster's drydock.yaml, a spec file or an approval is overridden whole, file by file; an
 * empty file replaces a shared file with nothing. The view names files by their path in the view;
 * realPath() gives the file a finding is in, so file:line stays true.
 */
import { SpecSourceError } from './errors.js';
import { DEFAULT_CONFIG } from './normalise/config.js';
import type { LoadResult, SourcePosition } from './model.js';
import type { SpecDirEntry, SpecFileSource } from './source.js';

export const CLUSTERS_DIR = 'clusters';
export const FLEET_DIR = 'fleet';

/** The status branch of a fleet's cluster, by convention: one per cluster, all listed by `drydock/status-*`. */
export function clusterStatusBranch(cluster: string): string {
  return `drydock/status-${cluster}`;
}

export interface ClusterView extends SpecFileSource {
  readonly cluster: string;
  /** The repository path (relative to the root) of a file named by its path in the view. */
  realPath(file: string): string;
  /** The view paths the cluster's folder holds, each replacing or adding a shared file. */
  ownFiles(): Promise<ReadonlySet<string>>;
}

const join = (...parts: string[]): string => parts.filter((p) => p !== '').join('/');

async function entries(base: SpecFileSource, dir: string): Promise<readonly SpecDirEntry[] | undefined> {
  try {
    return await base.readDir(dir);
  } catch (err) {
    if (err instanceof SpecSourceError && err.code === 'NotFound') return undefined;
    throw err;
  }
}

/** The view of `cluster` over `base` (the repository root, or --path). */
export function clusterView(base: SpecFileSource, cluster: string): ClusterView {
  const own = join(CLUSTERS_DIR, cluster);
  let ownListing: Promise<Set<string>> | undefined;

  async function listOwn(): Promise<Set<string>> {
    const out = new Set<string>();
    const walk = async (dir: string): Promise<void> => {
      for (const e of (await entries(base, join(own, dir))) ?? []) {
        const p = join(dir, e.name);
        if (e.kind === 'dir') await walk(p);
        else out.add(p);
      }
    };
    await walk('');
    return out;
  }

  const ownFiles = (): Promise<Set<string>> => (ownListing ??= listOwn());

  const view: ClusterView = {
    cluster,
    realPath: (file) => file,
    ownFiles,
    async readDir(dir) {
      const shared = (await entries(base, dir)) ?? [];
      const mine = (await entries(base, join(own, dir))) ?? [];
      if (shared.length === 0 && mine.length === 0) {
        // Neither has it: the shared tree's own answer (NotFound, NotADirectory) is the true one.
        await base.readDir(dir);
      }
      const byName = new Map<string, SpecDirEntry>();
      for (const e of shared) {
        if (dir === '' && (e.name === CLUSTERS_DIR || e.name === FLEET_DIR)) continue;
        byName.set(e.name, e);
      }
      for (const e of mine) {
        const before = byName.get(e.name);
        // A folder on both sides is merged; otherwise the cluster's entry wins.
        if (before?.kind === 'dir' && e.kind === 'dir') continue;
        byName.set(e.name, e);
      }
      return [...byName.values()];
    },
    async readFile(file, maxBytes) {
      return base.readFile((await ownFiles()).has(file) ? join(own, file) : file, maxBytes);
    },
    ...(base.existedBefore ? { existedBefore: (dir: string) => base.existedBefore!(dir) } : {}),
  };
  return view;
}

/** A loader result whose files are named by their repository paths, for one cluster's view. */
export async function inRepoPaths(view: ClusterView, result: LoadResult): Promise<LoadResult> {
  const mine = await view.ownFiles();
  const real = (file: string): string => (mine.has(file) ? join(CLUSTERS_DIR, view.cluster, file) : file);
  const at = <T extends { file: string }>(x: T): T => ({ ...x, file: real(x.file) });
  const files = result.files.map(real).sort();
  const warnings = result.warnings ? { warnings: result.warnings.map(at) } : {};
  if (!result.ok) return { ok: false, errors: result.errors.map(at), files, ...warnings };
  const d = result.desired;
  const src = <T extends { source: SourcePosition }>(list: readonly T[]): T[] =>
    list.map((s) => ({ ...s, source: at(s.source) }));
  return {
    ok: true,
    files,
    ...warnings,
    desired: {
      ...d,
      config: {
        ...d.config,
        cluster: view.cluster,
        // The convention, unless the cluster's drydock.yaml names a branch of its own.
        statusBranch:
          d.config.statusBranch === DEFAULT_CONFIG.statusBranch
            ? clusterStatusBranch(view.cluster)
            : d.config.statusBranch,
        ...(d.config.source ? { source: at(d.config.source) } : {}),
      },
      scalingGroups: src(d.scalingGroups),
      nodeImages: src(d.nodeImages),
      autoscalingStrategies: src(d.autoscalingStrategies),
      nodeMaintenances: src(d.nodeMaintenances),
      nodeOps: src(d.nodeOps),
      nodeOpUpgrades: src(d.nodeOpUpgrades),
      upgradeGates: src(d.upgradeGates),
      maintenanceWindows: src(d.maintenanceWindows),
      approvals: src(d.approvals),
      mutexTargets: src(d.mutexTargets),
      mutexRunConfigs: src(d.mutexRunConfigs),
    },
  };
}
