/**
 * One cluster of a fleet, as its drydock runs it: the loader reads the fleet file and this
 * cluster's view of each commit (a fleet file that is wrong refuses the commit like any spec);
 * before each round the status branches of the clusters of the earlier stages are read (once
 * per round, a report parsed once per tip commit), and the planner gets them as its fleet gate.
 * A repository without a fleet file is loaded as before, and nothing is read per round.
 */
import type { Logger } from 'pino';
import type { FleetRound } from '../plan/fleet.js';
import { stageOf } from '../plan/fleet.js';
import { clusterStatusBranch, clusterView } from '../spec/cluster-view.js';
import type { Fleet } from '../spec/fleet.js';
import { loadMember } from '../spec/fleet-load.js';
import type { LoadResult } from '../spec/model.js';
import type { SpecFileSource } from '../spec/source.js';
import { FleetStatusReader } from '../source/fleet-status.js';
import type { GitSource } from '../source/git-source.js';

interface Loaded {
  readonly fleet: Fleet;
  readonly round: Omit<FleetRound, 'reports'>;
}

export class FleetMember {
  private loaded: Loaded | undefined;
  private current: FleetRound | undefined;
  private readonly reader: FleetStatusReader;

  constructor(
    private readonly git: GitSource,
    readonly cluster: string,
    private readonly logger?: Logger,
  ) {
    this.reader = new FleetStatusReader(git, logger);
  }

  /** The fleet of the last commit loaded valid, if the repository serves a fleet. */
  get fleet(): Fleet | undefined {
    return this.loaded?.fleet;
  }

  /** The loader of Sync: the fleet file, then this cluster's view; or the whole tree without a fleet file. */
  readonly load = async (tree: SpecFileSource): Promise<LoadResult> => {
    const { result, fleet } = await loadMember(tree, this.cluster);
    if (fleet === undefined) this.loaded = undefined;
    else if (result.ok) {
      const ownFiles = new Map<string, ReadonlySet<string>>();
      for (const c of fleet.fleet.clusters) ownFiles.set(c.name, await clusterView(tree, c.name).ownFiles());
      this.loaded = {
        fleet: fleet.fleet,
        round: { cluster: this.cluster, fleet: fleet.fleet, approvals: fleet.approvals, ownFiles },
      };
    }
    return result;
  };

  /** Reads the status branches of the earlier stages' clusters; the round's planner gets them. */
  readonly prepare = async (): Promise<void> => {
    const loaded = this.loaded;
    if (loaded === undefined) {
      this.current = undefined;
      return;
    }
    const own = stageOf(loaded.fleet, this.cluster);
    const earlier = loaded.fleet.stages.slice(0, Math.max(own, 0)).flatMap((s) => s.clusters);
    const reports = await this.reader.read(earlier.map((c) => ({ cluster: c, branch: clusterStatusBranch(c) })));
    this.current = { ...loaded.round, reports };
    this.logger?.debug({ members: earlier.length, parsed: this.reader.parsed }, 'fleet status read');
  };

  /** What the planner is told this round (undefined outside a fleet). */
  round(): FleetRound | undefined {
    return this.current;
  }
}
