/**
 * The docs' commands, run as the pages write them, against the real thing: `npm run control-plane`
 * (started, used, stopped with Ctrl-C) from docs/contributing/testing.md, the sim cloud's command
 * with its groups.yaml from docs/reference/sim-cloud.md, the kustomize walkthrough from
 * docs/guides/deploy.md, `drydock run` and `drydock plan` from docs/reference/service.md,
 * `drydock status` from docs/concepts/status-branch.md, and the CI kubeconfig lines from
 * docs/guides/ci.md. Each command is read from the page's fenced blocks; only the pages'
 * placeholders (the example URL, `~/.kube/config`, the example ports, `…` secrets) are replaced
 * with the running ones, and a placeholder a page no longer holds fails the test, so the test
 * follows the docs. test/docs/registry.ts lists which test covers each block.
 *
 * The sandbox's own how-to block is run in test/sandbox/scenario.test.ts (and compared with
 * docs/getting-started.md in outcome.test.ts); `drydock validate` in docs.test.ts.
 */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { resolveBinDir } from '../../src/sandbox/control-plane/index.js';
import { freePorts } from '../../src/sandbox/control-plane/processes.js';
import { isAlive } from '../../src/sandbox/layout.js';
import { delay } from '../../src/sandbox/wait.js';
import {
  git,
  gitEnv,
  startTestGitServer,
  tempDir,
  TEST_USER,
  withUser,
  type GitServer,
} from '../support/git-server.js';
import { block, command, commands, fill, root } from './blocks.js';

const TESTING = 'docs/contributing/testing.md';
const SIM_CLOUD = 'docs/reference/sim-cloud.md';
const DEPLOY = 'docs/guides/deploy.md';
const SERVICE = 'docs/reference/service.md';
const STATUS = 'docs/concepts/status-branch.md';
const CI = 'docs/guides/ci.md';

interface Running {
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
}

