/**
 * The project's smoke test of its main job: `drydock sandbox --scenario upgrade` brings up the
 * whole sandbox, pushes an image change, and must exit 0 with the fleet upgraded. What it
 * left in its state directory is then checked here independently: the fleet repository's
 * history and the sim cloud's saved instances.
 *
 * Needs the Kubernetes binaries (`npm test` builds them); DRYDOCK_SKIP_CONTROL_PLANE=1 skips
 * these tests when the binaries are not there, as for every control-plane suite.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveBinDir } from '../../src/sandbox/control-plane/index.js';
import { isAlive } from '../../src/sandbox/layout.js';
import { delay } from '../../src/sandbox/wait.js';
import { tempDir } from '../support/git-server.js';
import { unitOnly } from '../support/unit-only.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = path.join(root, 'bin', 'drydock.js');

function skipWithoutBinaries(ctx: Mocha.Context): void {
  if (unitOnly()) ctx.skip();
  if (process.env.DRYDOCK_SKIP_CONTROL_PLANE !== '1') return;
  try {
    resolveBinDir();
  } catch {
    ctx.skip();
  }
}

interface Run {
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
}

function sandbox(args: readonly string[]): Run {
  const child = spawn(process.execPath, [bin, 'sandbox', '--no-live', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

function git(bare: string, args: readonly string[]): string {
  const r = spawnSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** The scenario's commit (its subject matching `subject`) is main's head, and the newest status reports on it. */
function pushedAndReported(bare: string, subject: RegExp, statusBranch = 'drydock/status'): string {
  const head = git(bare, ['rev-parse', 'refs/heads/main']);
  assert.match(git(bare, ['log', '-1', '--format=%s', head]), subject);
  const source = git(bare, [
    'log',
    '-1',
    '--format=%(trailers:key=Drydock-Source,valueonly)',
    `refs/heads/${statusBranch}`,
  ]);
  assert.ok(source !== '' && head.startsWith(source), `${statusBranch} reports on ${source}, main is ${head}`);
  return head;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 200);
  } catch {
    return '(gone)';
  }
}

