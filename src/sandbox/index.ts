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
import { bottlerocketGroup, fleetGroups, nodeImageFile, type FleetGroup } from './fleet-groups.js';
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
import type { ScenarioSummary } from './scenario.js';
import type { NodeOpSummary } from './scenario-nodeop.js';
import type { PrSummary } from './scenario-pr.js';
import type { BottlerocketSummary } from './scenario-bottlerocket.js';
import { fleetSummaryLines, runFleetScenario, type FleetSummary } from './scenario-fleet.js';
import { runScenario, type Following, type ScenarioRun } from './scenario-run.js';
import {
  FLEET_SHAPE,
  FLEET_STEPS,
  fleetHistory,
  fleetStatusBranch,
  sampleCluster,
  startFleetWorld,
  type FleetMember,
} from './fleet-world.js';
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
  | {
      readonly kind: 'scenario';
      readonly summary: ScenarioSummary | NodeOpSummary | PrSummary | BottlerocketSummary | FleetSummary;
    }
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
  /** The image that NodeImage has now: the how-to edits it to the next version. */
  readonly image?: string;
}): string[] {
  const next = o.image !== undefined ? nextVersion(o.image) : undefined;
  const edit =
    o.nodeImageFile !== undefined && o.image !== undefined && next !== undefined
      ? [
          `  # change spec.image in ${o.nodeImageFile} (here to the next version), then see what the pull request would do:`,
          `  sed -i 's|${o.image}|${next}|' ${o.nodeImageFile}`,
        ]
      : [`  # change spec.image in ${o.nodeImageFile ?? 'a NodeImage'}, then see what the pull request would do:`];
  return [
    '',
    'The sandbox is up. In another terminal:',
    `  export KUBECONFIG=${o.kubeconfig}`,
    `  export PATH=${o.binDir}:${o.drydockDir}:$PATH`,
    '  kubectl get nodes -o wide -L drydock.dev/phase',
    `  git clone ${o.cloneUrl} && cd fleet`,
    '  git switch -c next-image',
    ...edit,
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

/** The image with its last number one up (node-os:v1.0.0 → node-os:v1.0.1), or undefined when it has none. */
export function nextVersion(image: string): string | undefined {
  const colon = image.lastIndexOf(':');
  if (colon < 0 || colon < image.lastIndexOf('/')) return undefined;
  const m = /^(.*?)(\d+)(\D*)$/.exec(image.slice(colon + 1));
  if (m === null) return undefined;
  return `${image.slice(0, colon + 1)}${m[1] ?? ''}${Number(m[2]) + 1}${m[3] ?? ''}`;
}

/** The parts a run has started so far, and its steps on the screen: what the way out stops and names. */
class Run {
  current: { title: string; handle: StepHandle } | undefined;
  logger: Logger = pino({ level: 'silent' });
  release: (() => void) | undefined;
  supervisor: Supervisor | undefined;
  /** One, or one per cluster of the fleet scenario. */
  controlPlanes: ControlPlane[] = [];
  gitServer: GitServer | undefined;

  constructor(
    readonly options: SandboxOptions,
    readonly layout: StateLayout,
    readonly screen: ReturnType<typeof createScreen>,
    readonly progress: Progress,
    readonly monitor: Monitor,
  ) {}

  begin(title: string, detail?: string): StepHandle {
    const handle = this.progress.start(title, detail);
    this.current = { title, handle };
    this.monitor.refresh();
    return handle;
  }

  finish(handle: StepHandle, detail?: string): void {
    handle.done(detail);
    this.current = undefined;
    this.monitor.refresh();
  }

  headline(text: string): void {
    this.progress.headline = text;
    this.monitor.refresh();
  }

  /** Steps 1–2: the state directory (stopping what a crashed run left running), binaries, control plane. */
  async startCluster() {
    const { ctx, settings, binDir } = await this.prepare();
    const step = this.begin(STEPS.controlPlane, 'etcd, kube-apiserver, controllers, scheduler, KWOK');
    const controlPlane = await startSandboxControlPlane(ctx, binDir);
    this.controlPlanes.push(controlPlane);
    const kc = controlPlane.adminKubeConfig();
    this.monitor.watchCluster(kc);
    this.finish(step, controlPlane.server);
    return { ctx, settings, binDir, controlPlane, kc };
  }

  /** The state directory (stopping what a crashed run left running) and the Kubernetes binaries. */
  async prepare() {
    const { layout, options } = this;
    let step = this.begin(STEPS.state, layout.root);
    mkdirSync(layout.root, { recursive: true });
    this.release = prepareStateDir(layout, { reset: options.reset });
    this.logger = fileLogger(layout);
    this.logger.info(
      { stateDir: layout.root, reset: options.reset, scenario: options.scenario ?? 'none' },
      'sandbox starting',
    );
    const leftovers = await stopLeftovers(layout.pidFile, this.logger);
    this.supervisor = new Supervisor(layout.logs, layout.pidFile, this.logger);
    const ctx: StartContext = { layout, supervisor: this.supervisor, logger: this.logger, signal: options.signal };
    const settings = readSettings(layout, parseSettings) ?? newSettings();
    this.finish(
      step,
      leftovers.length > 0 ? `${layout.root} (stopped leftovers: ${leftovers.join(', ')})` : layout.root,
    );

    step = this.begin(STEPS.binaries);
    const binDir = await ensureBinaries(ctx, step, BINARIES_TIMEOUT_MS);
    this.finish(step, binDir);
    return { ctx, settings, binDir };
  }

  /**
   * The fleet scenario: two clusters, each with its own control plane, sim cloud and drydock, on
   * one fleet repository; the live view follows the second cluster, the one that waits.
   */
  async runFleet(): Promise<ScenarioRun> {
    const { ctx, settings, binDir } = await this.prepare();
    const world = await startFleetWorld(
      {
        begin: (title, detail) => this.begin(title, detail),
        finish: (handle, detail) => this.finish(handle, detail),
        keep: (part) => {
          if ('adminKubeConfig' in part) this.controlPlanes.push(part);
          else this.gitServer = part;
        },
      },
      ctx,
      settings,
      binDir,
      this.options.startTimeoutMs,
    );
    const members = new Map(world.members.map((m) => [m.name, m]));
    const second = members.get(FLEET_SHAPE.second) as FleetMember;
    this.monitor.watchCluster(second.kc);
    this.monitor.watchRepo(new RepoReader(world.bare, TRACKED_BRANCH, fleetStatusBranch(second.name)));
    this.monitor.watchMetrics(`${second.drydock.url}/metrics`);
    this.logger.info({ clusters: world.members.map((m) => m.name), git: this.gitServer?.baseUrl }, 'fleet running');
    const summary = await runFleetScenario({
      bare: world.bare,
      workDir: this.layout.work,
      shape: FLEET_SHAPE,
      sample: (cluster) => sampleCluster(world.bare, members.get(cluster) as FleetMember),
      history: (revision, soakEnd) => fleetHistory(world.bare, revision, soakEnd),
      setHeadline: (text) => this.headline(text),
      timeoutMs: this.options.scenarioTimeoutMs,
      signal: this.options.signal,
      failure: () => this.supervisor?.failure(),
      log: second.drydock.child.logFile,
    });
    const { commit, durationMs, revision, startedAfterMs } = summary;
    return {
      summary,
      lines: fleetSummaryLines(summary, FLEET_SHAPE),
      logged: { commit, durationMs, revision, startedAfterMs },
    };
  }

  /** Steps 3–6: the fleet repository and its Git server, the sim cloud, demo workloads, drydock. */
  async startFleet(cluster: Awaited<ReturnType<Run['startCluster']>>) {
    const { layout, options } = this;
    const { ctx, settings, controlPlane, kc } = cluster;
    let step = this.begin(STEPS.git);
    const examplesDir = options.examplesDir ?? path.join(PACKAGE_ROOT, 'examples-repo');
    const seeded = seedFleetRepo(layout.gitRoot, examplesDir, layout.work);
    const gitServer = await startSandboxGitServer(ctx, settings);
    this.gitServer = gitServer;
    writeSettings(layout, { ...settings, gitPort: gitServer.port });
    const bare = fleetRepoPath(layout.gitRoot);
    this.monitor.watchRepo(new RepoReader(bare, TRACKED_BRANCH, DEFAULT_STATUS_BRANCH));
    this.finish(
      step,
      `${gitServer.repoUrl('fleet.git')}${seeded.created ? ` (new, from ${path.relative(process.cwd(), examplesDir) || '.'})` : ' (resumed)'}`,
    );

    // The sim cloud, shaped by the repository's ScalingGroups.
    step = this.begin(STEPS.cloud);
    const fleetFiles = readTree(bare, TRACKED_BRANCH, '.');
    // The Bottlerocket hosts only for their scenario: no ScalingGroup names them (they are
    // updated in place, never replaced), and the other scenarios act on every group.
    const groups: FleetGroup[] = [
      ...fleetGroups(fleetFiles),
      ...(options.scenario === 'bottlerocket' ? [bottlerocketGroup()] : []),
    ];
    const cloud = await startSimCloud(ctx, kc, controlPlane.kubeconfigPath, groups, step, options.startTimeoutMs);
    this.finish(step, `${cloud.url}: ${groups.map((g) => `${g.groupId} ×${g.size}`).join(', ')}`);

    // Workloads whose PDBs make drains go one at a time.
    step = this.begin(STEPS.workloads);
    await applyObjects(kc, demoManifests());
    await waitFor('the demo Deployments to be available', () => demoWorkloadsReady(kc), {
      timeoutMs: options.startTimeoutMs,
      step: STEPS.workloads,
      signal: options.signal,
      failure: () => this.supervisor?.failure(),
      log: controlPlane.logs['kube-scheduler'] ?? layout.logs,
    });
    this.finish(step, 'web ×6, api ×3, queue ×2, one disruption each');

    step = this.begin(STEPS.drydock);
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
    this.monitor.watchMetrics(`${drydock.url}/metrics`);
    this.finish(step, drydock.url);
    this.logger.info({ drydock: drydock.url, cloud: cloud.url, git: gitServer.baseUrl }, 'sandbox running');

    const exampleImage = groups.find((g) => g.role === 'worker') ?? groups[0];
    const exampleFile = exampleImage === undefined ? undefined : nodeImageFile(fleetFiles, exampleImage.nodeImage);
    this.screen.print(
      instructions({
        ...(exampleFile === undefined ? {} : { nodeImageFile: exampleFile }),
        ...(exampleImage === undefined ? {} : { image: exampleImage.image }),
        kubeconfig: controlPlane.kubeconfigPath,
        binDir: cluster.binDir,
        drydockDir: await writeLauncher(layout),
        cloneUrl: cloneUrl(gitServer, settings.gitUser),
        cloudUrl: cloud.url,
        statusBranch: DEFAULT_STATUS_BRANCH,
        logs: layout.logs,
        controlPlaneLogs: path.join(controlPlane.dataDir, 'logs'),
      }),
    );
    return { bare, seeded, groups, cloud, drydock };
  }

  /** Until Ctrl-C or a process the sandbox needs dies. */
  async untilStopped(): Promise<SandboxOutcome> {
    this.headline('running (Ctrl-C stops everything)');
    const { signal } = this.options;
    await new Promise<void>((resolve) => {
      if (signal.aborted || this.supervisor?.failure() !== undefined) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
      this.supervisor?.onFailure(() => resolve());
    });
    const failed = this.supervisor?.failure();
    return failed === undefined ? { kind: 'stopped' } : { kind: 'failed', error: failed };
  }

  /** Every part started, stopped, whatever the way out. */
  async stop(): Promise<void> {
    this.monitor.stop();
    this.headline('stopping');
    this.screen.close();
    await this.supervisor
      ?.stopAll()
      .catch((err: unknown) => this.logger.error({ err: String(err) }, 'stopping processes failed'));
    await this.gitServer?.stop().catch(() => undefined);
    for (const cp of this.controlPlanes.reverse())
      await cp
        .stop()
        .catch((err: unknown) => this.logger.error({ err: String(err) }, 'stopping the control plane failed'));
    this.logger.info({}, 'sandbox stopped');
    this.release?.();
  }
}

/**
 * One cluster from the examples: started, then run until stopped (no scenario: undefined) or
 * through the scenario.
 */
async function singleCluster(
  run: Run,
  scenario: Exclude<Scenario, 'fleet'> | undefined,
): Promise<ScenarioRun | undefined> {
  const cluster = await run.startCluster();
  const fleet = await run.startFleet(cluster);
  if (scenario === undefined) return undefined;
  const { options, layout, monitor, screen } = run;
  const following: Following = {
    bare: fleet.bare,
    workDir: layout.work,
    nextSnapshot: () => monitor.next(),
    setHeadline: (text: string) => run.headline(text),
    timeoutMs: options.scenarioTimeoutMs,
    signal: options.signal,
    failure: () => run.supervisor?.failure(),
    log: fleet.drydock.child.logFile,
  };
  return runScenario(scenario, {
    following,
    groups: fleet.groups,
    kc: cluster.kc,
    kubeconfig: cluster.controlPlane.kubeconfigPath,
    cloudUrl: fleet.cloud.url,
    resumed: !fleet.seeded.created,
    print: (lines) => screen.print(lines),
  });
}

/** Runs the sandbox until Ctrl-C, or through the scenario. Never throws: failures come back as an outcome. */
export async function runSandbox(options: SandboxOptions): Promise<SandboxOutcome> {
  const layout = stateLayout(options.stateDir);
  const screen = createScreen(options.out, options.live === undefined ? {} : { live: options.live });
  const progress = new Progress(
    Object.values(options.scenario === 'fleet' ? FLEET_STEPS : STEPS),
    options.scenario === undefined ? 'starting' : `scenario ${options.scenario}: starting`,
  );
  const monitor = new Monitor(progress, new Date(), (s) => screen.show(s));
  const run = new Run(options, layout, screen, progress, monitor);
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
    const done = options.scenario === 'fleet' ? await run.runFleet() : await singleCluster(run, options.scenario);
    if (done === undefined) return await run.untilStopped();
    run.headline(`scenario ${options.scenario ?? ''}: complete`);
    screen.print(done.lines);
    run.logger.info(done.logged, 'scenario complete');
    return { kind: 'scenario', summary: done.summary };
  } catch (err) {
    const error = stepError(run.current?.title ?? 'the sandbox', err);
    run.current?.handle.fail(error.message.split('\n')[0] ?? error.message);
    monitor.refresh();
    run.logger.error({ code: error.code, step: error.data.step, log: error.data.log }, 'sandbox failed');
    return { kind: 'failed', error };
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    await run.stop();
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
