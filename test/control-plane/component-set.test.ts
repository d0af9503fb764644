import { strict as assert } from 'node:assert';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ComponentSet } from '../../src/sandbox/control-plane/startup.js';

// Stand-in binaries (shell scripts) that write their name to a shared file when terminated,
// so the order in which the set stops them can be read back.
const NAMES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

describe('control plane component set', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-cs-'));
    await fs.mkdir(path.join(dir, 'bin'));
    await fs.mkdir(path.join(dir, 'data', 'logs'), { recursive: true });
    for (const name of NAMES) {
      const script = `#!/bin/sh\ntrap 'echo ${name} >> "${dir}/stopped"; exit 0' TERM\nwhile :; do sleep 0.05; done\n`;
      await fs.writeFile(path.join(dir, 'bin', name), script, { mode: 0o755 });
    }
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it("stops the API server's clients first, then the API server, then etcd, and keeps the data directory unless asked", async () => {
    const logged: string[] = [];
    const dataDir = path.join(dir, 'data');
    const set = new ComponentSet(
      path.join(dir, 'bin'),
      dataDir,
      path.join(dataDir, 'logs'),
      (msg) => void logged.push(msg),
    );
    // started in start-up order: a set that stopped them in that order would fail here
    for (const name of NAMES) set.start(name, []);
    await new Promise((r) => setTimeout(r, 300)); // let the shells install their traps
    assert.equal(set.isStopping, false);
    assert.deepEqual(Object.keys(set.logs), NAMES);
    await set.stopAll(false);
    assert.equal(set.isStopping, true);
    const order = (await fs.readFile(path.join(dir, 'stopped'), 'utf8')).trim().split('\n');
    assert.deepEqual(new Set(order.slice(0, 3)), new Set(['kube-controller-manager', 'kube-scheduler', 'kwok']));
    assert.deepEqual(order.slice(3), ['kube-apiserver', 'etcd']);
    assert.ok(existsSync(dataDir), 'stopAll(false) keeps the data directory');
    assert.equal(logged.filter((m) => m === 'component started').length, 5);
  });

  it('stops once however often it is asked, and removes the data directory', async () => {
    const dataDir = path.join(dir, 'data');
    const set = new ComponentSet(path.join(dir, 'bin'), dataDir, path.join(dataDir, 'logs'), () => undefined);
    set.start('etcd', []);
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all([set.stopAll(true), set.stopAll(false)]);
    assert.equal(existsSync(dataDir), false);
    assert.equal((await fs.readFile(path.join(dir, 'stopped'), 'utf8')).trim(), 'etcd');
  });
});