/** Every process whose parent chain leads to `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  for (const p of parent.keys()) {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) {
      if (q === pid) {
        out.push(p);
        break;
      }
    }
  }
  return out.sort((a, b) => a - b);
}

/** Stops a sandbox a failed or timed-out test left running, the way a person would: Ctrl-C, then kill. */
async function stop(run: Run | undefined): Promise<void> {
  if (run === undefined || run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGINT');
  const exited = await Promise.race([run.exited.then(() => true), delay(30_000).then(() => false)]);
  if (!exited) {
    run.child.kill('SIGKILL');
    await run.exited;
  }
}

describe('drydock sandbox (end to end)', function () {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let current: Run | undefined;
  beforeEach(function () {
    skipWithoutBinaries(this);
    tmp = tempDir('drydock-sandbox-');
  });
  afterEach(async function () {
    this.timeout(60_000);
    await stop(current);
    current = undefined;
    tmp?.remove();
    tmp = undefined;
  });

  const tmpDir = (): string => {
    assert.ok(tmp);
    return tmp.dir;
  };

  it('--scenario upgrade rolls every node onto the new image and exits 0', async function () {
    this.timeout(20 * 60_000);
    const stateDir = path.join(tmpDir(), 'state');
    const run = (current = sandbox(['--scenario', 'upgrade', '--state-dir', stateDir, '--timeout', '15m']));
    const code = await run.exited;
    assert.equal(code, 0, run.output());
    assert.match(run.output(), /upgrade complete in \S+: \d+ nodes replaced in \d+ waves/);

    // The fleet repository: the sandbox's change is the tracked head, and the newest status reports on it.
    const bare = path.join(stateDir, 'git', 'fleet.git');
    const head = pushedAndReported(bare, /^Upgrade node images: /);

    // The sim cloud's saved state: every instance of every group runs the group's (new) image.
    const state = JSON.parse(readFileSync(path.join(stateDir, 'cloud', 'sim-cloud-state.json'), 'utf8')) as {
      groups: { id: string; image: string; instances: { id: string; image: string; state: string }[] }[];
    };
    const pushed = new Set(
      git(bare, ['diff', `${head}~1`, head])
        .split('\n')
        .map((l) => /^\+\s*image:\s*(\S+)/.exec(l)?.[1])
        .filter((i): i is string => i !== undefined),
    );
    assert.ok(pushed.size > 0, 'the upgrade commit changes no image');
    for (const group of state.groups) {
      assert.ok(
        pushed.has(group.image),
        `group ${group.id} runs ${group.image}, not an image the upgrade pushed (${[...pushed].join(', ')})`,
      );
      assert.ok(group.instances.length > 0);
      for (const i of group.instances) {
        assert.equal(i.image, group.image, `${group.id}/${i.id}`);
        assert.equal(i.state, 'running', `${group.id}/${i.id}`);
      }
    }
  });

  it('--scenario nodeop runs a Job and one reboot on every worker and exits 0', async function () {
    this.timeout(20 * 60_000);
    const stateDir = path.join(tmpDir(), 'state');
    const run = (current = sandbox(['--scenario', 'nodeop', '--state-dir', stateDir, '--timeout', '15m']));
    const code = await run.exited;
    assert.equal(code, 0, run.output());
    const said =
      /nodeop complete in \S+: NodeOp\/sandbox-reboot ran its Job once and rebooted once on each of (\d+) workers, at most (\d+) at a time/.exec(
        run.output(),
      );
    assert.ok(said, run.output());
    // The worker group of the sim cloud's saved state: the NodeOp covered every one of its instances.
    const state = JSON.parse(readFileSync(path.join(stateDir, 'cloud', 'sim-cloud-state.json'), 'utf8')) as {
      groups: { id: string; instances: { id: string }[] }[];
    };
    const workers = state.groups.find((g) => g.id === 'workers')?.instances.length ?? 0;
    assert.ok(workers > 2, `only ${workers} workers`);
    assert.equal(Number(said[1]), workers);
    const inFlight = Number(said[2]);
    assert.ok(inFlight >= 1 && inFlight <= 2, `${inFlight} in flight at most; the NodeOp's concurrency is 2`);

    // The fleet repository: the NodeOp is the tracked head, and the newest status reports it Complete on it.
    const bare = path.join(stateDir, 'git', 'fleet.git');
    pushedAndReported(bare, /^Run NodeOp\/sandbox-reboot /);
    const status = git(bare, ['show', 'refs/heads/drydock/status:status/NodeOp/sandbox-reboot.yaml']);
    assert.match(status, /phase: Complete/, status);
    assert.equal((status.match(/phase: Done/g) ?? []).length, workers, status);
  });

  it('--scenario bottlerocket updates Bottlerocket hosts in place through their update API and exits 0', async function () {
    this.timeout(20 * 60_000);
    const stateDir = path.join(tmpDir(), 'state');
    const run = (current = sandbox(['--scenario', 'bottlerocket', '--state-dir', stateDir, '--timeout', '15m']));
    const code = await run.exited;
    assert.equal(code, 0, run.output());
    const said =
      /bottlerocket complete in \S+: NodeImage\/sandbox-bottlerocket updated (\d+) Bottlerocket hosts in place from 1\.19\.2 to 1\.20\.3, one update Job and one reboot each, every host reporting 1\.20\.3/.exec(
        run.output(),
      );
    assert.ok(said, run.output());
    // The sim cloud's saved state: the Bottlerocket group, which no ScalingGroup names, beside the
    // repository's groups, every host of it the scenario's (and still the instance it was: in place).
    const state = JSON.parse(readFileSync(path.join(stateDir, 'cloud', 'sim-cloud-state.json'), 'utf8')) as {
      groups: { id: string; nextInstance: number; instances: { id: string; state: string }[] }[];
    };
    const group = state.groups.find((g) => g.id === 'bottlerocket');
    assert.ok(group, `no bottlerocket group in ${state.groups.map((g) => g.id).join(', ')}`);
    assert.ok(group.instances.length >= 2, `only ${group.instances.length} Bottlerocket hosts`);
    assert.equal(Number(said[1]), group.instances.length);
    assert.equal(group.nextInstance - 1, group.instances.length, 'no host was replaced');
    for (const i of group.instances) assert.equal(i.state, 'running', i.id);
    assert.ok(state.groups.some((g) => g.id === 'workers'));

    // The fleet repository: the NodeImage is the tracked head, and the newest status reports it Complete on it.
    const bare = path.join(stateDir, 'git', 'fleet.git');
    pushedAndReported(bare, /^Update the Bottlerocket hosts in place to 1\.20\.3$/);
    const status = git(bare, ['show', 'refs/heads/drydock/status:status/NodeImage/sandbox-bottlerocket.yaml']);
    assert.match(status, /phase: Complete/, status);
    assert.equal((status.match(/phase: Done/g) ?? []).length, group.instances.length, status);
  });

  it('--scenario pr plans a branch, merges it, approves after the canary with drydock approve, and exits 0', async function () {
    this.timeout(20 * 60_000);
    const stateDir = path.join(tmpDir(), 'state');
    const run = (current = sandbox(['--scenario', 'pr', '--state-dir', stateDir, '--timeout', '15m']));
    const code = await run.exited;
    assert.equal(code, 0, run.output());
    const out = run.output();
    for (const n of [1, 2, 3, 4, 5, 6]) assert.match(out, new RegExp(`^scenario pr: ${n}/6 `, 'm'), out);
    // The comment, as printed: the change in words and the file to merge.
    assert.match(out, /^ {4}<!-- drydock-plan -->$/m, out);
    assert.match(
      out,
      /NodeImage\/worker\*\* \(`images\/worker\.yaml:\d+`\): image \S+ → (\S+); .*6 nodes in 1 group/,
      out,
    );
    assert.match(out, /^pr complete in \S+: NodeImage\/worker \S+ → \S+ on 6 nodes/m, out);

    // The fleet repository: main's head is the approval, its parent the merged branch.
    const bare = path.join(stateDir, 'git', 'fleet.git');
    const head = pushedAndReported(bare, /^Approve NodeImage\/worker /);
    assert.match(
      git(bare, ['log', '-1', '--format=%s', `${head}~1`]),
      /^Upgrade worker to \S+, approved after its canary$/,
    );
    assert.equal(git(bare, ['rev-parse', `${head}~1`]), git(bare, ['rev-parse', 'refs/heads/sandbox-pr']));
    assert.deepEqual(git(bare, ['diff', '--name-only', `${head}~1`, head]).split('\n'), [
      'approvals/worker-after-canary.yaml',
    ]);
    const image = /^\+\s*image:\s*(\S+)/m.exec(git(bare, ['diff', `${head}~2`, `${head}~1`]))?.[1];
    assert.ok(image !== undefined, 'the branch changes no image');
    assert.match(git(bare, ['show', `${head}:approvals/worker-after-canary.yaml`]), new RegExp(`image: ${image}\\n`));

    // The status branch: Complete, with the approval's commit as its approver's.
    const status = git(bare, ['show', 'refs/heads/drydock/status:status/NodeImage/worker.yaml']);
    assert.match(status, /phase: Complete/, status);
    assert.match(status, new RegExp(`stage: afterCanary[\\s\\S]*commit: "?${head.slice(0, 7)}`), status);

    // The sim cloud's saved state: every worker instance on the branch's image.
    const state = JSON.parse(readFileSync(path.join(stateDir, 'cloud', 'sim-cloud-state.json'), 'utf8')) as {
      groups: { id: string; image: string; instances: { image: string; state: string }[] }[];
    };
    const workers = state.groups.find((g) => g.id === 'workers');
    assert.equal(workers?.image, image);
    assert.equal(workers.instances.length, 6);
    for (const i of workers.instances) assert.deepEqual([i.image, i.state], [image, 'running']);
  });

  it('--scenario fleet rolls a shared image change through cluster a, then b after the soak, and exits 0', async function () {
    this.timeout(10 * 60_000);
    const stateDir = path.join(tmpDir(), 'state');
    const run = (current = sandbox(['--scenario', 'fleet', '--state-dir', stateDir, '--timeout', '8m']));
    const code = await run.exited;
    assert.equal(code, 0, run.output());
    const said =
      /^fleet complete in \S+: NodeImage\/worker \S+ → (\S+) rolled on cluster a \(2 nodes\), then on cluster b \(2 nodes\), which started \S+ after a reported it Complete \(soak 10s; commit [0-9a-f]{7}, revision ([0-9a-f]{16})\)$/m.exec(
        run.output(),
      );
    assert.ok(said, run.output());
    const [, image, revision] = said;
    assert.match(
      run.output(),
      /^ {2}cluster b waited: fleet: waits for cluster a \(stage first\) to report NodeImage\/worker revision [0-9a-f]{16} Complete$/m,
    );
    assert.match(
      run.output(),
      /^ {2}cluster b waited: fleet: stage first soaks NodeImage\/worker revision [0-9a-f]{16} until \S+$/m,
    );

    // The fleet repository: the image change is main's head, and each cluster's own branch reports it Complete.
    const bare = path.join(stateDir, 'git', 'fleet.git');
    const file = 'status/NodeImage/worker.yaml';
    const reports = (cluster: string): { at: number; phase: string; revision: string; total: number }[] =>
      git(bare, ['log', '--reverse', '--format=%H %ct', `refs/heads/drydock/status-${cluster}`])
        .split('\n')
        .map((line) => {
          const [oid, ct] = line.split(' ');
          const r = spawnSync('git', ['--git-dir', bare, 'show', `${oid ?? ''}:${file}`], { encoding: 'utf8' });
          const doc = r.status === 0 ? r.stdout : '';
          return {
            at: Number(ct) * 1000,
            phase: /^phase: (\S+)$/m.exec(doc)?.[1] ?? '',
            revision: /^revision: "?([0-9a-f]+)"?$/m.exec(doc)?.[1] ?? '',
            total: Number(/^ {2}total: (\d+)$/m.exec(doc)?.[1] ?? 0),
          };
        });
    for (const cluster of ['a', 'b']) {
      pushedAndReported(bare, /^Upgrade node images: worker /, `drydock/status-${cluster}`);
      assert.deepEqual(reports(cluster).at(-1), { ...reports(cluster).at(-1), phase: 'Complete', revision });
    }
    // b's own branch: Waiting on the change, then at work no sooner than the soak (10 s) after a's
    // first Complete. (The commit that records applying the change may report it before any round
    // planned it, counting no node: that one is no start.)
    const aComplete = reports('a').find((r) => r.revision === revision && r.phase === 'Complete');
    const bOwn = reports('b').filter((r) => r.revision === revision && r.total > 0);
    const bStarted = bOwn.find((r) => r.phase !== 'Waiting');
    assert.ok(aComplete && bStarted, JSON.stringify(bOwn));
    assert.equal(bOwn[0]?.phase, 'Waiting', JSON.stringify(bOwn));
    assert.ok(bStarted.at >= aComplete.at + 10_000, `b started ${bStarted.at - aComplete.at} ms after a's Complete`);

    // Each cluster's own sim cloud: every instance on the new image. A replaced one may still be
    // terminating when the scenario exits (the sim cloud's terminate delay), as in a real cloud.
    for (const cluster of ['a', 'b']) {
      const state = JSON.parse(readFileSync(path.join(stateDir, cluster, 'cloud', 'sim-cloud-state.json'), 'utf8')) as {
        groups: { id: string; image: string; instances: { image: string; state: string }[] }[];
      };
      assert.deepEqual(
        state.groups.map((g) => [
          g.id,
          g.image,
          g.instances.filter((i) => i.state !== 'terminating').map((i) => [i.image, i.state]),
        ]),
        [
          [
            'workers',
            image,
            [
              [image, 'running'],
              [image, 'running'],
            ],
          ],
        ],
        cluster,
      );
    }
  });

  it('every command it prints works as printed; Ctrl-C through a closed pipe still stops everything and cleans up', async function () {
    this.timeout(10 * 60_000);
    const stateDir = path.join(tmpDir(), 'state');
    // Like `drydock sandbox | tee log`: stdout is a pipe whose reader goes away before Ctrl-C.
    const child = spawn(process.execPath, [bin, 'sandbox', '--no-live', '--state-dir', stateDir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const run: Run = (current = { child, output: () => out + err, exited });
    const until = async (what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!(await ok())) {
        assert.ok(Date.now() < deadline, `timed out waiting for ${what}:\n${run.output()}`);
        assert.equal(child.exitCode, null, `the sandbox exited early:\n${run.output()}`);
        await delay(250);
      }
    };
    await until('the how-to block', () => /^Stop: Ctrl-C/m.test(out), 4 * 60_000);
    await until(
      "drydock's first status commit",
      () => /git in sync: drydock\/status reports on main/.test(out),
      2 * 60_000,
    );

    // The how-to block, run line by line in one shell as a person pastes it, in a fresh directory.
    const block = /In another terminal:\n((?: {2}.*\n)+)/.exec(out)?.[1] ?? '';
    const lines = block
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.slice(2));
    assert.ok(
      lines.some((l) => l.startsWith('drydock plan ')),
      block,
    );
    const edit = /^# change spec\.image in (\S+), then/;
    const script = lines
      .map((l) => {
        const m = edit.exec(l);
        // The one step left to the person: the edit itself.
        const line = m === null ? l : `sed -i 's|^  image: .*|  image: registry.example/node-os:v1.0.1|' ${m[1] ?? ''}`;
        return `${line}\necho "=== exit $? of: ${line.replace(/["$`\\]/g, '.')}"`;
      })
      .join('\n');
    const person = tempDir('drydock-person-');
    try {
      const r = spawnSync('bash', ['-c', script], {
        cwd: person.dir,
        encoding: 'utf8',
        timeout: 120_000,
        env: {
          ...process.env,
          HOME: person.dir,
          GIT_AUTHOR_NAME: 'Ada',
          GIT_AUTHOR_EMAIL: 'ada@example.com',
          GIT_COMMITTER_NAME: 'Ada',
          GIT_COMMITTER_EMAIL: 'ada@example.com',
          GIT_TERMINAL_PROMPT: '0',
        },
      });
      const said = `${r.stdout}\n${r.stderr}`;
      const exits = [...r.stdout.matchAll(/^=== exit (\d+) of: (.*)$/gm)].map((m) => [m[2], m[1]]);
      assert.deepEqual(
        exits.filter(([, code]) => code !== '0'),
        [],
        said,
      );
      assert.equal(exits.length, lines.length, said);
      assert.match(r.stdout, /^NAME\s.*\sOS-IMAGE\s.*\sPHASE$/m, said);
      // The image column reads as the screen does, not the label-safe form.
      assert.match(r.stdout, /^workers-\S+\s.*\sregistry\.example\/node-os:v1\.0\.0\s/m, said);
      // The pull request's plan, live: the change in words, with the nodes, waves and ETA.
      assert.match(
        r.stdout,
        /^drydock plan for cluster sandbox: next-image \([0-9a-f]{7}\) against main \([0-9a-f]{7}\)/m,
        said,
      );
      assert.match(
        r.stdout,
        /^ {2}NodeImage worker: image \S+ → registry\.example\/node-os:v1\.0\.1; \d+ nodes in 1 group will be replaced in \d+ waves, canary first; ETA \d+ min \(.+ per node, .+\)$/m,
        said,
      );
      assert.doesNotMatch(r.stdout, /Live part skipped/, said);
      // drydock status on the clone: every example spec is acted on.
      assert.doesNotMatch(r.stdout, /\| NotSupported \|/, said);
      assert.match(r.stdout, /\| \[NodeImage\/worker\]\([^)]*\) \| (?!NotSupported)\w+ \|/, said);
      // The push starts a rollout, and kubectl -L shows the phase drydock gives the first node.
      const kubectl = lines.find((l) => l.startsWith('kubectl get nodes')) ?? '';
      await until(
        'a drydock.dev/phase in kubectl get nodes -L',
        () => {
          const k = spawnSync(
            'bash',
            ['-c', `${lines.filter((l) => l.startsWith('export ')).join('; ')}; ${kubectl} --no-headers`],
            { encoding: 'utf8' },
          );
          return /\s(Pending|Cordoned|Draining|Done)\s*$/m.test(k.stdout);
        },
        3 * 60_000,
      );
    } finally {
      person.remove();
    }

    const started = descendants(child.pid ?? -1);
    // etcd, kube-apiserver, controller manager, scheduler, KWOK, the sim cloud, drydock.
    assert.ok(started.length >= 7, `only ${started.length} processes started`);
    child.stdout.destroy();
    await delay(200);
    child.kill('SIGINT');
    assert.equal(await exited, 0, run.output());
    // The last words went to stderr, stdout being gone; nothing was left behind.
    assert.match(err, /^sandbox stopped; run it again to resume/m, run.output());
    assert.equal(existsSync(path.join(stateDir, 'sandbox.lock')), false, 'sandbox.lock left behind');
    assert.equal(existsSync(path.join(stateDir, 'pids.json')), false, 'pids.json left behind');
    // The watchdogs that guard against a SIGKILLed sandbox notice within a second and end too.
    for (let i = 0; i < 30 && started.some(isAlive); i++) await delay(100);
    const left = started.filter(isAlive).map((pid) => `${pid} ${commandLine(pid)}`);
    assert.deepEqual(left, [], 'processes outlived the sandbox');
  });
});
