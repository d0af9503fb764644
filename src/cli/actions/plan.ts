/** What `drydock plan` does once its flags are parsed (loaded only when it runs). */
import path from 'node:path';
import type { Logger } from 'pino';
import type { FleetRound } from '../../plan/fleet.js';
import { plan } from '../../plan/index.js';
import { loadKubeConfig, KubeConfigError } from '../../observe/kube.js';
import { listCluster, observe } from '../../observe/index.js';
import { createLogger } from '../../service/logger.js';
import { OptionError, providersFrom } from '../../service/options.js';
import { FleetMember } from '../../service/fleet-round.js';
import { createDesiredSource, gitSource, isRemote } from '../../service/sources.js';
import { loadFleet } from '../../spec/fleet.js';
import { directorySource, type SpecFileSource } from '../../spec/source.js';
import { isBlocked, renderPlan } from '../../report/plan-render.js';
import { specWarnings } from '../../report/spec-warnings.js';
import { isGitSourceError } from '../../source/index.js';
import type { Plan } from '../../plan/types.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import type { PlanFlags } from '../flags.js';
import { describeClusterError } from './cluster-error.js';
import { observedNodes } from './observed-nodes.js';

/**
 * In a fleet repository, the start gate `drydock run --cluster` applies this round: the fleet
 * file, and the status branches of the earlier stages' clusters as they are now (in a local
 * clone, its branches or origin/ ones). Undefined outside a fleet. A branch that cannot be read
 * counts as unreachable, as it does for drydock run.
 */
async function fleetRound(flags: PlanFlags, commit: string, logger: Logger): Promise<FleetRound | undefined> {
  const remote = isRemote(flags.repo);
  const dir = directorySource(path.resolve(flags.repo, flags.path));
  if (!remote && (await loadFleet(dir)) === undefined) return undefined;
  let git;
  try {
    git = gitSource(flags, logger);
  } catch (err) {
    if (!isGitSourceError(err, 'invalid-repo')) throw err;
    throw new OptionError(
      `${flags.repo} holds a fleet file but is no Git repository: planning --cluster ${flags.cluster} reads the status branches of the earlier stages; plan in a clone of the fleet repository`,
      { flag: '--repo', value: flags.repo },
    );
  }
  let tree: SpecFileSource = dir;
  if (remote) {
    await git.fetch();
    tree = git.readTree(commit);
  }
  const member = new FleetMember(git, flags.cluster, logger);
  await member.load(tree);
  await member.prepare();
  return member.round();
}

const EMPTY_PLAN: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };

export async function runPlan(flags: PlanFlags, write: (text: string) => void): Promise<ExitCode> {
  const logger = createLogger('silent');
  const at = new Date();
  try {
    if (flags.base !== undefined || flags.head !== undefined) {
      if (flags.base === undefined || flags.head === undefined)
        throw new OptionError(
          '--base and --head go together: pass both refs of the pull request (e.g. --base main --head my-branch)',
          { flag: flags.base === undefined ? '--base' : '--head' },
        );
      const { runPlanPr } = await import('./plan-pr.js');
      return await runPlanPr({ ...flags, base: flags.base, head: flags.head }, write, logger);
    }
    if (flags.format === 'github')
      throw new OptionError('--format github annotates a pull request: pass --base and --head too', {
        flag: '--format',
        value: 'github',
      });
    const source = await createDesiredSource(flags, logger);
    const rev = await source.sync();
    await source.close?.();
    if (!rev.load.ok) {
      write(
        renderPlan(EMPTY_PLAN, flags.format, {
          commit: rev.commit,
          ...(flags.cluster ? { cluster: flags.cluster } : {}),
          at: at.toISOString(),
          errors: rev.load.errors,
          warnings: specWarnings(rev.load),
        }),
      );
      return EXIT_FINDINGS;
    }
    const desired = rev.load.desired;
    const kc = loadKubeConfig(flags.kubeconfig || undefined);
    const providers = providersFrom(flags.provider, flags.cloudEndpoint || undefined);
    const observed = await observe(desired, await listCluster(kc, desired), (p) => providers[p]);
    const observedNodeTimes = await observedNodes(flags, desired.config.statusBranch, logger);
    const fleet = flags.cluster ? await fleetRound(flags, rev.commit, logger) : undefined;
    const result = plan(desired, observed, at, {
      jobNamespace: flags.namespace,
      observedNodes: observedNodeTimes,
      ...(fleet !== undefined ? { fleet } : {}),
    });
    write(
      renderPlan(result, flags.format, {
        commit: rev.commit,
        cluster: flags.cluster || desired.config.cluster,
        at: at.toISOString(),
        warnings: specWarnings(rev.load),
      }),
    );
    return isBlocked(result) ? EXIT_FINDINGS : EXIT_OK;
  } catch (err) {
    const msg =
      err instanceof OptionError || err instanceof KubeConfigError || isGitSourceError(err)
        ? err.message
        : describeClusterError(err);
    process.stderr.write(`drydock plan: ${msg}\n`);
    return EXIT_ERROR;
  }
}
