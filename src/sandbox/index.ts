/**
 * `drydock sandbox`: everything a person needs to see drydock work, on one machine with no
 * cloud and no cluster of their own — a real control plane with KWOK nodes, the sim cloud,
 * a local Git server holding the fleet repository, and drydock itself — with live progress.
 * With a scenario it drives a change through to the end and checks it: the smoke test of
 * drydock's main job.
 *
 * Every part is stopped on the way out, whatever the way out is (done, error, Ctrl-C).
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { SimHttpProvider } from '../cloud/sim/http-client.js';
import { createLogger } from '../service/logger.js';
import { Supervisor, stopLeftovers } from './children.js';
import {
  cloneUrl,
  ensureBinaries,
  newSettings,
  PACKAGE_ROOT,
  parseSettings,
  startDrydock,
  startSandboxControlPlane,
  startSandboxGitServer,
  startSimCloud,
  type StartContext,
  writeLauncher,
} from './components.js';
import type { ControlPlane } from './control-plane/index.js';
import { describeSandboxError, SandboxError, stepError } from './errors.js';
import { fleetGroups, nodeImageFile, type FleetGroup } from './fleet-groups.js';
import { DEFAULT_STATUS_BRANCH, fleetRepoPath, readTree, seedFleetRepo, TRACKED_BRANCH } from './fleet-repo.js';
import type { GitServer } from './git-server.js';
import {
  prepareStateDir,
  readSettings,
  stateLayout,
  writeSettings,
  type Scenario,
  type StateLayout,
} from './layout.js';
import { Monitor, Progress, type StepHandle } from './monitor.js';
import { runUpgradeScenario, summaryLines, type ScenarioSummary } from './scenario.js';
import { nodeOpSummaryLines, runNodeOpScenario, watchOperation, type NodeOpSummary } from './scenario-nodeop.js';
import { prSummaryLines, runPrScenario, type PrSummary } from './scenario-pr.js';
import { RepoReader } from './snapshot.js';
import { createScreen, type ScreenOutput } from './terminal.js';
import { applyObjects, demoManifests, demoWorkloadsReady } from './workloads.js';
import { waitFor } from './wait.js';

export { DEFAULT_STATE_DIR, SCENARIOS, type Scenario } from './layout.js';
export { SandboxError, describeSandboxError } from './errors.js';

export interface SandboxOptions {
  readonly stateDir: string;
  readonly reset: boolean;
  readonly scenario?: Scenario;
  /** The scenario's whole rollout, from push to checked. */
  readonly scenarioTimeoutMs: number;
  /** Each start-up wait (not the binaries build). */
  readonly startTimeoutMs: number;
  readonly out: ScreenOutput;
  /** Redraw in place; default: when `out` is a TTY. */
  readonly live?: boolean;
  /** Aborted on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** Where the fleet repository is seeded from; default examples-repo/ of the package. */
  readonly examplesDir?: string;
}

export type SandboxOutcome =
  | { readonly kind: 'stopped' }
  | { readonly kind: 'scenario'; readonly summary: ScenarioSummary | NodeOpSummary | PrSummary }
  | { readonly kind: 'failed'; readonly error: SandboxError };

const STEPS = {
  state: 'state directory',
  binaries: 'Kubernetes binaries',
  controlPlane: 'control plane',
  git: 'fleet repository',
  cloud: 'sim cloud',
  workloads: 'demo workloads',
  drydock: 'drydock',
} as const;

const BINARIES_TIMEOUT_MS = 2 * 60 * 60 * 1000;

function fileLogger(layout: StateLayout): Logger {
  return createLogger('info', createWriteStream(path.join(layout.logs, 'sandbox.log'), { flags: 'a' })).child({
    component: 'sandbox',
  });
}

