/**
 * `drydock run` as a child process (so SIGKILL is real): its flags for the e2e world, its log
 * records, and the signed webhook that tells it about a push.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_USER } from '../support/git-server.js';
import type { FleetRepo } from './fleet.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const DRYDOCK_BIN = path.join(ROOT, 'bin', 'drydock.js');

export function drydockArgs(
  repo: FleetRepo,
  kubeconfig: string,
  cloudUrl: string,
  cacheDir: string,
  namespace = 'kube-system',
): string[] {
  return [
    '--namespace',
    namespace,
    '--repo',
    repo.url,
    '--branch',
    'main',
    '--kubeconfig',
    kubeconfig,
    '--provider',
    'sim',
    '--cloud-endpoint',
    cloudUrl,
    '--listen',
    '127.0.0.1:0',
    '--interval',
    '1s',
    '--resync',
    '3s',
    '--cache-dir',
    cacheDir,
    '--lease-duration',
    '3s',
    '--renew-deadline',
    '2s',
    '--retry-period',
    '500ms',
  ];
}

/** deploy/'s Namespace, ServiceAccount and RBAC, applied as they are. */
export const WEBHOOK_SECRET = 'e2e-webhook-secret';

/** POSTs a signed push notification to drydock's webhook route; resolves to the HTTP status. */
export async function notifyWebhook(drydockUrl: string): Promise<number> {
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const sig = createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex');
  const r = await fetch(`${drydockUrl}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-drydock-signature': `sha256=${sig}` },
    body,
  });
  return r.status;
}

export interface DrydockChild {
  readonly proc: ChildProcess;
  readonly url: Promise<string>;
  /** Every log line so far (JSON lines from stdout, text from stderr). */
  readonly lines: string[];
  /** Parsed JSON log records. */
  records(): Record<string, unknown>[];
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

export function startDrydockChild(args: readonly string[], env: NodeJS.ProcessEnv = {}): DrydockChild {
  const proc = spawn(process.execPath, [DRYDOCK_BIN, 'run', ...args], {
    env: {
      ...process.env,
      DRYDOCK_GIT_USERNAME: TEST_USER.username,
      DRYDOCK_GIT_PASSWORD: TEST_USER.password,
      DRYDOCK_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let resolveUrl!: (u: string) => void;
  const url = new Promise<string>((r) => {
    resolveUrl = r;
  });
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let buf = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        if (process.env.DRYDOCK_E2E_VERBOSE === '1') process.stderr.write(`      | ${line}\n`);
        const m = /listening on (https?:\/\/\S+)/.exec(line);
        if (m?.[1]) resolveUrl(m[1]);
      }
    });
  };
  collect(proc.stdout);
  collect(proc.stderr);
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return {
    proc,
    url,
    lines,
    records: () =>
      lines.flatMap((l) => {
        if (!l.startsWith('{')) return [];
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    exited,
    kill: (signal) => {
      proc.kill(signal);
    },
  };
}

/** Rounds the child completed over a valid commit so far: drydock_reconcile_duration_seconds' count with result ok. */
export async function roundsDone(child: DrydockChild): Promise<number> {
  const text = await (await fetch(`${await child.url}/metrics`)).text();
  const m = /^drydock_reconcile_duration_seconds_count\{result="ok"\} (\d+)$/m.exec(text);
  return m?.[1] === undefined ? 0 : Number(m[1]);
}

/**
 * Resolves once the child completed `n` more whole rounds than when called: "nothing happened"
 * then means drydock looked and did nothing, not that it had no time to look (a loaded machine
 * may take longer than any sleep).
 */
/** Whether the child holds the lease now (drydock_leader). */
export async function leads(child: DrydockChild): Promise<boolean> {
  const text = await (await fetch(`${await child.url}/metrics`)).text();
  return /^drydock_leader 1$/m.test(text);
}

/**
 * `n` rounds the child completed as the leader: a child started while the lease of one killed
 * is still held plans, but does not act, until that lease runs out.
 */
export async function afterLeaderRounds(child: DrydockChild, n = 3, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await leads(child))) {
    if (Date.now() > deadline) throw new Error(`drydock did not lead within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await afterRounds(child, n, Math.max(0, deadline - Date.now()));
}

export async function afterRounds(child: DrydockChild, n = 3, timeoutMs = 120_000): Promise<void> {
  const start = await roundsDone(child);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = (await roundsDone(child)) - start;
    if (done >= n) return;
    if (Date.now() > deadline) throw new Error(`drydock completed ${done} of ${n} rounds in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