/** A shell command in its own process group, as a terminal runs it (Ctrl-C reaches every process). */
function start(line: string, env: NodeJS.ProcessEnv): Running {
  const child = spawn('bash', ['-c', line], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  // 'close': every process holding its output has ended (npm's script too, not only npm).
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number, r?: Running): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}\n${r?.output() ?? ''}`);
    if (r !== undefined) assert.equal(r.child.exitCode, null, `exited early:\n${r.output()}`);
    await delay(250);
  }
}

/** Signals the process group; escalates to SIGKILL if it does not end in time. How it ended: an exit code or a signal. */
async function stop(r: Running | undefined, signal: NodeJS.Signals): Promise<number | string | undefined> {
  if (r === undefined || r.child.pid === undefined) return undefined;
  const ended = (): number | string | undefined => r.child.exitCode ?? r.child.signalCode ?? undefined;
  if (ended() !== undefined) return ended();
  process.kill(-r.child.pid, signal);
  const late = await Promise.race([r.exited.then(() => false), delay(60_000).then(() => true)]);
  if (!late) return ended();
  process.kill(-r.child.pid, 'SIGKILL');
  await r.exited;
  return 'SIGKILL';
}

/** Runs a command to its end; asynchronous, since the Git server answers from this process. */
async function shell(
  line: string,
  env: NodeJS.ProcessEnv,
  cwd = root,
): Promise<{ status: number | null; out: string }> {
  const child = spawn('bash', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { status, out };
}

describe('the docs, run as written', function () {
  this.timeout(10 * 60_000);
  const tmp = { dir: '', remove: (): void => undefined };
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  let controlPlane: Running | undefined;
  let simCloud: Running | undefined;
  let service: Running | undefined;
  let server: GitServer | undefined;
  let kubeconfig = '';
  let cloudUrl = '';
  let repoUrl = '';
  let clone = '';

  before(function () {
    try {
      // Where `npm test` (scripts/k8s-binaries.sh) put the binaries, whatever XDG_CACHE_HOME says below.
      env.DRYDOCK_K8S_BIN = resolveBinDir();
    } catch (err) {
      if (process.env.DRYDOCK_SKIP_CONTROL_PLANE === '1') this.skip();
      throw err;
    }
    Object.assign(tmp, tempDir('drydock-docs-'));
    clone = path.join(tmp.dir, 'fleet');
    env.XDG_CACHE_HOME = path.join(tmp.dir, 'cache');
  });
  after(async () => {
    await stop(service, 'SIGTERM');
    await stop(simCloud, 'SIGTERM');
    await stop(controlPlane, 'SIGINT');
    await server?.stop();
    tmp.remove();
  });

  const kubectl = (args: string, extra: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; out: string }> =>
    shell(`kubectl ${args}`, { ...env, ...extra });

  it(`${TESTING}: npm run control-plane -- --nodes 3 prints the two lines shown, and kubectl sees the nodes`, async () => {
    const text = block(TESTING, 'npm run control-plane');
    controlPlane = start(command(text, 'npm run control-plane -- --nodes'), env);
    await until(
      'the export lines',
      () => /^export PATH=.*\n/m.test(controlPlane?.output() ?? ''),
      5 * 60_000,
      controlPlane,
    );
    const printed = controlPlane.output().match(/^export \w+=.*$/gm) ?? [];
    // The page shows them as comments, with … and ~ where paths vary.
    const shown = text.match(/^# export \w+=\S+/gm) ?? [];
    assert.equal(printed.length, shown.length, controlPlane.output());
    shown.forEach((s, i) => {
      const pattern = s
        .slice(2)
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/…|~\/\\\.cache\/drydock\/k8s-[^/]+\/bin/g, '.+');
      assert.match(printed[i] ?? '', new RegExp(`^${pattern}$`));
    });
    kubeconfig = /^export KUBECONFIG=(.*)$/m.exec(controlPlane.output())?.[1] ?? '';
    const bin = /^export PATH=(.*):\$PATH$/m.exec(controlPlane.output())?.[1] ?? '';
    env.KUBECONFIG = kubeconfig;
    env.PATH = `${bin}:${env.PATH ?? ''}`;
    await until(
      'three Ready KWOK nodes',
      async () => ((await kubectl('get nodes --no-headers')).out.match(/^kwok-node-\d\s+Ready\s/gm) ?? []).length === 3,
      60_000,
    );
  });

  it(`${SIM_CLOUD}: the sim cloud's command, with the page's groups.yaml, joins its group as nodes`, async () => {
    const groups = block(SIM_CLOUD, '# groups.yaml', 'yaml');
    writeFileSync(path.join(tmp.dir, 'groups.yaml'), groups);
    const line = fill(command(block(SIM_CLOUD, 'npx drydock sim-cloud'), 'npx drydock sim-cloud'), [
      ['.sim', path.join(tmp.dir, 'sim')],
      ['groups.yaml', path.join(tmp.dir, 'groups.yaml')],
      ['admin.kubeconfig', kubeconfig],
      ['7070', '0'],
    ]);
    simCloud = start(line, env);
    await until(
      'the sim cloud',
      () => /sim cloud listening on http:\/\/\S+/.test(simCloud?.output() ?? ''),
      60_000,
      simCloud,
    );
    cloudUrl = /sim cloud listening on (http:\/\/\S+)/.exec(simCloud.output())?.[1] ?? '';
    const config = parse(groups) as { groups: { id: string; size: number }[] };
    const group = config.groups[0]!;
    await until(
      `${group.size} nodes of group ${group.id}`,
      async () =>
        ((await kubectl('get nodes --no-headers')).out.match(new RegExp(`^${group.id}-i-\\d+\\s`, 'gm')) ?? [])
          .length === group.size,
      60_000,
      simCloud,
    );
  });

  it(`${DEPLOY}: the walkthrough's overlay, applied with the Git Secret, runs the image it names`, async () => {
    // The overlay beside deploy/, as the page has it, in a directory of its own here.
    const overlay = path.join(tmp.dir, 'my-cluster');
    mkdirSync(overlay);
    const kustomization = block(DEPLOY, '# my-cluster/kustomization.yaml', 'yaml');
    writeFileSync(
      path.join(overlay, 'kustomization.yaml'),
      fill(kustomization, [['- ../deploy', `- ${path.relative(overlay, path.join(root, 'deploy'))}`]]),
    );
    const image = parse(kustomization) as { images: { newName: string; newTag: string }[] };
    const lines = commands(block(DEPLOY, 'kubectl apply -k my-cluster/'));
    assert.equal(lines.length, 3, lines.join('\n'));
    for (const l of lines) {
      const line = fill(l, l.startsWith('kubectl apply') ? [['my-cluster/', overlay]] : []);
      const r = await shell(line, env, tmp.dir);
      assert.equal(r.status, 0, `${line}\n${r.out}`);
      if (l.startsWith('kubectl apply')) assert.match(r.out, /serviceaccount\/drydock-plan created/);
    }
    const ran = await kubectl(
      "-n drydock-system get deployment drydock -o jsonpath='{.spec.template.spec.containers[0].image}'",
    );
    assert.equal(ran.out, `${image.images[0]?.newName ?? ''}:${image.images[0]?.newTag ?? ''}`);
    const secret = await kubectl('-n drydock-system get secret drydock-git -o jsonpath={.data}');
    assert.match(secret.out, /DRYDOCK_GIT_TOKEN/, secret.out);
  });

  it(`${SERVICE}: drydock plan --format markdown plans a clone of the fleet repository against the cluster and cloud`, async () => {
    server = await startTestGitServer();
    server.createBareRepo('fleet.git');
    repoUrl = server.repoUrl('fleet.git');
    const group = (parse(block(SIM_CLOUD, '# groups.yaml', 'yaml')) as { groups: { id: string; image: string }[] })
      .groups[0]!;
    mkdirSync(path.join(clone, 'specs'), { recursive: true });
    writeFileSync(
      path.join(clone, 'drydock.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: docs\npaths: [specs]\n',
    );
    writeFileSync(
      path.join(clone, 'specs', 'worker.yaml'),
      [
        'apiVersion: drydock.dev/v1alpha1\nkind: ScalingGroup\nmetadata: {name: workers}\n',
        `spec: {provider: sim, groupId: ${group.id}, nodeImage: worker, role: worker}\n---\n`,
        'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: worker}\n',
        `spec: {image: ${group.image}-next}\n`,
      ].join(''),
    );
    await git(tmp.dir, ['init', '-q', '-b', 'main', clone]);
    await git(clone, ['add', '.']);
    await git(clone, ['commit', '-qm', 'fleet']);
    await git(clone, ['remote', 'add', 'origin', withUser(repoUrl)]);
    await git(clone, ['push', '-q', '-u', 'origin', 'main']);

    const line = fill(command(block(SERVICE, 'npx drydock run'), 'npx drydock plan'), [
      ['../fleet', clone],
      ['~/.kube/config', kubeconfig],
      ['http://127.0.0.1:7070', cloudUrl],
    ]);
    // The sim cloud page's groups.yaml throttles 2 % of cloud calls: a plan that met one says so, and is run again.
    let r = await shell(line, env);
    for (let i = 0; i < 5 && r.status === 0 && /throttled|transient/i.test(r.out); i++) r = await shell(line, env);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /^### drydock plan\b/m, r.out);
    assert.match(r.out, /^\| NodeImage\/worker \|/m, r.out);
    assert.match(r.out, new RegExp(`${group.image}-next`), r.out);
  });

  it(`${SERVICE}: drydock run, as the page starts it, serves its endpoints, writes the status branch and stops on SIGTERM`, async () => {
    const [listen] = await freePorts(1);
    const line = fill(command(block(SERVICE, 'npx drydock run'), 'DRYDOCK_GIT_USERNAME='), [
      ['DRYDOCK_GIT_USERNAME=alice', `DRYDOCK_GIT_USERNAME=${TEST_USER.username}`],
      ['DRYDOCK_GIT_PASSWORD=…', `DRYDOCK_GIT_PASSWORD=${TEST_USER.password}`],
      ['DRYDOCK_WEBHOOK_SECRET=…', 'DRYDOCK_WEBHOOK_SECRET=docs-secret'],
      ['https://git.example.com/platform/fleet.git', repoUrl],
      ['~/.kube/config', kubeconfig],
      ['http://127.0.0.1:7070', cloudUrl],
      ['--listen :8080', `--listen 127.0.0.1:${String(listen)}`],
    ]);
    service = start(line, env);
    const ok = async (p: string): Promise<boolean> => {
      try {
        return (await fetch(`http://127.0.0.1:${String(listen)}${p}`)).ok;
      } catch {
        return false;
      }
    };
    await until('/healthz and /readyz', async () => (await ok('/healthz')) && (await ok('/readyz')), 90_000, service);
    await until(
      'the status branch',
      async () => (await git(clone, ['ls-remote', 'origin', 'refs/heads/drydock/status'])) !== '',
      90_000,
      service,
    );
    await until(
      'an action on the new image',
      () => /"msg":"action applied"/.test(service?.output() ?? ''),
      60_000,
      service,
    );
    // npm re-raises the signal once drydock has exited; drydock's own last word is that it stopped.
    const ended = await stop(service, 'SIGTERM');
    assert.ok(ended === 0 || ended === 'SIGTERM', `ended with ${String(ended)}\n${service.output()}`);
    assert.match(service.output(), /"msg":"stopped"/, service.output());
    assert.doesNotMatch(service.output(), new RegExp(TEST_USER.password), 'the password reached the log');
  });

  it(`${STATUS}: drydock status, in its forms, and git log read the status branch`, async () => {
    const text = block(STATUS, 'npx drydock status --repo');
    const [url, json, watch] = commands(text).filter((c) => c.startsWith('npx drydock status'));
    const status = await shell(fill(url ?? '', [['https://git.example.com/fleet.git', withUser(repoUrl)]]), env);
    assert.equal(status.status, 0, status.out);
    assert.match(status.out, /\| \[NodeImage\/worker\]\([^)]*\) \| \w+ \|/, status.out);
    assert.doesNotMatch(status.out, new RegExp(TEST_USER.password));
    await git(clone, ['fetch', '-q', 'origin'], gitEnv(1));
    const asJson = await shell(fill(json ?? '', [['../fleet', clone]]), env);
    assert.equal(asJson.status, 0, asJson.out);
    assert.ok(JSON.stringify(JSON.parse(asJson.out)).includes('NodeImage'), asJson.out);
    const log = await shell(command(text, 'git log'), env, clone);
    assert.equal(log.status, 0, log.out);
    assert.match(log.out, /^[0-9a-f]{7,} status: /m, log.out);
    // --watch prints the table, then follows: stopped once it has printed.
    const watching = start(fill(watch ?? '', [['https://git.example.com/fleet.git', withUser(repoUrl)]]), env);
    await until('the watched table', () => /\| \[NodeImage\/worker\]/.test(watching.output()), 60_000, watching);
    await stop(watching, 'SIGTERM');
  });

  it(`${CI}: the kubeconfig lines make a kubeconfig drydock plan reads the cluster with, and nothing more`, async () => {
    const ci = path.join(tmp.dir, 'ci');
    mkdirSync(ci);
    const lines = commands(block(CI, 'create token drydock-plan'));
    for (const l of lines) {
      const r = await shell(l, env, ci);
      assert.equal(r.status, 0, `${l}\n${r.out}`);
    }
    const asCi = { ...env, KUBECONFIG: path.join(ci, 'ci.kubeconfig') };
    assert.match((await kubectl('auth can-i list pods -A', asCi)).out, /^yes$/m);
    assert.match((await kubectl('auth can-i patch nodes', asCi)).out, /^no$/m);
    const plan = fill(command(block(SERVICE, 'npx drydock run'), 'npx drydock plan'), [
      ['../fleet', clone],
      ['~/.kube/config', path.join(ci, 'ci.kubeconfig')],
      ['http://127.0.0.1:7070', cloudUrl],
    ]);
    const r = await shell(plan, env);
    assert.ok(r.status === 0 || r.status === 1, r.out);
    assert.doesNotMatch(r.out, /forbidden|live part skipped/i, r.out);
  });

  it('Ctrl-C stops npm run control-plane cleanly and removes its data directory', async () => {
    await stop(simCloud, 'SIGTERM');
    assert.ok(existsSync(kubeconfig));
    const output = controlPlane?.output() ?? '';
    const components = [...output.matchAll(/component started \{"component":"([\w-]+)","pid":(\d+)/g)];
    assert.equal(components.length, 5, output);
    // npm re-raises the Ctrl-C it was sent once its script has exited, as a shell expects.
    const ended = await stop(controlPlane, 'SIGINT');
    assert.ok(ended === 0 || ended === 'SIGINT', `ended with ${String(ended)}\n${output}`);
    assert.match(controlPlane?.output() ?? '', /control-plane: SIGINT: stopping/);
    for (const [, name, pid] of components) assert.equal(isAlive(Number(pid)), false, `${name ?? ''} outlived it`);
    assert.equal(existsSync(path.dirname(kubeconfig)), false, 'the data directory was left behind');
  });
});
