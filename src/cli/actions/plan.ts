/** What `drydock plan` does once its flags are parsed (loaded only when it runs). */
import { plan } from '../../plan/index.js';
import { loadKubeConfig, KubeConfigError } from '../../observe/kube.js';
import { listCluster, observe } from '../../observe/index.js';
import { createLogger } from '../../service/logger.js';
import { OptionError, providersFrom } from '../../service/options.js';
import { createDesiredSource } from '../../service/sources.js';
import { isBlocked, renderPlan } from '../../report/plan-render.js';
import { specWarnings } from '../../report/spec-warnings.js';
import { isGitSourceError } from '../../source/index.js';
import type { Plan } from '../../plan/types.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import type { PlanFlags } from '../flags.js';
import { describeClusterError } from './cluster-error.js';
import { observedNodes } from './observed-nodes.js';

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
    const result = plan(desired, observed, at, { jobNamespace: flags.namespace, observedNodes: observedNodeTimes });
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
