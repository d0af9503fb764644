/**
 * `drydock plan --base REF --head REF`: what a pull request will do. Both revisions are read
 * from the repository (a URL, or a local clone where a ref may also be HEAD, a tag or a
 * commit); the head is planned against the live cluster and cloud when credentials are there,
 * and compared with the base. Without them (a pull request from a fork) the spec diff and
 * validation are still shown, and the report says the live part was skipped.
 */
import fs from 'node:fs';
import git from 'isomorphic-git';
import type { Logger } from 'pino';
import { loadKubeConfig, KubeConfigError } from '../../observe/kube.js';
import { listCluster, observe } from '../../observe/index.js';
import { OptionError, providersFrom } from '../../service/options.js';
import { gitSource } from '../../service/sources.js';
import { GitSource, GitSourceError, isGitSourceError } from '../../source/index.js';
import { shortCommit } from '../../commit.js';
import { loadFromSource } from '../../spec/load.js';
import { clusterView } from '../../spec/cluster-view.js';
import { loadFleet } from '../../spec/fleet.js';
import { loadMember, type MemberLoad } from '../../spec/fleet-load.js';
import { stagePath } from '../../plan/fleet.js';
import { renderFleetPaths, sharedChanges, type FleetChangePath } from '../../report/fleet-path.js';
import type { DesiredState, LoadResult } from '../../spec/model.js';
import { buildPrReport, planHead, type LivePlan } from '../../report/pr-report.js';
import { prHasFindings, renderPr } from '../../report/pr-render.js';
import { EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import type { PlanFlags } from '../flags.js';
import { describeClusterError } from './cluster-error.js';
import { observedNodes } from './observed-nodes.js';

export interface PrFlags extends PlanFlags {
  readonly base: string;
  readonly head: string;
}

/** A branch (or origin/<branch>) of the repository; in a local clone also HEAD, a tag, a full ref or a commit. */
async function resolveName(source: GitSource, ref: string): Promise<string> {
  try {
    return await source.readBranchTip(ref);
  } catch (err) {
    if (source.isRemote || !isGitSourceError(err, 'branch-missing')) throw err;
    for (const candidate of [ref, `refs/tags/${ref}`]) {
      const oid = await git.resolveRef({ fs, gitdir: source.gitdir, ref: candidate }).catch(() => undefined);
      if (oid !== undefined) return oid;
    }
    if (/^[0-9a-f]{4,40}$/i.test(ref)) {
      const oid = await git.expandOid({ fs, gitdir: source.gitdir, oid: ref.toLowerCase() }).catch(() => undefined);
      if (oid !== undefined) return oid;
    }
    throw new GitSourceError('branch-missing', `${err.message}; nor is ${ref} a tag or a commit of it`, err.data);
  }
}

/** The ancestry steps drydock reads after a name: ~N (N first parents back) and ^N (the Nth parent; ^ is ^1). */
const ANCESTRY = /^(?:[~^]\d*)*$/;

/**
 * A revision as git spells the common ones: a name (above) followed by any ~N and ^N steps, so
 * `HEAD~1`, `main^` and `v1.2^2~3` work. Other revision syntax (`@{1}`, `:/text`, `A..B`) is
 * refused with the command that turns it into a commit id, rather than read as a branch name.
 */
async function resolve(source: GitSource, rev: string): Promise<string> {
  const at = rev.search(/[~^:]|@\{|\.\./);
  const name = at < 0 ? rev : rev.slice(0, at);
  const steps = at < 0 ? '' : rev.slice(at);
  if (name === '' || !ANCESTRY.test(steps)) {
    throw new GitSourceError(
      'branch-missing',
      `${rev}: drydock reads a branch, tag, commit id or HEAD, followed by ~N or ^N steps; for other revision syntax pass the commit it names, e.g. --base "$(git rev-parse '${rev}')"`,
      { repo: source.display, branch: rev },
    );
  }
  let oid = await resolveName(source, name);
  for (const [, op, digits] of steps.matchAll(/([~^])(\d*)/g)) {
    const n = digits === '' || digits === undefined ? 1 : Number(digits);
    if (op === '~') for (let i = 0; i < n; i++) oid = await parentOf(source, oid, 1, rev);
    else if (n > 0) oid = await parentOf(source, oid, n, rev);
  }
  return oid;
}

/** The `n`th parent (1-based) of `oid`; a commit without it is a revision that does not exist. */
async function parentOf(source: GitSource, oid: string, n: number, rev: string): Promise<string> {
  const { commit } = await git.readCommit({ fs, gitdir: source.gitdir, oid });
  const parent = commit.parent[n - 1];
  if (parent !== undefined) return parent;
  const has = commit.parent.length === 0 ? 'no parent' : `${commit.parent.length} parent(s)`;
  throw new GitSourceError(
    'branch-missing',
    `${rev} does not exist in ${source.display}: commit ${shortCommit(oid)} has ${has}` +
      (source.isRemote
        ? ' here (a remote branch is fetched without its full history: pass a commit id, or plan in a clone)'
        : ''),
    { repo: source.display, branch: rev },
  );
}

interface Loaded {
  readonly ref: string;
  readonly commit: string;
  readonly load: LoadResult;
  readonly fleet?: MemberLoad['fleet'];
}

/** A revision's specs: the whole tree, or in a fleet repository one cluster's view. */
async function loadAt(source: GitSource, ref: string, commit: string, cluster: string | undefined): Promise<Loaded> {
  const tree = source.readTree(commit);
  if (cluster === undefined) return { ref, commit, load: await loadFromSource(tree) };
  const member = await loadMember(tree, cluster);
  return { ref, commit, load: member.result, ...(member.fleet ? { fleet: member.fleet } : {}) };
}

/**
 * The cluster a fleet repository's pull request is planned for: --cluster, or the first of the
 * first stage (where a shared change starts); undefined outside a fleet.
 */
async function fleetCluster(source: GitSource, commit: string, flag: string): Promise<string | undefined> {
  const fleet = await loadFleet(source.readTree(commit));
  if (fleet === undefined) return flag || undefined;
  return flag || (fleet.ok ? fleet.fleet.stages[0]?.clusters[0] : '') || '';
}

/** For each shared spec the head changes, the stages it will move through. */
async function fleetPaths(source: GitSource, base: Loaded, head: Loaded, from: number): Promise<FleetChangePath[]> {
  if (!head.load.ok || head.fleet === undefined) return [];
  const fleet = head.fleet.fleet;
  const tree = source.readTree(head.commit);
  const own = new Map<string, ReadonlySet<string>>();
  for (const c of fleet.clusters) own.set(c.name, await clusterView(tree, c.name).ownFiles());
  return sharedChanges(base.load.ok ? base.load.desired : undefined, head.load.desired).map((spec) => {
    const skip = new Set([...own].filter(([, files]) => files.has(spec.source.file)).map(([c]) => c));
    const ref = { kind: spec.kind, name: spec.name };
    return { spec: ref, revision: spec.revision, stages: stagePath(fleet, ref, skip, from) };
  });
}

/** The head planned against the cluster and cloud, or why that could not be done. */
async function livePlan(
  flags: PlanFlags,
  desired: DesiredState,
  at: Date,
  source: GitSource,
  logger: Logger,
): Promise<LivePlan | { skipped: string }> {
  let kc;
  let providers;
  try {
    kc = loadKubeConfig(flags.kubeconfig || undefined);
    providers = providersFrom(flags.provider, flags.cloudEndpoint || undefined);
  } catch (err) {
    if (err instanceof KubeConfigError || err instanceof OptionError)
      return { skipped: `no cluster or cloud access (${err.message})` };
    throw err;
  }
  let observed;
  try {
    observed = await observe(desired, await listCluster(kc, desired), (p) => providers[p]);
  } catch (err) {
    return { skipped: `the cluster or cloud could not be read: ${describeClusterError(err)}` };
  }
  // Read only with cluster access: without it there is no forecast to give them to.
  const timings = await observedNodes(source, desired.config.statusBranch, logger);
  return { plan: planHead(desired, observed, at, { observedNodes: timings }), observed };
}

export async function runPlanPr(flags: PrFlags, write: (text: string) => void, logger: Logger): Promise<ExitCode> {
  const at = new Date();
  // Any ref is read from the one clone; the source's own branch plays no part.
  const source = gitSource(flags, logger);
  const baseCommit = await resolve(source, flags.base);
  const headCommit = await resolve(source, flags.head);
  const cluster = await fleetCluster(source, headCommit, flags.cluster);
  const base = await loadAt(source, flags.base, baseCommit, cluster);
  const head = await loadAt(source, flags.head, headCommit, cluster);
  const live = head.load.ok
    ? await livePlan(flags, head.load.desired, at, source, logger)
    : { skipped: 'the head is invalid, so it was not planned' };
  const report = buildPrReport({ base, head, at, ...(cluster ? { cluster } : {}), live });
  write(renderPr(report, flags.format, flags.path));
  // JSON stays one document; the stages are shown where a person reads the plan.
  if (flags.format !== 'json') {
    const paths = await fleetPaths(source, base, head, at.getTime());
    write(renderFleetPaths(paths, at.getTime(), flags.format === 'markdown' ? 'markdown' : 'text'));
  }
  return prHasFindings(report) ? EXIT_FINDINGS : EXIT_OK;
}
