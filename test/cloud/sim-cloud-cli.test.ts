import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const drydock = path.join(root, 'bin/drydock.js');

/** Starts `drydock sim-cloud`; resolves with the process and the URL it prints. */
function start(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [drydock, 'sim-cloud', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /sim cloud listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve({ child, url: m[1] });
    });
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`sim-cloud exited with ${code} before listening: ${err}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('drydock sim-cloud (a process)', function () {
  this.timeout(30_000);
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'drydock-simcli-'));
    await writeFile(
      path.join(dir, 'groups.yaml'),
      'bootDelaySeconds: 0.1\nterminateDelaySeconds: 60\ngroups:\n  - id: workers\n    size: 2\n    image: os-v1\n',
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses an invalid groups file with file:line:column, exit 2', async () => {
    await writeFile(path.join(dir, 'bad.yaml'), 'groups:\n  - id: workers\n    image: os-v1\n    size: many\n');
    const r = spawnSync(
      process.execPath,
      [drydock, 'sim-cloud', '--state-dir', dir, '--config', path.join(dir, 'bad.yaml'), '--no-cluster'],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 2);
    assert.ok(r.stderr.includes(`${path.join(dir, 'bad.yaml')}:4:11: /groups/0/size: must be integer`), r.stderr);
  });

  it('refuses to start without a cluster unless told, exit 2', () => {
    const r = spawnSync(
      process.execPath,
      [drydock, 'sim-cloud', '--state-dir', dir, '--config', path.join(dir, 'groups.yaml')],
      {
        encoding: 'utf8',
        env: { ...process.env, DRYDOCK_KUBECONFIG: '' },
      },
    );
    assert.equal(r.status, 2);
    assert.match(r.stderr, /pass --kubeconfig FILE .* or --no-cluster/);
  });

  it('serves the API until SIGTERM, exits 0, and a restart keeps every instance', async () => {
    const args = [
      '--state-dir',
      path.join(dir, 'state'),
      '--config',
      path.join(dir, 'groups.yaml'),
      '--no-cluster',
      '--port',
      '0',
      '--log-level',
      'silent',
    ];
    const first = await start(args);
    const client = new SimHttpProvider(first.url);
    await client.setGroupImage('workers', 'os-v2');
    await client.addCapacity('workers', 2);
    await client.removeInstance('workers', 'i-0001');
    const before = await client.describeGroup('workers');
    assert.equal(await stop(first.child), 0);

    const second = await start(args);
    const after = await new SimHttpProvider(second.url).describeGroup('workers');
    assert.equal(await stop(second.child), 0);
    // Same instances, images and createdAt; only boots that finished meanwhile moved on.
    assert.deepEqual(
      after.instances.map((i) => [i.id, i.image, i.createdAt, i.state === 'pending' ? 'running' : i.state]),
      before.instances.map((i) => [i.id, i.image, i.createdAt, i.state === 'pending' ? 'running' : i.state]),
    );
    assert.equal(after.image, 'os-v2');
    assert.equal(after.targetSize, 3);
  });
});
