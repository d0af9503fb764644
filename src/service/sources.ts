/**
 * Where `drydock run` and `drydock plan` get desired state from, and where status goes: a Git
 * remote (src/source: a cache clone, commit trees read directly, Sync applying commits whole,
 * the status branch written back) or a local directory.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { GitSource } from '../source/git-source.js';
import { DEFAULT_STATUS_BRANCH } from '../source/trailers.js';
import { clusterStatusBranch } from '../spec/cluster-view.js';
import { loadFleet } from '../spec/fleet.js';
import { loadMember } from '../spec/fleet-load.js';
import { FleetMember } from './fleet-round.js';
import { resolveCredentials } from '../source/credentials.js';
import { Sync } from '../source/sync.js';
import { StatusWriter } from '../source/status-writer.js';
import { readStatusHistory } from '../source/status-history.js';
import type { StatusVersion } from '../report/status-timings.js';
import { desiredSourceFromSync, statusBranchSink } from './source-adapter.js';
import { webhookSecret } from '../source/webhook.js';
import { loadKeyring, type Keyring } from '../source/signatures.js';
import { OptionError } from './options.js';
import { loadFromSource } from '../spec/load.js';
import { directoryDesiredSource } from './directory-source.js';
import { revisionSource } from './desired.js';
import type { DesiredRevision, DesiredSource, StatusSink } from './service.js';

export interface SourceFlags {
  readonly repo: string;
  readonly branch: string;
  readonly path: string;
  readonly statusBranch?: string;
  readonly cacheDir?: string;
  readonly webhookSecret?: string;
  /** --webhook-secret-file: the webhook secret read from a file (a mounted Secret); wins over the value. */
  readonly webhookSecretFile?: string;
  readonly gitUsername?: string;
  readonly gitPassword?: string;
  readonly gitToken?: string;
  /** --git-token-file / --git-password-file: secrets read from files; they win over values. */
  readonly gitTokenFile?: string;
  readonly gitPasswordFile?: string;
  readonly cluster?: string;
  /** --verify-commits: only commits signed by a key of --keyring are applied. */
  readonly verifyCommits?: boolean;
  /** --keyring: a file of armored OpenPGP public keys. */
  readonly keyring?: string;
  /** Where DRYDOCK_GIT_* are read from (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

export function isRemote(repo: string): boolean {
  return /^(https?|git|ssh):\/\//.test(repo);
}

/** A GitSource for the flags, credentials resolved from flags, files and DRYDOCK_GIT_* alike. */
export function gitSource(flags: SourceFlags, logger: Logger): GitSource {
  const base = flags.env ?? process.env;
  // Values given as flags (commander also fills them from DRYDOCK_*) count like the variables.
  const env: NodeJS.ProcessEnv = {
    ...base,
    ...(flags.gitUsername ? { DRYDOCK_GIT_USERNAME: flags.gitUsername } : {}),
    ...(flags.gitPassword ? { DRYDOCK_GIT_PASSWORD: flags.gitPassword } : {}),
    ...(flags.gitToken ? { DRYDOCK_GIT_TOKEN: flags.gitToken } : {}),
  };
  const credentials = resolveCredentials({
    env,
    url: flags.repo,
    ...(flags.gitTokenFile ? { tokenFile: flags.gitTokenFile } : {}),
    ...(flags.gitPasswordFile ? { passwordFile: flags.gitPasswordFile } : {}),
  });
  return new GitSource({
    repo: flags.repo,
    branch: flags.branch,
    path: flags.path,
    ...(credentials ? { credentials } : {}),
    ...(flags.cacheDir ? { cacheRoot: flags.cacheDir } : {}),
    logger,
  });
}

/** One read of a Git remote's tip (for `drydock plan`): no status branch, no webhook. */
export function gitTipSource(flags: SourceFlags, logger: Logger): DesiredSource {
  const git = gitSource(flags, logger);
  return revisionSource(async (): Promise<DesiredRevision> => {
    const fetched = await git.fetch();
    const tree = git.readTree(fetched.commit);
    const load = flags.cluster ? (await loadMember(tree, flags.cluster)).result : await loadFromSource(tree);
    return { commit: fetched.commit, load };
  });
}

/** The keyring of --verify-commits, or undefined when commits are not verified. */
async function keyringOf(flags: SourceFlags): Promise<Keyring | undefined> {
  if (!flags.verifyCommits) {
    if (flags.keyring)
      throw new OptionError(
        '--keyring is given but --verify-commits is not; add --verify-commits to enforce signatures',
        { flag: '--keyring', value: flags.keyring },
      );
    return undefined;
  }
  if (!flags.keyring)
    throw new OptionError(
      '--verify-commits needs --keyring FILE, a file of armored OpenPGP public keys (gpg --armor --export <id> > keys.asc)',
      { flag: '--keyring' },
    );
  return loadKeyring(flags.keyring);
}

