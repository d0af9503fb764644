/**
 * The processes the sandbox starts (the sim cloud, drydock itself): each in its own process
 * group, so stopping one stops everything it started in turn and a Ctrl-C in the terminal
 * reaches the sandbox first, which then stops them in reverse order. Output goes to one log
 * file per process in the state directory. Pids are recorded so a re-run after a crash can
 * stop what the crashed run left behind.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { SandboxError } from './errors.js';
import { isAlive } from './layout.js';
import { delay, within } from './wait.js';

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
    if (Array.isArray(raw)) records = raw.filter((r): r is PidRecord => typeof r?.pid === 'number' && typeof r?.name === 'string');
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
  private readonly children: SupervisedChild[] = [];
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
    if (this.stopping) throw new SandboxError('Interrupted', `not starting ${spec.name}: the sandbox is stopping`, { process: spec.name });
    const logFile = this.logFile(spec.name);
    const fd = openSync(logFile, 'a');
    writeSync(fd, `\n=== ${new Date().toISOString()} starting ${spec.name}: ${[spec.command, ...spec.args].join(' ')}\n`);
    let child;
    try {
      child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        env: spec.env ?? process.env,
        stdio: ['ignore', fd, fd],
        detached: true,
      });
    } finally {
      closeSync(fd);
    }
    const pid = child.pid;
    if (pid === undefined) {
      throw new SandboxError('StepFailed', `could not start ${spec.name} (${spec.command})`, { step: `start ${spec.name}`, log: logFile });
    }
    let exit: ChildExit | undefined;
    const exited = new Promise<ChildExit>((resolve) => {
      child.once('exit', (code, signal) => {
        exit = { code, signal };
        this.logger.info({ process: spec.name, pid, code, signal }, 'process exited');
        if (!this.stopping && spec.oneShot !== true) this.fail(spec.name, exit, logFile);
        resolve(exit);
      });
      child.once('error', (err) => {
        exit = { code: null, signal: null };
        this.logger.error({ process: spec.name, err: err.message }, 'process failed to start');
        if (!this.stopping && spec.oneShot !== true) this.fail(spec.name, exit, logFile);
        resolve(exit);
      });
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
    this.children.push(handle);
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
    for (const child of [...this.children].reverse()) {
      if (child.exit === undefined) {
        this.logger.info({ process: child.name, pid: child.pid }, 'stopping process');
        killGroup(child.pid, 'SIGTERM');
        if ((await within(child.exited, graceMs)) === 'timeout') {
          this.logger.warn({ process: child.name, pid: child.pid, graceMs }, 'process ignored SIGTERM; killing it');
        }
      }
      // Whatever the leader left behind in its group goes too.
      killGroup(child.pid, 'SIGKILL');
      await within(child.exited, 1000);
    }
    rmSync(this.pidFile, { force: true });
  }
}
