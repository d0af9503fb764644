/**
 * A real Prometheus and Alertmanager for one describe block, scraping a metrics endpoint the
 * test sets: two gauges, `world_unwell` (the rule WorldUnwell fires while it is above 0) and
 * `world_errors` (read by queries), and `world_slow` (WorldSlow stays pending: its `for` is an
 * hour). Scrape and rule evaluation run every second. The binaries come from
 * DRYDOCK_PROMETHEUS_BIN (scripts/test.sh sets it from scripts/prometheus.sh); without it a
 * local run skips these tests and says so, and CI (CI=true) fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from './control-plane.js';
import { freePort } from './moto.js';
import { unitOnly } from './unit-only.js';

export interface PromWorld {
  readonly prometheus: string;
  readonly alertmanager: string;
  /** Sets a gauge of the scraped endpoint. */
  set(gauge: 'world_unwell' | 'world_errors' | 'world_slow', value: number): void;
  /** Waits until Prometheus has `alert` in `state` (or not at all, for 'inactive'). */
  alertState(alert: string, state: 'firing' | 'pending' | 'inactive'): Promise<void>;
  /** An Alertmanager silence on alertname=`alert`; returns its id. */
  silence(alert: string): Promise<string>;
  expire(id: string): Promise<void>;
  /** Stops Prometheus (Alertmanager keeps running). */
  stopPrometheus(): Promise<void>;
}

const RULES = `groups:
  - name: world
    interval: 1s
    rules:
      - alert: WorldUnwell
        expr: world_unwell > 0
        labels: {severity: page}
      - alert: WorldSlow
        expr: world_slow > 0
        for: 1h
        labels: {severity: page}
`;

/** The binaries' directory, or why there is none. */
function binDir(): string | undefined {
  const dir = process.env['DRYDOCK_PROMETHEUS_BIN'];
  if (dir) return dir;
  if (process.env['CI'] === 'true')
    throw new Error('DRYDOCK_PROMETHEUS_BIN is unset under CI: scripts/test.sh sets it from scripts/prometheus.sh');
  return undefined;
}

function startProcess(bin: string, args: string[], output: string[]): ChildProcess {
  // From its own directory: Debian's Alertmanager reads its templates from ./alertmanager-share
  // there (scripts/prometheus.sh); every path passed is absolute.
  const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: path.dirname(bin) });
  p.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  p.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  return p;
}

async function stopProcess(p: ChildProcess | undefined): Promise<void> {
  if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await exited;
}

async function ready(what: string, url: string, output: string[]): Promise<void> {
  try {
    await eventually(`${what} ready`, async () => (await fetch(url)).ok, { timeoutMs: 60_000 });
  } catch (err) {
    throw new Error(`${what} did not start: ${String(err)}\n${output.join('').slice(-2000)}`);
  }
}

async function serveGauges(values: Map<string, number>): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end([...values].map(([k, v]) => `# TYPE ${k} gauge\n${k} ${v}\n`).join(''));
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve(typeof a === 'object' && a !== null ? a.port : 0);
    }),
  );
  return { server, port };
}

/** Starts Prometheus, Alertmanager and the gauges before the block's tests; stops them after. */
export function usePrometheus(): () => PromWorld {
  let world: PromWorld | undefined;
  const procs: ChildProcess[] = [];
  let server: Server | undefined;
  let dir: string | undefined;
  before(async function () {
    this.timeout(120_000);
    if (unitOnly()) this.skip();
    const bin = binDir();
    if (bin === undefined) {
      process.stderr.write(
        '      (skipped: DRYDOCK_PROMETHEUS_BIN is unset; run: export DRYDOCK_PROMETHEUS_BIN=$(bash scripts/prometheus.sh))\n',
      );
      this.skip();
    }
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-prom-'));
    const values = new Map([
      ['world_unwell', 0],
      ['world_errors', 0],
      ['world_slow', 0],
    ]);
    const gauges = await serveGauges(values);
    server = gauges.server;
    const [promPort, amPort] = [await freePort(), await freePort()];
    writeFileSync(path.join(dir, 'rules.yml'), RULES);
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      `global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [${path.join(dir, 'rules.yml')}]\n` +
        `scrape_configs:\n  - job_name: world\n    static_configs: [{targets: ['127.0.0.1:${gauges.port}']}]\n`,
    );
    writeFileSync(path.join(dir, 'alertmanager.yml'), 'route: {receiver: none}\nreceivers: [{name: none}]\n');
    const output: string[] = [];
    const prom = startProcess(
      path.join(bin, 'prometheus'),
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      output,
    );
    const am = startProcess(
      path.join(bin, 'alertmanager'),
      [
        `--config.file=${path.join(dir, 'alertmanager.yml')}`,
        `--storage.path=${path.join(dir, 'am')}`,
        `--web.listen-address=127.0.0.1:${amPort}`,
        '--cluster.listen-address=',
      ],
      output,
    );
    procs.push(prom, am);
    const prometheus = `http://127.0.0.1:${promPort}`;
    const alertmanager = `http://127.0.0.1:${amPort}`;
    await ready('Prometheus', `${prometheus}/-/ready`, output);
    await ready('Alertmanager', `${alertmanager}/-/ready`, output);
    world = {
      prometheus,
      alertmanager,
      set: (gauge, value) => values.set(gauge, value),
      alertState: async (alert, state) => {
        await eventually(
          `${alert} ${state}`,
          async () => {
            const body = (await (await fetch(`${prometheus}/api/v1/alerts`)).json()) as {
              data: { alerts: { labels: Record<string, string>; state: string }[] };
            };
            const a = body.data.alerts.find((x) => x.labels['alertname'] === alert);
            return state === 'inactive' ? a === undefined : a?.state === state;
          },
          { timeoutMs: 30_000, intervalMs: 200 },
        );
      },
      silence: async (alert) => {
        const now = Date.now();
        const res = await fetch(`${alertmanager}/api/v2/silences`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            matchers: [{ name: 'alertname', value: alert, isRegex: false, isEqual: true }],
            startsAt: new Date(now - 1000).toISOString(),
            endsAt: new Date(now + 3600_000).toISOString(),
            createdBy: 'e2e',
            comment: 'known, being fixed',
          }),
        });
        if (!res.ok) throw new Error(`silence: HTTP ${res.status} ${await res.text()}`);
        return ((await res.json()) as { silenceID: string }).silenceID;
      },
      expire: async (id) => {
        const res = await fetch(`${alertmanager}/api/v2/silence/${id}`, { method: 'DELETE' });
        if (!res.ok) throw new Error(`expire silence: HTTP ${res.status}`);
      },
      stopPrometheus: () => stopProcess(prom),
    };
  });
  after(async function () {
    this.timeout(30_000);
    for (const p of procs.splice(0)) await stopProcess(p);
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!world) throw new Error('Prometheus is not running (usePrometheus() in a describe block)');
    return world;
  };
}
