/**
 * Starting each part of the sandbox, one function per part: the Kubernetes binaries (built
 * when missing), the control plane, the Git server with fleet.git, the sim cloud and drydock
 * as processes of their own. Each waits until its part is usable, with a deadline, and fails
 * naming the step and the log to read.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ControlPlaneError, resolveBinDir, startControlPlane, type ControlPlane } from './control-plane/index.js';
import { startGitServer, type GitServer, type GitServerUser } from './git-server.js';
import { logTail, type Supervisor, type SupervisedChild } from './children.js';
import { SandboxError } from './errors.js';
import type { FleetGroup } from './fleet-groups.js';
import { simCloudConfigYaml } from './fleet-groups.js';
import { DEFAULT_STATUS_BRANCH, FLEET_REPO, TRACKED_BRANCH } from './fleet-repo.js';
import type { StateLayout } from './layout.js';
import type { StepHandle } from './monitor.js';
import { nodeViews, readNodes } from './snapshot.js';
import { notYet, waitFor } from './wait.js';

/** The package root: bin/drydock.js, scripts/ and examples-repo/ live there. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const DRYDOCK_BIN = path.join(PACKAGE_ROOT, 'bin', 'drydock.js');

export interface StartContext {
  readonly layout: StateLayout;
  readonly supervisor: Supervisor;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

function waitOptions(ctx: StartContext, step: string, timeoutMs: number, log?: string) {
  return {
    timeoutMs,
    step,
    signal: ctx.signal,
    failure: () => ctx.supervisor.failure(),
    ...(log === undefined ? {} : { log }),
  };
}

/**
 * The directory holding etcd, kube-apiserver, …, kwok. When they are missing, they are built
 * with scripts/k8s-binaries.sh (a cold build takes tens of minutes; the step shows its progress).
 */
export async function ensureBinaries(ctx: StartContext, step: StepHandle, timeoutMs: number): Promise<string> {
  try {
    return resolveBinDir();
  } catch (err) {
    if (!(err instanceof ControlPlaneError) || err.step !== 'binaries' || process.env.DRYDOCK_K8S_BIN) throw err;
  }
  const script = path.join(PACKAGE_ROOT, 'scripts', 'k8s-binaries.sh');
  if (!existsSync(script)) {
    throw new SandboxError(
      'MissingPiece',
      `the Kubernetes binaries are missing and ${script} is not there to build them`,
      { step: 'Kubernetes binaries' },
    );
  }
  step.detail('building from source (tens of minutes the first time)');
  const build = ctx.supervisor.start({ name: 'k8s-binaries', command: 'bash', args: [script], oneShot: true });
  const exit = await waitFor(
    'the Kubernetes binaries to build',
    async () => {
      if (build.exit !== undefined) return build.exit;
      // The build script reports progress line by line; the newest line is the step's detail.
      const line = logTail(build.logFile, 1)
        .replace(/^k8s-binaries: /, '')
        .slice(0, 100);
      if (line !== '') step.detail(line);
      return notYet(line === '' ? 'building' : line);
    },
    { ...waitOptions(ctx, 'Kubernetes binaries', timeoutMs, build.logFile), intervalMs: 2000 },
  );
  if (exit.code !== 0) {
    throw new SandboxError('StepFailed', `building the Kubernetes binaries failed (exit ${String(exit.code)})`, {
      step: 'Kubernetes binaries',
      log: build.logFile,
    });
  }
  return resolveBinDir();
}

export async function startSandboxControlPlane(ctx: StartContext, binDir: string): Promise<ControlPlane> {
  const log = ctx.logger.child({ component: 'control-plane' });
  return startControlPlane({
    dataDir: ctx.layout.controlPlane,
    binDir,
    keepDataDir: true,
    // The sandbox's sim cloud plays the hosts: Job pods end when and how it says.
    jobPods: 'host',
    log: (msg, fields) => log.info(fields ?? {}, msg),
  });
}

export interface SandboxSettings {
  readonly gitPort?: number;
  readonly gitUser: GitServerUser;
}

export function parseSettings(raw: unknown): SandboxSettings | undefined {
  const r = raw as { gitPort?: unknown; gitUser?: { username?: unknown; password?: unknown } } | null;
  const username = r?.gitUser?.username;
  const password = r?.gitUser?.password;
  if (typeof username !== 'string' || typeof password !== 'string') return undefined;
  return { gitUser: { username, password }, ...(typeof r?.gitPort === 'number' ? { gitPort: r.gitPort } : {}) };
}

export function newSettings(): SandboxSettings {
  return { gitUser: { username: 'sandbox', password: randomBytes(12).toString('hex') } };
}

/** The Git server on the port of the last run when it is free (so existing clones keep working). */
export async function startSandboxGitServer(ctx: StartContext, settings: SandboxSettings): Promise<GitServer> {
  const options = { root: ctx.layout.gitRoot, users: [settings.gitUser] };
  if (settings.gitPort !== undefined) {
    try {
      return await startGitServer({ ...options, port: settings.gitPort });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      ctx.logger.warn({ port: settings.gitPort }, 'the Git server port of the last run is taken; using another');
    }
  }
  return startGitServer(options);
}

/**
 * `<state>/bin/drydock`: runs this checkout's drydock from any directory (npx finds it only
 * inside the checkout), so the printed commands work in a clone of the fleet repository.
 */