export interface ServiceSources {
  readonly source: DesiredSource;
  /** The loader of a Git repository, fleet or not (a plain repository loads as before). */
  readonly fleet?: FleetMember;
  /** The status-branch writer; undefined for a directory (status is then logged and served only). */
  readonly status?: StatusSink;
  /** The status branch's recent history, for the forecast's observed node times; undefined for a directory. */
  readonly statusHistory?: () => Promise<ReadonlyMap<string, readonly StatusVersion[]>>;
}

/**
 * The service's source and status sink. For a Git remote they share one cache clone; the
 * commit in force after a restart is read back from the status branch (Drydock-Source), so
 * an invalid tip at startup does not leave the cluster without specs.
 */
export async function createServiceSources(flags: SourceFlags, logger: Logger): Promise<ServiceSources> {
  const keys = await keyringOf(flags);
  if (!isRemote(flags.repo)) {
    if (keys)
      throw new OptionError(
        '--verify-commits needs a Git repository URL for --repo; a directory has no commits to verify',
        { flag: '--verify-commits' },
      );
    return { source: directoryDesiredSource(path.resolve(flags.repo, flags.path), undefined, true) };
  }
  const git = gitSource(flags, logger);
  const fleet = new FleetMember(git, flags.cluster ?? '', logger);
  const branchOf = fleetStatusBranch(git, flags);
  const heartbeatMs = (): number | undefined => heartbeatOf(fleet);
  const writers = new Map<string, StatusWriter>();
  let written = flags.statusBranch || DEFAULT_STATUS_BRANCH;
  // The writer is named by cluster, known from drydock.yaml only after the first load.
  const writerFor = async (cluster: string): Promise<StatusWriter> => {
    let w = writers.get(cluster);
    if (!w) {
      const branch = await branchOf();
      written = branch || DEFAULT_STATUS_BRANCH;
      w = new StatusWriter({ source: git, ...(branch ? { branch } : {}), cluster, logger, heartbeatMs });
      writers.set(cluster, w);
    }
    return w;
  };
  const sync = new Sync({
    source: git,
    logger,
    ...(keys ? { keys } : {}),
    load: fleet.load,
    restore: async () => (await (await writerFor(flags.cluster || 'default')).readApplied())?.sourceCommit,
  });
  const secret = flags.webhookSecretFile
    ? webhookSecret({ file: flags.webhookSecretFile })
    : flags.webhookSecret || webhookSecret({ env: flags.env ?? process.env });
  const source = desiredSourceFromSync({ sync, ...(secret ? { webhookSecret: secret } : {}) });
  const status: StatusSink = {
    // The branch written, for the notifications' link: a fleet's is decided at the first write.
    get branch() {
      return written;
    },
    write: async (snapshot) =>
      statusBranchSink(await writerFor(snapshot.cluster || 'default'), git.root).write(snapshot),
    readSpecs: async (cluster) => (await writerFor(cluster || 'default')).readSpecs(),
  };
  const statusHistory = async (): Promise<ReadonlyMap<string, readonly StatusVersion[]>> =>
    readStatusHistory(git, await git.readBranchTip((await branchOf()) || DEFAULT_STATUS_BRANCH));
  return { source, status, statusHistory, fleet };
}

/** A third of the fleet's staleness: a quiet cluster writes well before the next stage calls it unreachable. */
export function heartbeatOf(fleet: FleetMember | undefined): number | undefined {
  const stale = fleet?.fleet?.staleAfterMs;
  return stale === undefined ? undefined : Math.max(1_000, Math.floor(stale / 3));
}

/**
 * The status branch: --status-branch when it names one; in a fleet repository (a fleet file at
 * the tracked tip) the cluster's by convention; otherwise the default. Decided once, at the first
 * write or restore, before any commit is loaded.
 */
function fleetStatusBranch(git: GitSource, flags: SourceFlags): () => Promise<string | undefined> {
  let decided: Promise<string | undefined> | undefined;
  const decide = async (): Promise<string | undefined> => {
    const given = flags.statusBranch;
    if (!flags.cluster || (given !== undefined && given !== DEFAULT_STATUS_BRANCH)) return given;
    // Not fetch(): the tracked tip stays Sync's to move.
    const tip = await git.fetchBranch(git.branch);
    return (await loadFleet(git.readTree(tip))) !== undefined ? clusterStatusBranch(flags.cluster) : given;
  };
  return () =>
    (decided ??= decide().catch((err: unknown) => {
      decided = undefined;
      throw err;
    }));
}

/** The source `drydock plan` reads: a remote's tip, or a directory (a pull request's checkout). */
export async function createDesiredSource(flags: SourceFlags, logger: Logger): Promise<DesiredSource> {
  if (isRemote(flags.repo)) return gitTipSource(flags, logger);
  return directoryDesiredSource(path.resolve(flags.repo, flags.path), flags.cluster || undefined);
}
