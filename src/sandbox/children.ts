/**
 * The processes the sandbox starts (the sim cloud, drydock itself): each in its own process
 * group, so stopping one stops everything it started in turn and a Ctrl-C in the terminal
 * reaches the sandbox first, which then stops them in reverse order. Output goes to one log
 * file per process in the state directory. Pids are recorded so a re-run after a crash can
 * stop what the crashed run left behind; a watchdog per process group (the control plane's
 * spawner) covers a sandbox killed with SIGKILL.
 */
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { spawnComponent, type Component } from './control-plane/processes.js';
import { SandboxError } from './errors.js';
import { isAlive } from './layout.js';
import { delay } from './wait.js';

export interface ChildSpec {
  /** Short name, also the log file's name: logs/<name>.log. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Secrets go here, never into args (args are written to the log header). */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** A command that is meant to finish (a build): its exit is not a failure of the sandbox. */
  readonly oneShot?: boolean;
}

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SupervisedChild {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<ChildExit>;
  /** Set once the process has exited. */
  readonly exit: ChildExit | undefined;
}

interface PidRecord {
  readonly name: string;
  readonly pid: number;
  /** Linux: the process start time in clock ticks, so a reused pid is never mistaken for ours. */
  readonly startTicks?: number;
}

/** Field 22 of /proc/<pid>/stat; undefined off Linux or when the process is gone. */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; fields after the last ')' are plain.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

/** The last `lines` non-empty lines of a log ('' when unreadable), for error messages. */
export function logTail(file: string, lines = 3): string {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('=== '))
      .slice(-lines)
      .join('\n');
  } catch {
    return '';
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Stops the process groups a previous run recorded and left running (the sandbox was killed
 * with SIGKILL, or the machine's terminal closed). Returns the names of those stopped.
 */
export async function stopLeftovers(pidFile: string, logger: Logger): Promise<string[]> {
  if (!existsSync(pidFile)) return [];
  let records: PidRecord[] = [];
  try {
    const raw: unknown = JSON.parse(readFileSync(pidFile, 'utf8'));
    if (Array.isArray(raw))
      records = (raw as { pid?: unknown; name?: unknown }[]).filter(
        (r): r is PidRecord => typeof r?.pid === 'number' && typeof r?.name === 'string',
      );
  } catch {
    records = [];
  }
  const stopped: string[] = [];
  for (const r of records) {
    if (!isAlive(r.pid)) continue;
    // Without a recorded start time the pid may belong to someone else now: leave it alone.
    if (r.startTicks === undefined || processStartTicks(r.pid) !== r.startTicks) continue;
    logger.warn({ process: r.name, pid: r.pid }, 'stopping a process left over from an earlier run');
    killGroup(r.pid, 'SIGTERM');
    for (let i = 0; i < 50 && isAlive(r.pid); i++) await delay(100);
    killGroup(r.pid, 'SIGKILL');
    stopped.push(r.name);
  }
  rmSync(pidFile, { force: true });
  return stopped;
}

export class Supervisor {
  private readonly children: { readonly handle: SupervisedChild; readonly component: Component }[] = [];
  private readonly records: PidRecord[] = [];
  private stopping = false;
  private firstFailure: SandboxError | undefined;
  private readonly listeners: ((err: SandboxError) => void)[] = [];

  constructor(
    private readonly logsDir: string,
    private readonly pidFile: string,
    private readonly logger: Logger,
  ) {}

  /** The first process that exited while it was still needed, as an error; undefined while all run. */
  failure(): SandboxError | undefined {
    return this.firstFailure;
  }

  /** Called once, on the first unexpected exit. */
  onFailure(listener: (err: SandboxError) => void): void {
    this.listeners.push(listener);
  }

  logFile(name: string): string {
    return path.join(this.logsDir, `${name}.log`);
  }

  start(spec: ChildSpec): SupervisedChild {
    if (this.stopping)
      throw new SandboxError('Interrupted', `not starting ${spec.name}: the sandbox is stopping`, {
        process: spec.name,
      });
    const logFile = this.logFile(spec.name);
    appendFileSync(
      logFile,
      `\n=== ${new Date().toISOString()} starting ${spec.name}: ${[spec.command, ...spec.args].join(' ')}\n`,
    );
    // The control plane's spawner: own process group, log file, and a watchdog that kills the
    // group within a second should the sandbox itself be killed with SIGKILL.
    const component = spawnComponent(spec.name, spec.command, [...spec.args], {
      logFile,
      ...(spec.env === undefined ? {} : { env: spec.env }),
      ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    });
    const pid = component.pid;
    if (pid === undefined) {
      throw new SandboxError('StepFailed', `could not start ${spec.name} (${spec.command})`, {
        step: `start ${spec.name}`,
        log: logFile,
      });
    }
    let exit: ChildExit | undefined;
    const exited = component.exited.then((info) => {
      exit = { code: info.code, signal: info.signal };
      this.logger.info({ process: spec.name, pid, code: info.code, signal: info.signal }, 'process exited');
      if (!this.stopping && spec.oneShot !== true) this.fail(spec.name, exit, logFile);
      return exit;
    });
    const handle: SupervisedChild = {
      name: spec.name,
      pid,
      logFile,
      exited,
      get exit() {
        return exit;
      },
    };
    this.children.push({ handle, component });
    const startTicks = processStartTicks(pid);
    this.records.push(startTicks === undefined ? { name: spec.name, pid } : { name: spec.name, pid, startTicks });
    writeFileSync(this.pidFile, `${JSON.stringify(this.records, null, 2)}\n`);
    this.logger.info({ process: spec.name, pid, log: logFile }, 'process started');
    return handle;
  }

  private fail(name: string, exit: ChildExit, logFile: string): void {
    if (this.firstFailure !== undefined) return;
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
    const tail = logTail(logFile);
    this.firstFailure = new SandboxError('ProcessExited', `${name} ${how} while the sandbox still needed it`, {
      process: name,
      exitCode: exit.code,
      signal: exit.signal,
      log: logFile,
      ...(tail === '' ? {} : { lastProblem: tail }),
    });
    for (const l of this.listeners) l(this.firstFailure);
  }

  /** SIGTERM to each process group, newest first; SIGKILL to whatever is left after `graceMs`. */
  async stopAll(graceMs = 5000): Promise<void> {
    this.stopping = true;
    for (const { handle, component } of [...this.children].reverse()) {
      if (handle.exit === undefined) this.logger.info({ process: handle.name, pid: handle.pid }, 'stopping process');
      await component.stop(graceMs);
      await handle.exited;
    }
    rmSync(this.pidFile, { force: true });
  }
}