export async function writeLauncher(layout: StateLayout): Promise<string> {
  const file = path.join(layout.bin, 'drydock');
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  await writeFile(file, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(DRYDOCK_BIN)} "$@"\n`, { mode: 0o755 });
  return layout.bin;
}

/** The clone URL a person uses, with the sandbox's credentials in it. */
export function cloneUrl(server: GitServer, user: GitServerUser): string {
  const u = new URL(server.repoUrl(FLEET_REPO));
  u.username = user.username;
  u.password = user.password;
  return u.toString();
}

function logSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Reads the URL a process prints once it listens ("… listening on http://…", "… serving on http://…") from its log. */
async function listeningUrl(
  ctx: StartContext,
  child: SupervisedChild,
  from: number,
  what: string,
  timeoutMs: number,
): Promise<string> {
  return waitFor(
    `${what} to listen`,
    async () => {
      const text = readFileSync(child.logFile, 'utf8').slice(from);
      const m = /(?:listening|serving) on (https?:\/\/[^\s"]+)/.exec(text);
      return m?.[1] ?? notYet(`${what} has not printed its URL yet`);
    },
    waitOptions(ctx, `start ${what}`, timeoutMs, child.logFile),
  );
}

export interface SimCloudProcess {
  readonly url: string;
  readonly child: SupervisedChild;
}

/** `drydock sim-cloud` as its own process, joined to the control plane; resolves once every group's nodes are Ready. */
export async function startSimCloud(
  ctx: StartContext,
  kc: KubeConfig,
  kubeconfigPath: string,
  groups: readonly FleetGroup[],
  step: StepHandle,
  timeoutMs: number,
  /** The process's name and log's (a fleet has one sim cloud per cluster). */
  name = 'sim-cloud',
): Promise<SimCloudProcess> {
  const config = path.join(ctx.layout.cloud, 'groups.yaml');
  // Only the first start creates instances from it; after that the cloud's own state wins.
  await writeFile(config, simCloudConfigYaml(groups));
  const log = ctx.supervisor.logFile(name);
  const from = logSize(log);
  const child = ctx.supervisor.start({
    name,
    command: process.execPath,
    args: [
      DRYDOCK_BIN,
      'sim-cloud',
      '--state-dir',
      ctx.layout.cloud,
      '--config',
      config,
      '--kubeconfig',
      kubeconfigPath,
      '--port',
      '0',
    ],
  });
  const url = await listeningUrl(ctx, child, from, 'the sim cloud', timeoutMs);
  const expected = groups.reduce((n, g) => n + g.size, 0);
  await waitFor(
    `${expected} nodes of the sim cloud to be Ready`,
    async () => {
      const nodes = nodeViews(await readNodes(kc));
      const short = groups.filter((g) => nodes.filter((n) => n.group === g.groupId && n.ready).length < g.size);
      const ready = nodes.filter((n) => n.ready && groups.some((g) => g.groupId === n.group)).length;
      step.detail(`${Math.min(ready, expected)}/${expected} nodes Ready`);
      return short.length === 0
        ? true
        : notYet(`${ready}/${expected} nodes Ready (short: ${short.map((g) => g.groupId).join(', ')})`);
    },
    waitOptions(ctx, 'start the sim cloud', timeoutMs, child.logFile),
  );
  return { url, child };
}

export interface DrydockProcess {
  readonly url: string;
  readonly child: SupervisedChild;
}

/**
 * `drydock run` pointed at everything: the fleet repository over HTTP (credentials through
 * the environment, never on the command line), the control plane, the sim cloud. With a
 * cluster, it is that cluster's drydock of a fleet: `--cluster`, and the status branch the
 * fleet gives it (drydock/status-<cluster>).
 */
export async function startDrydock(
  ctx: StartContext,
  options: {
    readonly repoUrl: string;
    readonly user: GitServerUser;
    readonly kubeconfigPath: string;
    readonly simCloudUrl: string;
    readonly cluster?: string;
  },
  timeoutMs: number,
): Promise<DrydockProcess> {
  const name = options.cluster === undefined ? 'drydock' : `drydock-${options.cluster}`;
  const log = ctx.supervisor.logFile(name);
  const from = logSize(log);
  const child = ctx.supervisor.start({
    name,
    command: process.execPath,
    args: [
      DRYDOCK_BIN,
      'run',
      '--repo',
      options.repoUrl,
      '--branch',
      TRACKED_BRANCH,
      ...(options.cluster === undefined ? ['--status-branch', DEFAULT_STATUS_BRANCH] : ['--cluster', options.cluster]),
      '--kubeconfig',
      options.kubeconfigPath,
      '--provider',
      'sim',
      '--cloud-endpoint',
      options.simCloudUrl,
      '--listen',
      '127.0.0.1:0',
      // One replica: no Lease to elect through.
      '--leader-elect',
      'false',
      // A sandbox should react within seconds of a push.
      '--interval',
      '2s',
      '--resync',
      '5s',
      '--cache-dir',
      path.join(ctx.layout.drydock, 'cache'),
    ],
    cwd: ctx.layout.drydock,
    env: { ...process.env, DRYDOCK_GIT_USERNAME: options.user.username, DRYDOCK_GIT_PASSWORD: options.user.password },
  });
  const url = await listeningUrl(ctx, child, from, name, timeoutMs);
  await waitFor(
    'drydock /healthz',
    async () => {
      const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      return r.ok ? true : notYet(`/healthz answered ${r.status}`);
    },
    waitOptions(ctx, 'start drydock', timeoutMs, child.logFile),
  );
  return { url, child };
}
