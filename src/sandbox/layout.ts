/**
 * Where the sandbox keeps every piece of its state: one directory, so `--reset` is one
 * removal and a re-run finds everything it needs to resume.
 *
 * The default is `.state/sandbox` under the current directory rather than the user cache:
 * the sandbox is something a person runs from a checkout and then pokes at (logs, the
 * kubeconfig, the bare repo), so it sits next to the project where the printed paths are
 * short, is ignored by Git there, and goes away with the checkout. Short paths also keep
 * unix socket paths of the control plane under their length limit.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { SandboxError } from './errors.js';

export const DEFAULT_STATE_DIR = path.join('.state', 'sandbox');

export type Scenario = 'upgrade' | 'nodeop' | 'pr' | 'bottlerocket' | 'fleet';
export const SCENARIOS: readonly Scenario[] = ['upgrade', 'nodeop', 'pr', 'bottlerocket', 'fleet'];

export interface StateLayout {
  readonly root: string;
  /** One log file per process and one for the sandbox itself. */
  readonly logs: string;
  /** GIT_PROJECT_ROOT of the local Git server (holds fleet.git). */
  readonly gitRoot: string;
  /** The sim cloud's persisted state. */
  readonly cloud: string;
  /** etcd data, certificates, kubeconfig. */
  readonly controlPlane: string;
  /** drydock's own cache clone and scratch space. */
  readonly drydock: string;
  /** Temporary clones the scenario commits from. */
  readonly work: string;
  /** A `drydock` launcher for this checkout, for the commands the sandbox prints. */
  readonly bin: string;
  /** Ports, credentials and ids that must survive a re-run (mode 0600). */
  readonly settingsFile: string;
  /** Pids of the processes started, so a re-run after a crash can stop leftovers. */
  readonly pidFile: string;
  /** Held while a sandbox runs on this directory. */
  readonly lockFile: string;
}

export function stateLayout(root: string): StateLayout {
  const abs = path.resolve(root);
  return {
    root: abs,
    logs: path.join(abs, 'logs'),
    gitRoot: path.join(abs, 'git'),
    cloud: path.join(abs, 'cloud'),
    controlPlane: path.join(abs, 'control-plane'),
    drydock: path.join(abs, 'drydock'),
    work: path.join(abs, 'work'),
    bin: path.join(abs, 'bin'),
    settingsFile: path.join(abs, 'sandbox.json'),
    pidFile: path.join(abs, 'pids.json'),
    lockFile: path.join(abs, 'sandbox.lock'),
  };
}

/**
 * Whether a process with this pid runs (signal 0 checks without sending anything). A zombie
 * (exited, not yet reaped by its parent, which in a container may be an init that never
 * reaps) does not count: it holds no resources and cannot be stopped any further.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): signal 0 is all there is
  }
}

function lockHolder(layout: StateLayout): number | undefined {
  if (!existsSync(layout.lockFile)) return undefined;
  const pid = Number.parseInt(readFileSync(layout.lockFile, 'utf8').trim(), 10);
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

function lockedError(layout: StateLayout, pid: number): SandboxError {
  return new SandboxError(
    'StateLocked',
    `another sandbox (pid ${pid}) is running on ${layout.root}; stop it (Ctrl-C, or kill ${pid}) or pass a different --state-dir`,
    { pid, stateDir: layout.root },
  );
}

function tryLock(layout: StateLayout): boolean {
  try {
    // wx: exclusive create, so two sandboxes starting at the same instant cannot both win.
    const fd = openSync(layout.lockFile, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new SandboxError('StepFailed', `cannot create ${layout.lockFile}: ${(err as Error).message}`, {
      step: 'prepare the state directory',
      stateDir: layout.root,
    });
  }
}

/**
 * Takes the lock, then creates the directory tree (emptying it first when `reset`). Returns
 * the function that releases the lock. A lock left by a dead process is taken over.
 */
export function prepareStateDir(layout: StateLayout, options: { readonly reset: boolean }): () => void {
  mkdirSync(layout.root, { recursive: true });
  if (!tryLock(layout)) {
    const holder = lockHolder(layout);
    if (holder !== undefined) throw lockedError(layout, holder);
    rmSync(layout.lockFile, { force: true });
    if (!tryLock(layout)) throw lockedError(layout, lockHolder(layout) ?? -1);
  }
  if (options.reset) {
    for (const entry of readdirSync(layout.root)) {
      if (path.join(layout.root, entry) !== layout.lockFile)
        rmSync(path.join(layout.root, entry), { recursive: true, force: true });
    }
  }
  for (const dir of [
    layout.logs,
    layout.gitRoot,
    layout.cloud,
    layout.controlPlane,
    layout.drydock,
    layout.work,
    layout.bin,
  ]) {
    mkdirSync(dir, { recursive: true });
  }
  return () => {
    if (existsSync(layout.lockFile) && readFileSync(layout.lockFile, 'utf8').trim() === String(process.pid)) {
      rmSync(layout.lockFile, { force: true });
    }
  };
}

/** Reads the persisted settings; undefined when absent or unreadable (a fresh start). */
export function readSettings<T>(layout: StateLayout, parse: (raw: unknown) => T | undefined): T | undefined {
  if (!existsSync(layout.settingsFile)) return undefined;
  try {
    return parse(JSON.parse(readFileSync(layout.settingsFile, 'utf8')));
  } catch {
    return undefined;
  }
}

export function writeSettings(layout: StateLayout, settings: unknown): void {
  writeFileSync(layout.settingsFile, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Where a run keeps its state. A scenario left at the default directory runs in one of its
 * own, emptied first: it pushes commits, and must never push them into the fleet repository
 * a person works with in the default sandbox. Given a --state-dir, it uses that as told.
 */
export function scenarioStateDir(flags: {
  readonly stateDir: string;
  readonly stateDirGiven?: boolean;
  readonly reset: boolean;
  readonly scenario?: Scenario;
}): { readonly stateDir: string; readonly reset: boolean } {
  if (flags.scenario === undefined || flags.stateDirGiven === true)
    return { stateDir: flags.stateDir, reset: flags.reset };
  return { stateDir: path.join(path.dirname(DEFAULT_STATE_DIR), `scenario-${flags.scenario}`), reset: true };
}
