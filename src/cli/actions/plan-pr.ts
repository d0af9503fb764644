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
import { listClusterSnapshot } from '../../observe/cluster-cache.js';
import { observe } from '../../observe/index.js';
import { OptionError, providersFrom } from '../../service/options.js';
import { gitSource } from '../../service/sources.js';
import { GitSource, isGitSourceError } from '../../source/index.js';
import { loadFromSource } from '../../spec/load.js';
import type { DesiredState, LoadResult } from '../../spec/model.js';
import { buildPrReport, planHead, type LivePlan } from '../../report/pr-report.js';
import { prHasFindings, renderPr } from '../../report/pr-render.js';
import { EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import type { PlanFlags } from '../flags.js';
import { describeClusterError } from './cluster-error.js';

export interface PrFlags extends PlanFlags {
  readonly base: string;
  readonly head: string;
}

/** A branch (or origin/<branch>) of the repository; in a local clone also HEAD, a tag, a full ref or a commit. */
async function resolve(source: GitSource, ref: string): Promise<string> {
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
    throw err;
  }
}

async function loadAt(source: GitSource, ref: string): Promise<{ ref: string; commit: string; load: LoadResult }> {
  const commit = await resolve(source, ref);
  return { ref, commit, load: await loadFromSource(source.readTree(commit)) };
}

/** The head planned against the cluster and cloud, or why that could not be done. */
async function livePlan(flags: PlanFlags, desired: DesiredState, at: Date): Promise<LivePlan | { skipped: string }> {
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
  try {
    const snapshot = await listClusterSnapshot(kc);
    const observed = await observe(desired, { snapshot: () => snapshot }, (p) => providers[p]);
    return { plan: planHead(desired, observed, at), observed };
  } catch (err) {
    return { skipped: `the cluster or cloud could not be read: ${describeClusterError(err)}` };
  }
}

export async function runPlanPr(flags: PrFlags, write: (text: string) => void, logger: Logger): Promise<ExitCode> {
  const at = new Date();
  // Any ref is read from the one clone; the source's own branch plays no part.
  const source = gitSource(flags, logger);
  const base = await loadAt(source, flags.base);
  const head = await loadAt(source, flags.head);
  const live = head.load.ok
    ? await livePlan(flags, head.load.desired, at)
    : { skipped: 'the head is invalid, so it was not planned' };
  const report = buildPrReport({ base, head, at, ...(flags.cluster ? { cluster: flags.cluster } : {}), live });
  write(renderPr(report, flags.format, flags.path));
  return prHasFindings(report) ? EXIT_FINDINGS : EXIT_OK;
}