/** The lines a person needs to use the sandbox by hand; a test runs them as printed. */
export function instructions(o: {
  readonly kubeconfig: string;
  /** kubectl's directory (the Kubernetes binaries). */
  readonly binDir: string;
  /** The `drydock` launcher's directory. */
  readonly drydockDir: string;
  readonly cloneUrl: string;
  readonly cloudUrl: string;
  readonly statusBranch: string;
  readonly logs: string;
  readonly controlPlaneLogs: string;
  readonly nodeImageFile?: string;
}): string[] {
  return [
    '',
    'The sandbox is up. In another terminal:',
    `  export KUBECONFIG=${o.kubeconfig}`,
    `  export PATH=${o.binDir}:${o.drydockDir}:$PATH`,
    '  kubectl get nodes -L sim.drydock.dev/image -L drydock.dev/phase',
    `  git clone ${o.cloneUrl} && cd fleet`,
    '  git switch -c next-image',
    `  # change spec.image in ${o.nodeImageFile ?? 'a NodeImage'}, then see what the pull request would do:`,
    '  git commit -qam "Upgrade worker image" && git push -q -u origin next-image',
    `  drydock plan --repo . --base main --head next-image --cloud-endpoint ${o.cloudUrl}`,
    '  git switch -q main && git merge -q --ff-only next-image && git push -q',
    `  git fetch && git log origin/${o.statusBranch}`,
    `  drydock status --repo . --status-branch ${o.statusBranch}`,
    '  # a rollout waiting for an approval: drydock approve NodeImage/<name>, then commit, push (merge) it',
    `Logs: ${o.logs} (control plane: ${o.controlPlaneLogs})`,
    'Stop: Ctrl-C (state is kept and a re-run resumes; --reset starts over)',
    '',
  ];
}

