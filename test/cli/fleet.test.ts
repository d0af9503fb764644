/**
 * A fleet repository as a platform team keeps it, in a real Git repository: shared specs, a
 * folder per cluster, fleet/fleet.yaml with two stages. validate checks every cluster's view,
 * status --fleet reads every cluster's status branch, plan --base --head shows the stages.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import type { SpecStatus } from '../../src/plan/types.js';
import { specStatus } from '../support/spec-status.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const FLEET = `apiVersion: drydock.dev/v1alpha1
kind: Fleet
metadata: {name: prod}
spec:
  staleAfter: 30m
  clusters:
    - {name: dev}
    - {name: eu, labels: {tier: prod}}
    - {name: us, labels: {tier: prod}}
  stages:
    - {name: canary, clusters: [dev], soak: 1h, approval: true}
    - {name: main, selector: {tier: prod}, tolerate: 1}
`;

const group = (cluster: string): string => `apiVersion: drydock.dev/v1alpha1
kind: ScalingGroup
metadata: {name: workers}
spec:
  provider: sim
  groupId: ${cluster}-workers
  nodeImage: worker
  role: worker
`;

const image = (tag: string): string => `apiVersion: drydock.dev/v1alpha1
kind: NodeImage
metadata: {name: worker}
spec:
  image: registry.example/node-os:${tag}
  strategy: replace
`;

describe('drydock with a fleet repository', () => {
  let repo: string;
  const git = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    }).trim();
  const drydock = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), ...args], {
      encoding: 'utf8',
      cwd: repo,
      env: { ...process.env, KUBECONFIG: path.join(repo, 'absent') },
    });
  const write = (file: string, text: string): void => {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  };

  /** A status branch as drydock writes it, committed at `date`. */
  function statusBranch(cluster: string, date: string, specs: SpecStatus[]): void {
    const env = { GIT_COMMITTER_DATE: date, GIT_AUTHOR_DATE: date };
    git({}, 'checkout', '-q', '--orphan', `drydock/status-${cluster}`);
    git({}, 'rm', '-rqf', '.');
    for (const [file, text] of renderStatusDocs({ cluster, specs })) write(file, text);
    git(env, 'add', '-A');
    git(env, 'commit', '-qm', `status of ${cluster}`, '-m', `Drydock-Cluster: ${cluster}`);
    git({}, 'checkout', '-q', '-f', 'main');
  }

  before(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'drydock-fleet-'));
    git({}, 'init', '-q', '-b', 'main');
    write('drydock.yaml', 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\npaths: [images, groups]\n');
    write('images/worker.yaml', image('v1'));
    for (const c of ['dev', 'eu', 'us']) write(`clusters/${c}/groups/workers.yaml`, group(c));
    write('fleet/fleet.yaml', FLEET);
    git({}, 'add', '-A');
    git({}, 'commit', '-qm', 'fleet');
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  describe('validate', () => {
    afterEach(() => git({}, 'checkout', '-q', '-f', 'main'));

    it("checks every cluster's view at once", () => {
      const r = drydock('validate', '.');
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.equal(r.stdout, '.: valid: 3 clusters (dev: 2 specs; eu: 2 specs; us: 2 specs)\n');
    });

    it('names every cluster a shared finding is found in, once, at its file:line', () => {
      write('images/worker.yaml', `${image('v1')}  colour: blue\n`);
      const r = drydock('validate', '.');
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /^images\/worker\.yaml:7:3: error: clusters dev, eu, us: unknown field "colour" in spec/m);
      assert.equal(r.stdout.match(/unknown field "colour"/g)?.length, 1);
    });

    it("names the cluster whose own folder holds a finding, at the file's real path", () => {
      write('clusters/eu/images/worker.yaml', image('v0').replace('replace', 'sideways'));
      const r = drydock('validate', '.');
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /^clusters\/eu\/images\/worker\.yaml:6:13: error: cluster eu: /m);
      assert.match(r.stdout, /\(dev: 2 specs; eu: invalid; us: 2 specs\)/);
      rmSync(path.join(repo, 'clusters/eu/images'), { recursive: true });
    });

    it('--cluster checks one view; a name the fleet does not list is refused', () => {
      assert.equal(drydock('validate', '.', '--cluster', 'dev').stdout, '.: valid: 1 cluster (dev: 2 specs)\n');
      const r = drydock('validate', '.', '--cluster', 'mars');
      assert.equal(r.status, 2);
      assert.match(r.stderr, /mars is not a cluster of fleet\/fleet\.yaml \(clusters: dev, eu, us\)/);
    });

    it('locates a fleet file finding: a stage naming a cluster that is not listed', () => {
      write('fleet/fleet.yaml', FLEET.replace('clusters: [dev]', 'clusters: [dev, mars]'));
      const r = drydock('validate', '.');
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /^fleet\/fleet\.yaml:11:38: error: stage canary names cluster mars/m);
    });
  });

  describe('status --fleet', () => {
    const now = Date.now();
    const ago = (minutes: number): string => new Date(now - minutes * 60_000).toISOString();
    before(() => {
      statusBranch('dev', ago(5), [
        specStatus('NodeImage', 'worker', { revision: 'a1b2c3d4e5f60718', phase: 'Complete' }),
      ]);
      statusBranch('eu', ago(2), [
        specStatus('NodeImage', 'worker', {
          revision: 'a1b2c3d4e5f60718',
          phase: 'Waiting',
          waitingFor:
            'fleet: stage canary soaks NodeImage/worker revision a1b2c3d4e5f60718 until 2030-01-01T00:00:00.000Z',
        }),
      ]);
      statusBranch('us', ago(45), [
        specStatus('NodeImage', 'worker', { revision: 'a1b2c3d4e5f60718', phase: 'Complete' }),
      ]);
    });

    it('prints clusters by stage × specs, with phase, revision and what each waits for', () => {
      const r = drydock('status', '--repo', '.', '--fleet');
      assert.equal(r.status, 0, r.stderr);
      const rows = r.stdout.split('\n').map((l) => l.split(/\s{2,}/));
      assert.deepEqual(
        rows.find((c) => c[1] === 'dev'),
        ['canary', 'dev', 'NodeImage/worker', 'Complete', 'a1b2c3d4e5f60718'],
      );
      assert.deepEqual(
        rows.find((c) => c[1] === 'eu'),
        [
          'main',
          'eu',
          'NodeImage/worker',
          'Waiting',
          'a1b2c3d4e5f60718',
          'fleet: stage canary soaks NodeImage/worker revision a1b2c3d4e5f60718 until 2030-01-01T00:00:00.000Z',
        ],
      );
      // Older than staleAfter: unreachable, whatever its last report said.
      assert.deepEqual(rows.find((c) => c[1] === 'us')?.slice(0, 5), ['main', 'us', '-', 'Unreachable', '-']);
      assert.match(r.stdout, /status not written since /);
    });

    it('json: one entry per cluster with its branch', () => {
      const r = drydock('status', '--repo', '.', '--fleet', '--format', 'json');
      assert.equal(r.status, 0, r.stderr);
      const body = JSON.parse(r.stdout) as { clusters: { cluster: string; branch: string; unreachable?: string }[] };
      assert.deepEqual(
        body.clusters.map((c) => [c.cluster, c.branch, c.unreachable !== undefined]),
        [
          ['dev', 'drydock/status-dev', false],
          ['eu', 'drydock/status-eu', false],
          ['us', 'drydock/status-us', true],
        ],
      );
    });

    it("--cluster reads that cluster's status branch by convention", () => {
      const r = drydock('status', '--repo', '.', '--cluster', 'eu', '--format', 'json');
      assert.equal(r.status, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { cluster: string }).cluster, 'eu');
    });
  });

  describe('plan --base --head', () => {
    before(() => {
      git({}, 'checkout', '-qb', 'worker-v2');
      write('images/worker.yaml', image('v2'));
      git({}, 'commit', '-qam', 'worker v2');
      git({}, 'checkout', '-q', 'main');
    });

    it('shows the stages a shared change moves through, each with its earliest start', () => {
      const r = drydock('plan', '--repo', '.', '--base', 'main', '--head', 'worker-v2');
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^Fleet stages:\n {2}NodeImage\/worker revision [0-9a-f]{16}:$/m);
      assert.match(
        r.stdout,
        /^ {4}1\. canary \(dev\): starts at the merge; then soaks 60m; then waits for fleet\/approvals\/canary-worker\.yaml$/m,
      );
      const second = /^ {4}2\. main \(eu, us\): starts no earlier than (\S+)$/m.exec(r.stdout);
      assert.ok(second, r.stdout);
      const earliest = Date.parse(second[1]!);
      assert.ok(earliest - Date.now() > 59 * 60_000 && earliest - Date.now() <= 60 * 60_000, second[1]);
    });

    it("leaves out a cluster whose own folder replaces the spec's file", () => {
      git({}, 'checkout', '-q', 'worker-v2');
      write('clusters/us/images/worker.yaml', image('v1'));
      git({}, 'add', '-A');
      git({}, 'commit', '-qm', 'us keeps v1');
      git({}, 'checkout', '-q', 'main');
      const r = drydock('plan', '--repo', '.', '--base', 'main', '--head', 'worker-v2', '--format', 'markdown');
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^### Fleet stages$/m);
      assert.match(r.stdout, /^2\. main \(eu\): starts no earlier than /m);
    });

    it('says nothing of stages when the head changes no shared spec', () => {
      const r = drydock('plan', '--repo', '.', '--base', 'main', '--head', 'main');
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.doesNotMatch(r.stdout, /Fleet stages/);
      assert.equal(readFileSync(path.join(repo, 'fleet/fleet.yaml'), 'utf8'), FLEET);
    });
  });
});
