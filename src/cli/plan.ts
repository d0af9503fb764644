/**
 * `drydock plan`: what drydock would do now — the changes, the waves, the ETA, the blockers —
 * for a repository (directory or URL), a cluster and its cloud. Strictly read-only: it lists
 * the cluster once (get/list rights suffice) and reads the cloud; it never writes, and needs no
 * leader election. Exit 1 when the plan is blocked or the specs are invalid, 0 otherwise.
 */
import { Option, type Command } from 'commander';
import { plan } from '../plan/index.js';
import { loadKubeConfig, KubeConfigError } from '../observe/kube.js';
import { listClusterSnapshot } from '../observe/cluster-cache.js';
import { observe } from '../observe/index.js';
import { createLogger } from '../service/logger.js';
import { OptionError, providersFrom } from '../service/options.js';
import { createDesiredSource } from '../service/sources.js';
import { isBlocked, PLAN_FORMATS, renderPlan, type PlanFormat } from '../report/plan-render.js';
import type { Plan } from '../plan/types.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from './exit.js';

interface PlanFlags {
  repo: string;
  branch: string;
  path: string;
  kubeconfig?: string;
  provider: string;
  cloudEndpoint?: string;
  format: PlanFormat;
  cluster: string;
  gitUsername?: string;
  gitPassword?: string;
  gitToken?: string;
}

const EMPTY_PLAN: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('plan')
    .description('show what drydock would change now: nodes, waves, ETA and blockers (read-only)')
    .addOption(new Option('--repo <url|dir>', 'Git repository URL or local directory holding the specs').env('DRYDOCK_REPO').default('.'))
    .addOption(new Option('--branch <name>', 'branch (for a URL)').env('DRYDOCK_BRANCH').default('main'))
    .addOption(new Option('--path <dir>', 'directory inside the repository where drydock.yaml lives').env('DRYDOCK_PATH').default('.'))
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig of the cluster (read access is enough)').env('DRYDOCK_KUBECONFIG'))
    .addOption(new Option('--provider <name>', 'cloud provider of the scaling groups').choices(['sim', 'aws', 'gcp', 'azure']).env('DRYDOCK_PROVIDER').default('sim'))
    .addOption(new Option('--cloud-endpoint <url>', 'URL of the simulated cloud (provider sim)').env('DRYDOCK_CLOUD_ENDPOINT'))
    .addOption(new Option('--format <format>', 'output format; markdown is ready to post on a pull request').choices(PLAN_FORMATS).default('text'))
    .addOption(new Option('--cluster <name>', 'cluster name shown (default: drydock.yaml\'s)').env('DRYDOCK_CLUSTER').default(''))
    .addOption(new Option('--git-username <name>', 'Git basic-auth user').env('DRYDOCK_GIT_USERNAME'))
    .addOption(new Option('--git-password <password>', 'Git basic-auth password').env('DRYDOCK_GIT_PASSWORD').hideHelp())
    .addOption(new Option('--git-token <token>', 'Git token').env('DRYDOCK_GIT_TOKEN').hideHelp())
    .addHelpText('after', '\nExit status: 0 the plan can proceed, 1 it is blocked (approval, PDB, halted) or the specs are invalid, 2 error.')
    .action(async (flags: PlanFlags) => {
      done(await runPlan(flags, (s) => process.stdout.write(s)));
    });
}

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
    const result = plan(desired, observed, at);
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
