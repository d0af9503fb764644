// The control-plane harness's own logic, with fake binaries: errors name the component, its
// log and what to do; nothing is left running after a failed start.
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import {
  ControlPlaneError,
  REQUIRED_BINARIES,
  resolveBinDir,
  startControlPlane,
} from '../../src/sandbox/control-plane/index.js';
import { exitError, liveComponents, spawnComponent } from '../../src/sandbox/control-plane/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // a zombie waiting for a reaper counts as gone
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

async function waitGone(pid: number, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

/** A bin directory of shell scripts; `scripts` overrides the default (sleep forever). */
async function fakeBinDir(scripts: Partial<Record<(typeof REQUIRED_BINARIES)[number], string>>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-fakebin-'));
  for (const b of REQUIRED_BINARIES) {
    await fs.writeFile(path.join(dir, b), `#!/bin/sh\n${scripts[b] ?? 'exec sleep 600'}\n`, { mode: 0o755 });
  }
  return dir;
}

// etcd stand-in: answers /health on the port of --listen-client-urls
const FAKE_ETCD = `exec "${process.execPath}" -e '
const url = process.argv.find((a) => a.startsWith("--listen-client-urls=")).split("=")[1];
require("http").createServer((q, r) => r.end(JSON.stringify({ health: "true" }))).listen(new URL(url).port, "127.0.0.1");
' -- "$@"`;

describe('control-plane harness (fake binaries)', function () {
  this.timeout(30_000);
  const quiet = () => undefined;
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  it('names the build script when the binaries are missing', () => {
    assert.throws(
      () => resolveBinDir({ DRYDOCK_K8S_BIN: '/nonexistent/drydock-bin' }),
      (err: unknown) => {
        assert.ok(err instanceof ControlPlaneError);
        assert.equal(err.step, 'binaries');
        assert.match(err.message, /lacks etcd, kube-apiserver/);
        assert.match(err.message, /bash scripts\/k8s-binaries\.sh/);
        return true;
      },
    );
    const empty = path.join(os.tmpdir(), 'drydock-no-cache');
    assert.throws(
      () => resolveBinDir({ XDG_CACHE_HOME: empty }),
      (err: unknown) => {
        assert.match(String(err), new RegExp(`${empty}/drydock/k8s-[0-9.]+/bin`));
        assert.match(String(err), /bash scripts\/k8s-binaries\.sh/);
        return true;
      },
    );
  });

  it('uses a complete KUBEBUILDER_ASSETS and ignores an incomplete one (envtest ships only etcd, kube-apiserver, kubectl)', async () => {
    const complete = await fakeBinDir({});
    const partial = await fakeBinDir({});
    dirs.push(complete, partial);
    await fs.rm(path.join(partial, 'kwok'));
    assert.equal(resolveBinDir({ KUBEBUILDER_ASSETS: complete }), complete);
    assert.equal(resolveBinDir({ DRYDOCK_K8S_BIN: complete, KUBEBUILDER_ASSETS: partial }), complete);
    assert.throws(() => resolveBinDir({ KUBEBUILDER_ASSETS: partial, XDG_CACHE_HOME: '/nonexistent' }), /not found/);
  });

  it("tells a missing binary from one that is not executable by the start error's code", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-nobin-'));
    try {
      await fs.writeFile(path.join(dir, 'etcd'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
      const hints: string[] = [];
      for (const binary of ['absent', 'etcd']) {
        const c = spawnComponent(binary, path.join(dir, binary), [], { logFile: path.join(dir, `${binary}.log`) });
        const info = await c.exited;
        hints.push(exitError(c, info, 'starting').message);
      }
      assert.match(hints[0] ?? '', /the binary is missing; run: bash scripts\/k8s-binaries.sh/);
      assert.match(hints[1] ?? '', /the binary is not executable/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a binary that exits at start by component and log file', async () => {
    const binDir = await fakeBinDir({ etcd: 'echo "etcd: simulated failure: unknown flag" >&2; exit 3' });
    dirs.push(binDir);
    const err = await startControlPlane({ binDir, log: quiet }).then(
      () => assert.fail('start-up should fail'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ControlPlaneError, String(err));
    assert.equal(err.step, 'etcd');
    assert.match(err.message, /etcd: exited with code 3 while waiting for etcd \/health/);
    assert.ok(err.logFile?.endsWith(path.join('logs', 'etcd.log')), err.logFile);
    assert.match(err.message, /simulated failure: unknown flag/); // the log's tail is in the message
    assert.match(err.message, /what to do:/);
    assert.deepEqual(liveComponents(), []);
    dirs.push(path.dirname(path.dirname(err.logFile ?? '')));
  });

  it('stops what it started when a later component fails, and says when a port is taken', async () => {
    const binDir = await fakeBinDir({
      etcd: FAKE_ETCD,
      'kube-apiserver':
        'echo "failed to listen on 127.0.0.1:6443: listen tcp 127.0.0.1:6443: bind: address already in use" >&2; exit 1',
    });
    dirs.push(binDir);
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-cp-test-'));
    dirs.push(dataDir);
    const pids: number[] = [];
    const err = await startControlPlane({
      binDir,
      dataDir,
      log: (msg, f) => {
        const pid = (f as { pid?: number } | undefined)?.pid;
        if (msg === 'component started' && pid) pids.push(pid);
      },
    }).then(
      () => assert.fail('start-up should fail'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ControlPlaneError, String(err));
    assert.equal(err.step, 'kube-apiserver');
    assert.equal(err.logFile, path.join(dataDir, 'logs', 'kube-apiserver.log'));
    assert.match(err.message, /port .* taken/);
    assert.equal(pids.length, 2);
    for (const pid of pids) assert.ok(await waitGone(pid), `process ${pid} still running`);
    // the data directory (with the logs) is kept after a failed start
    assert.ok((await fs.stat(path.join(dataDir, 'logs', 'etcd.log'))).isFile());
  });

  it('times out a component that never becomes ready, killing its whole process group', async () => {
    const binDir = await fakeBinDir({ etcd: 'sleep 600 & echo $! > "$PWD/etcd-child.pid"; wait' });
    dirs.push(binDir);
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-cp-test-'));
    dirs.push(dataDir);
    const t0 = Date.now();
    const err = await startControlPlane({ binDir, dataDir, log: quiet, timeoutMs: 1500 }).then(
      () => assert.fail('start-up should fail'),
      (e: unknown) => e,
    );
    assert.ok(Date.now() - t0 < 15_000);
    assert.ok(err instanceof ControlPlaneError, String(err));
    assert.equal(err.step, 'etcd');
    assert.match(err.message, /timed out after 2s waiting for etcd \/health/);
    const child = Number(await fs.readFile(path.join(dataDir, 'etcd-child.pid'), 'utf8'));
    assert.ok(child > 0);
    assert.ok(await waitGone(child), `grandchild ${child} survived`);
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`leaves no process behind when the test process gets ${signal}`, async () => {
      const binDir = await fakeBinDir({ etcd: 'sleep 600 & echo $! > "$PWD/etcd-child.pid"; wait' });
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-cp-test-'));
      dirs.push(binDir, dataDir);
      const script = path.join(dataDir, 'runner.mjs');
      const index = path.join(root, 'dist/src/sandbox/control-plane/index.js');
      await fs.writeFile(
        script,
        `import { startControlPlane } from ${JSON.stringify(pathToFileURL(index).href)};\n` +
          `await startControlPlane({ binDir: ${JSON.stringify(binDir)}, dataDir: ${JSON.stringify(dataDir)}, log: () => {} });\n`,
      );
      const child = spawn(process.execPath, [script], { stdio: 'ignore' });
      const pidFile = path.join(dataDir, 'etcd-child.pid');
      let grandchild = 0;
      for (let i = 0; i < 100 && !grandchild; i++) {
        await new Promise((r) => setTimeout(r, 100));
        grandchild = Number(await fs.readFile(pidFile, 'utf8').catch(() => '0'));
      }
      assert.ok(grandchild > 0, 'fake etcd did not start');
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, sig) => r(sig)));
      child.kill(signal);
      assert.equal(await exited, signal, 'the signal ends the process as if uncaught');
      assert.ok(await waitGone(grandchild, 15_000), `process ${grandchild} outlived its control plane`);
    });
  }

  it('npm run control-plane explains how to get the binaries when they are missing', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'dist/src/sandbox/control-plane/cli.js')], {
      encoding: 'utf8',
      env: { ...process.env, DRYDOCK_K8S_BIN: '/nonexistent/drydock-bin' },
      timeout: 20_000,
    });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /bash scripts\/k8s-binaries\.sh/);
  });
});
