/** What `drydock plan` does once its flags are parsed (loaded only when it runs). */
import { plan } from '../../plan/index.js';
import { loadKubeConfig, KubeConfigError } from '../../observe/kube.js';
import { listClusterSnapshot } from '../../observe/cluster-cache.js';
import { observe } from '../../observe/index.js';
import { createLogger } from '../../service/logger.js';
import { OptionError, providersFrom } from '../../service/options.js';
import { createDesiredSource } from '../../service/sources.js';
import { isBlocked, renderPlan } from '../../report/plan-render.js';
import type { Plan } from '../../plan/types.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import type { PlanFlags } from '../plan.js';

const EMPTY_PLAN: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };

export async function runPlan(flags: PlanFlags, write: (text: string) => void): Promise<ExitCode> {
  const logger = createLogger('silent');
  const at = new Date();
  try {
    const source = await createDesiredSource(flags, logger);
    const rev = await source.sync();
    await source.close?.();
    if (!rev.load.ok) {
      write(renderPlan(EMPTY_PLAN, flags.format, { commit: rev.commit, ...(flags.cluster ? { cluster: flags.cluster } : {}), at: at.toISOString(), errors: rev.load.errors }));
      return EXIT_FINDINGS;
    }
    const desired = rev.load.desired;
    const kc = loadKubeConfig(flags.kubeconfig || undefined);
    const providers = providersFrom(flags.provider, flags.cloudEndpoint || undefined);
    const snapshot = await listClusterSnapshot(kc);
    const observed = await observe(desired, { snapshot: () => snapshot }, (p) => providers[p]);
    const result = plan(desired, observed, at, { jobNamespace: flags.namespace });
    write(renderPlan(result, flags.format, { commit: rev.commit, cluster: flags.cluster || desired.config.cluster, at: at.toISOString() }));
    return isBlocked(result) ? EXIT_FINDINGS : EXIT_OK;
  } catch (err) {
    const msg = err instanceof OptionError || err instanceof KubeConfigError ? err.message : describe(err);
    process.stderr.write(`drydock plan: ${msg}\n`);
    return EXIT_ERROR;
  }
}

function describe(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'number') {
    // client-node ApiException: the status code says it all; its message embeds headers.
    const code = (err as { code: number }).code;
    return code === 403
      ? 'the cluster refused a read (HTTP 403): the kubeconfig\'s user needs get/list on nodes, pods, poddisruptionbudgets, deployments and jobs'
      : `the cluster answered HTTP ${code}`;
  }
  const sys = err && typeof err === 'object' && 'code' in err ? (err as { code: unknown }).code : undefined;
  const first = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  if (typeof sys === 'string' && /^E[A-Z]+$/.test(sys)) return `cannot reach the cluster (${sys}): ${first}; check --kubeconfig and that the API server is up`;
  return first;
}
