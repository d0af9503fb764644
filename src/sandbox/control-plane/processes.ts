// Child processes of the control plane: each in its own process group, logging to a file,
// killed as a group, and never outliving this process.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';

import { ControlPlaneError, tailFile } from './errors.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** set when the process could not be started at all; its code says why (ENOENT, EACCES) */
  error?: NodeJS.ErrnoException;
}

export interface Component {
  readonly name: string;
  readonly logFile: string;
  readonly pid: number | undefined;
  /** resolves when the process has exited (never rejects) */
  readonly exited: Promise<ExitInfo>;
  running(): boolean;
  /** SIGTERM to the group, then SIGKILL after graceMs; resolves once it has exited */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<Component>();
let exitHookInstalled = false;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * If this process dies without running its exit hook (SIGKILL, a crash of the runtime), a tiny
 * shell loop kills the component's process group within a second. It ends by itself once the
 * group is gone.
 */
function startWatchdog(pgid: number): void {
  const script =
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 -${pgid} 2>/dev/null; do sleep 1; done; ` +
    `kill -0 ${process.pid} 2>/dev/null || kill -KILL -${pgid} 2>/dev/null; exit 0`;
  try {
    const w = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
    w.on('error', () => undefined);
    w.unref();
  } catch {
    /* no /bin/sh: the exit hook still covers normal exits */
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort: whatever still runs when this process exits is killed, group and all.
  process.on('exit', () => {
    for (const c of live) killGroup(c.pid, 'SIGKILL');
  });
}

/** Components still running, across all control planes of this process. */
export function liveComponents(): Component[] {
  return [...live];
}

export function spawnComponent(
  name: string,
  command: string,
  args: string[],
  opts: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Component {
  installExitHook();
  const fd = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', fd, fd],
      detached: true, // own process group: kill(-pid) reaches its children too
    });
  } finally {
    closeSync(fd);
  }
  let done = false;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('error', (error) => {
      if (child.pid === undefined) {
        done = true;
        resolve({ code: null, signal: null, error });
      }
    });
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  // A component must not keep the event loop (and so a test run) alive by itself.
  child.unref();
  if (child.pid !== undefined) startWatchdog(child.pid);
  const component: Component = {
    name,
    logFile: opts.logFile,
    pid: child.pid,
    exited,
    running: () => !done,
    async stop(graceMs = 10_000) {
      if (done) return;
      // Unreferenced, the child's exit event alone would not keep the event loop alive: with
      // nothing else pending (a benchmark's last teardown), awaiting it would end the process
      // with an unsettled await (exit code 13) instead of waiting for the exit.
      child.ref();
      killGroup(child.pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(true), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        killGroup(child.pid, 'SIGKILL');
        await exited;
      } else {
        // the leader is gone; make sure nothing it started lingers in its group
        killGroup(child.pid, 'SIGKILL');
      }
    },
  };
  live.add(component);
  void exited.then(() => live.delete(component));
  return component;
}

export function describeExit(info: ExitInfo): string {
  if (info.error) return `could not be started (${info.error.message})`;
  if (info.signal) return `was killed by ${info.signal}`;
  return `exited with code ${info.code}`;
}

function hintFor(c: Component, info?: ExitInfo): string {
  const tail = tailFile(c.logFile, 60);
  if (info?.error?.code === 'ENOENT') {
    return `the binary is missing; run: bash scripts/k8s-binaries.sh`;
  }
  if (info?.error?.code === 'EACCES') {
    return `the binary is not executable; chmod +x it or rebuild with: bash scripts/k8s-binaries.sh --force`;
  }
  if (/address already in use/i.test(tail)) {
    return (
      'a port it was given is taken by another process (ports are picked at random, so a retry usually works); ' +
      'check with `ss -ltnp` which process holds it'
    );
  }
  return `read the log above; if the binary itself is broken, rebuild with: bash scripts/k8s-binaries.sh --force`;
}

/** Error for a component that stopped while it was expected to come up. */
export function exitError(c: Component, info: ExitInfo, during: string): ControlPlaneError {
  return new ControlPlaneError(c.name, `${describeExit(info)} while ${during}`, {
    logFile: c.logFile,
    hint: hintFor(c, info),
  });
}

/**
 * Polls `probe` until it returns a value other than undefined. Fails early with the log of any
 * watched component that exits, and after timeoutMs with a message naming what was awaited.
 */
export async function waitFor<T>(
  what: string,
  opts: { timeoutMs: number; intervalMs?: number; watch?: Component[]; blame?: Component },
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 200;
  let lastError = '';
  for (;;) {
    for (const c of opts.watch ?? []) {
      if (!c.running()) throw exitError(c, await c.exited, `waiting for ${what}`);
    }
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) {
      const c = opts.blame;
      throw new ControlPlaneError(
        c?.name ?? 'wait',
        `timed out after ${Math.round(opts.timeoutMs / 1000)}s waiting for ${what}` +
          (lastError ? ` (last error: ${lastError})` : ''),
        {
          ...(c ? { logFile: c.logFile } : {}),
          hint: 'the machine may be overloaded (try again, or raise the timeout); otherwise read the log',
        },
      );
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** `count` distinct free TCP ports on 127.0.0.1 (all held open together while picking). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const srv = net.createServer();
      servers.push(srv);
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => resolve());
      });
      ports.push((srv.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r(undefined)))));
  }
}

export interface TlsOptions {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** accept any server certificate (components serving with self-signed certificates) */
  insecure?: boolean;
}

/** One GET with a short timeout; resolves with status and body, rejects on network errors. */
export function httpGet(
  url: string,
  tls: TlsOptions = {},
  timeoutMs = 3000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      {
        method: 'GET',
        timeout: timeoutMs,
        ...(u.protocol === 'https:'
          ? { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure, agent: false }
          : { agent: false }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs}ms`)));
    req.on('error', reject);
    req.end();
  });
}
