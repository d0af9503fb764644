/**
 * A fleet cluster's drydock between Git and the planner: its loader reads its own view (or
 * refuses a cluster the fleet file does not list), and before a round it reads the status
 * branches of the earlier stages only, which the planner then gets.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { directoryDesiredSource } from '../../src/service/directory-source.js';
import { FleetMember } from '../../src/service/fleet-round.js';
import { heartbeatOf } from '../../src/service/sources.js';
import { GitSource } from '../../src/source/git-source.js';
import { specStatus } from '../support/spec-status.js';

const FLEET = `apiVersion: drydock.dev/v1alpha1
kind: Fleet
metadata: {name: f}
spec:
  staleAfter: 15m
  clusters: [{name: dev}, {name: prod}]
  stages:
    - {name: canary, clusters: [dev]}
    - {name: main, clusters: [prod]}
`;

describe('FleetMember (a fleet cluster between Git and the planner)', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], {
      cwd: repo,
      encoding: 'utf8',
    }).trim();
  const write = (file: string, text: string): void => {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  };

  before(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'drydock-fleet-member-'));
    git('init', '-q', '-b', 'main');
    write('drydock.yaml', 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\npaths: [images]\n');
    write(
      'images/worker.yaml',
      'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {name: worker}\nspec: {image: "r.example/os:v1", strategy: replace}\n',
    );
    write('clusters/prod/images/.keep.yaml', '');
    write('fleet/fleet.yaml', FLEET);
    git('add', '-A');
    git('commit', '-qm', 'fleet');
    git('checkout', '-q', '--orphan', 'drydock/status-dev');
    git('rm', '-rqf', '.');
    const spec = specStatus('NodeImage', 'worker', { revision: 'a1b2c3d4e5f60718', phase: 'Complete' });
    for (const [file, text] of renderStatusDocs({ cluster: 'dev', specs: [spec] })) write(file, text);
    git('add', '-A');
    git('commit', '-qm', 'status');
    git('checkout', '-q', '-f', 'main');
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  const member = (cluster: string): { m: FleetMember; tree: ReturnType<GitSource['readTree']> } => {
    const source = new GitSource({ repo });
    return { m: new FleetMember(source, cluster), tree: source.readTree(git('rev-parse', 'main')) };
  };

  it("loads the cluster's view, then reads the earlier stage's status branch for the round", async () => {
    const { m, tree } = member('prod');
    const load = await m.load(tree);
    assert.ok(load.ok);
    assert.equal(load.desired.config.cluster, 'prod');
    assert.equal(load.desired.config.statusBranch, 'drydock/status-prod');
    assert.equal(m.round(), undefined, 'nothing is read before the first round');
    await m.prepare();
    const round = m.round();
    assert.deepEqual([...(round?.reports.keys() ?? [])], ['dev']);
    assert.equal(round?.reports.get('dev')?.specs.get('NodeImage/worker')?.phase, 'Complete');
    assert.deepEqual([...(round?.ownFiles.get('prod') ?? [])], ['images/.keep.yaml']);
    assert.equal(heartbeatOf(m), 5 * 60_000, 'a third of staleAfter');
  });

  it('the first stage reads no branch', async () => {
    const { m, tree } = member('dev');
    assert.ok((await m.load(tree)).ok);
    await m.prepare();
    assert.equal(m.round()?.reports.size, 0);
  });

  it('refuses a commit for a cluster the fleet file does not list, or for no cluster', async () => {
    for (const cluster of ['mars', '']) {
      const { m, tree } = member(cluster);
      const load = await m.load(tree);
      assert.equal(load.ok, false);
      if (!load.ok)
        assert.match(load.errors[0]?.message ?? '', cluster ? /cluster "mars" is not listed/ : /serves a fleet/);
      assert.equal(heartbeatOf(m), undefined);
    }
  });

  it('`drydock run` over a directory holding the fleet refuses it at the fleet file; plan and validate still read it', async () => {
    const run = await directoryDesiredSource(repo, 'prod', true).sync();
    assert.equal(run.load.ok, false);
    if (!run.load.ok) {
      assert.deepEqual(
        run.load.errors.map((e) => [e.file, e.line]),
        [['fleet/fleet.yaml', 1]],
      );
      assert.match(run.load.errors[0]?.message ?? '', /not run from a directory/);
      assert.match(run.load.errors[0]?.hint ?? '', /Git URL as --repo, with --cluster/);
    }
    const plan = await directoryDesiredSource(repo, 'prod').sync();
    assert.equal(plan.load.ok, true, 'the same directory loads for drydock plan');
  });
});