/** Runs the sandbox until Ctrl-C, or through the scenario. Never throws: failures come back as an outcome. */
export async function runSandbox(options: SandboxOptions): Promise<SandboxOutcome> {
  const startedAt = new Date();
  const layout = stateLayout(options.stateDir);
  const screen = createScreen(options.out, options.live === undefined ? {} : { live: options.live });
  const progress = new Progress(
    Object.values(STEPS),
    options.scenario === undefined ? 'starting' : `scenario ${options.scenario}: starting`,
  );
  const monitor = new Monitor(progress, startedAt, (s) => screen.show(s));
  let current: { title: string; handle: StepHandle } | undefined;
  const begin = (title: string, detail?: string): StepHandle => {
    const handle = progress.start(title, detail);
    current = { title, handle };
    monitor.refresh();
    return handle;
  };
  const finish = (handle: StepHandle, detail?: string): void => {
    handle.done(detail);
    current = undefined;
    monitor.refresh();
  };

  let release: (() => void) | undefined;
  let logger: Logger = pino({ level: 'silent' });
  let supervisor: Supervisor | undefined;
  let controlPlane: ControlPlane | undefined;
  let gitServer: GitServer | undefined;
  monitor.start();
  // Said on the screen, above the live view, so a redraw never leaves a stale view behind it.
  const onAbort = (): void => {
    const reason: unknown = options.signal.reason;
    screen.print([
      `${typeof reason === 'string' ? reason : 'interrupted'}: stopping every process it started (Ctrl-C again to exit at once)…`,
    ]);
  };
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    // 1. The state directory, and whatever a crashed run left running.
    let step = begin(STEPS.state, layout.root);
    mkdirSync(layout.root, { recursive: true });
    release = prepareStateDir(layout, { reset: options.reset });
    logger = fileLogger(layout);
    logger.info(
      { stateDir: layout.root, reset: options.reset, scenario: options.scenario ?? 'none' },
      'sandbox starting',
    );
    const leftovers = await stopLeftovers(layout.pidFile, logger);
    supervisor = new Supervisor(layout.logs, layout.pidFile, logger);
    const ctx: StartContext = { layout, supervisor, logger, signal: options.signal };
    const settings = readSettings(layout, parseSettings) ?? newSettings();
    finish(step, leftovers.length > 0 ? `${layout.root} (stopped leftovers: ${leftovers.join(', ')})` : layout.root);

    // 2. Kubernetes binaries, then the control plane.
    step = begin(STEPS.binaries);
    const binDir = await ensureBinaries(ctx, step, BINARIES_TIMEOUT_MS);
    finish(step, binDir);
    step = begin(STEPS.controlPlane, 'etcd, kube-apiserver, controllers, scheduler, KWOK');
    controlPlane = await startSandboxControlPlane(ctx, binDir);
    const kc = controlPlane.adminKubeConfig();
    monitor.watchCluster(kc);
    finish(step, controlPlane.server);

    // 3. The fleet repository and the Git server serving it.
    step = begin(STEPS.git);
    const examplesDir = options.examplesDir ?? path.join(PACKAGE_ROOT, 'examples-repo');
    const seeded = seedFleetRepo(layout.gitRoot, examplesDir, layout.work);
    gitServer = await startSandboxGitServer(ctx, settings);
    writeSettings(layout, { ...settings, gitPort: gitServer.port });
    const bare = fleetRepoPath(layout.gitRoot);
    monitor.watchRepo(new RepoReader(bare, TRACKED_BRANCH, DEFAULT_STATUS_BRANCH));
    finish(
      step,
      `${gitServer.repoUrl('fleet.git')}${seeded.created ? ` (new, from ${path.relative(process.cwd(), examplesDir) || '.'})` : ' (resumed)'}`,
    );

    // 4. The sim cloud, shaped by the repository's ScalingGroups.
    step = begin(STEPS.cloud);
    const fleetFiles = readTree(bare, TRACKED_BRANCH, '.');
    const groups: FleetGroup[] = fleetGroups(fleetFiles);
    const cloud = await startSimCloud(ctx, kc, controlPlane.kubeconfigPath, groups, step, options.startTimeoutMs);
    finish(step, `${cloud.url}: ${groups.map((g) => `${g.groupId} ×${g.size}`).join(', ')}`);

    // 5. Workloads whose PDBs make drains go one at a time.
    step = begin(STEPS.workloads);
    await applyObjects(kc, demoManifests());
    await waitFor('the demo Deployments to be available', () => demoWorkloadsReady(kc), {
      timeoutMs: options.startTimeoutMs,
      step: STEPS.workloads,
      signal: options.signal,
      failure: () => supervisor?.failure(),
      log: controlPlane.logs['kube-scheduler'] ?? layout.logs,
    });
    finish(step, 'web ×6, api ×3, queue ×2, one disruption each');

    // 6. drydock itself.
    step = begin(STEPS.drydock);
    const drydock = await startDrydock(
      ctx,
      {
        repoUrl: gitServer.repoUrl('fleet.git'),
        user: settings.gitUser,
        kubeconfigPath: controlPlane.kubeconfigPath,
        simCloudUrl: cloud.url,
      },
      options.startTimeoutMs,
    );
    monitor.watchMetrics(`${drydock.url}/metrics`);
    finish(step, drydock.url);
    logger.info({ drydock: drydock.url, cloud: cloud.url, git: gitServer.baseUrl }, 'sandbox running');

    const exampleImage = groups.find((g) => g.role === 'worker') ?? groups[0];
    const exampleFile = exampleImage === undefined ? undefined : nodeImageFile(fleetFiles, exampleImage.nodeImage);
    screen.print(
      instructions({
        ...(exampleFile === undefined ? {} : { nodeImageFile: exampleFile }),
        kubeconfig: controlPlane.kubeconfigPath,
        binDir,
        drydockDir: await writeLauncher(layout),
        cloneUrl: cloneUrl(gitServer, settings.gitUser),
        cloudUrl: cloud.url,
        statusBranch: DEFAULT_STATUS_BRANCH,
        logs: layout.logs,
        controlPlaneLogs: path.join(controlPlane.dataDir, 'logs'),
      }),
    );

    // What every scenario follows and where it pushes.
    const following = {
      bare,
      workDir: layout.work,
      nextSnapshot: () => monitor.next(),
      setHeadline: (text: string) => {
        progress.headline = text;
        monitor.refresh();
      },
      timeoutMs: options.scenarioTimeoutMs,
      signal: options.signal,
      failure: () => supervisor?.failure(),
      log: drydock.child.logFile,
    };
    if (options.scenario === 'nodeop') {
      const summary = await runNodeOpScenario({
        ...following,
        workerGroups: groups.filter((g) => g.role === 'worker').map((g) => g.groupId),
        watch: (ledger) => watchOperation(kc, ledger),
      });
      progress.headline = 'scenario nodeop: complete';
      monitor.refresh();
      screen.print(nodeOpSummaryLines(summary));
      logger.info({ ...summary }, 'scenario complete');
      return { kind: 'scenario', summary };
    }
    if (options.scenario === 'pr') {
      const summary = await runPrScenario({
        ...following,
        groups: groups
          .filter((g) => g.role === 'worker')
          .slice(0, 1)
          .map((g) => ({ groupId: g.groupId, nodeImage: g.nodeImage, size: g.size })),
        cloud: new SimHttpProvider(cloud.url),
        kubeconfig: controlPlane.kubeconfigPath,
        cloudUrl: cloud.url,
        print: (lines) => screen.print(lines),
      });
      progress.headline = 'scenario pr: complete';
      monitor.refresh();
      screen.print(prSummaryLines(summary));
      logger.info({ durationMs: summary.durationMs, approvalFile: summary.approvalFile }, 'scenario complete');
      return { kind: 'scenario', summary };
    }
    if (options.scenario === 'upgrade') {
      if (!seeded.created) {
        // A fleet repository someone may have worked in: say what will be pushed into it, first.
        screen.print([
          `scenario upgrade: will push a new image for ${groups.map((g) => `NodeImage/${g.nodeImage}`).join(', ')} to ${TRACKED_BRANCH} of ${bare} (resumed, not new)`,
        ]);
      }
      const summary = await runUpgradeScenario({
        ...following,
        groups: groups.map((g) => ({ groupId: g.groupId, nodeImage: g.nodeImage, size: g.size })),
        cloud: new SimHttpProvider(cloud.url),
      });
      progress.headline = 'scenario upgrade: complete';
      monitor.refresh();
      screen.print(summaryLines(summary));
      logger.info(
        {
          commit: summary.commit,
          durationMs: summary.durationMs,
          nodesReplaced: summary.nodesReplaced,
          waves: summary.waves,
        },
        'scenario complete',
      );
      return { kind: 'scenario', summary };
    }

    progress.headline = 'running (Ctrl-C stops everything)';
    monitor.refresh();
    await new Promise<void>((resolve) => {
      if (options.signal.aborted || supervisor?.failure() !== undefined) resolve();
      options.signal.addEventListener('abort', () => resolve(), { once: true });
      supervisor?.onFailure(() => resolve());
    });
    const failed = supervisor.failure();
    return failed === undefined ? { kind: 'stopped' } : { kind: 'failed', error: failed };
  } catch (err) {
    const error = current === undefined ? stepError('the sandbox', err) : stepError(current.title, err);
    current?.handle.fail(error.message.split('\n')[0] ?? error.message);
    monitor.refresh();
    logger.error({ code: error.code, step: error.data.step, log: error.data.log }, 'sandbox failed');
    return { kind: 'failed', error };
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    monitor.stop();
    progress.headline = 'stopping';
    monitor.refresh();
    screen.close();
    await supervisor
      ?.stopAll()
      .catch((err: unknown) => logger.error({ err: String(err) }, 'stopping processes failed'));
    await gitServer?.stop().catch(() => undefined);
    await controlPlane
      ?.stop()
      .catch((err: unknown) => logger.error({ err: String(err) }, 'stopping the control plane failed'));
    logger.info({}, 'sandbox stopped');
    release?.();
  }
}

/** Exit code and final words for an outcome. */
export function outcomeReport(
  outcome: SandboxOutcome,
  scenario: boolean,
): { readonly code: 0 | 1 | 2; readonly lines: readonly string[] } {
  switch (outcome.kind) {
    case 'stopped':
      return { code: 0, lines: ['sandbox stopped; run it again to resume, or with --reset to start over'] };
    case 'scenario':
      return { code: 0, lines: [] };
    case 'failed': {
      const e = outcome.error;
      const head = scenario ? 'scenario failed' : 'sandbox failed';
      const stage = e.data.step === undefined ? '' : ` at step "${e.data.step}"`;
      // Findings about the rollout (checks, timeouts of the rollout) are 1; the sandbox itself breaking is 2.
      const code = e.code === 'CheckFailed' || (e.code === 'Timeout' && e.data.step === 'the rollout') ? 1 : 2;
      return { code, lines: [`${head}${stage}: ${describeSandboxError(e)}`] };
    }
  }
}
