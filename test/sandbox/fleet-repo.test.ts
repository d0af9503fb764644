import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  commitImageChange,
  fleetRepoPath,
  nextImage,
  readBranch,
  readTree,
  seedFleetRepo,
  SANDBOX_AUTHOR,
} from '../../src/sandbox/fleet-repo.js';
import { git, gitEnv, tempDir } from '../support/git-server.js';

describe('sandbox fleet repository', () => {
  describe('nextImage', () => {
    const cases: [string, string][] = [
      ['sandbox/node:1.29.3', 'sandbox/node:1.29.4'],
      ['os-v1', 'os-v2'],
      ['registry.local:5000/os/node', 'registry.local:5000/os/node-2'],
      ['registry.local:5000/os/node:v9', 'registry.local:5000/os/node:v10'],
      ['node:2024.09-lts', 'node:2024.10-lts'],
      ['node:007', 'node:008'],
      ['node:latest', 'node:latest-2'],
      ['node@sha256:abc1', 'node-2'],
    ];
    for (const [from, to] of cases) it(`${from} → ${to}`, () => assert.equal(nextImage(from), to));
  });

  describe('seed and image change', () => {
    let tmp: ReturnType<typeof tempDir>;
    const examples = (): string => path.join(tmp.dir, 'examples');
    beforeEach(() => {
      tmp = tempDir('drydock-fleet-');
      mkdirSync(path.join(examples(), 'images'), { recursive: true });
      mkdirSync(path.join(tmp.dir, 'git'));
      mkdirSync(path.join(tmp.dir, 'work'));
      writeFileSync(
        path.join(examples(), 'images', 'images.yaml'),
        [
          '# worker image: bump it in a pull request',
          'apiVersion: drydock.dev/v1alpha1',
          'kind: NodeImage',
          'metadata:',
          '  name: worker',
          'spec:',
          '  image: sandbox/node:1.0.0 # the OS image',
          '---',
          'apiVersion: drydock.dev/v1alpha1',
          'kind: NodeImage',
          'metadata:',
          '  name: control-plane',
          'spec:',
          '  image: sandbox/node:1.0.0',
          '',
        ].join('\n'),
      );
    });
    afterEach(() => tmp.remove());

    it('creates fleet.git once and keeps it on a second run', () => {
      assert.deepEqual(seedFleetRepo(path.join(tmp.dir, 'git'), examples(), path.join(tmp.dir, 'work')), {
        created: true,
      });
      const head = readBranch(fleetRepoPath(path.join(tmp.dir, 'git')), 'main');
      assert.equal(head?.subject, 'Fleet specs from drydock examples-repo');
      assert.deepEqual(seedFleetRepo(path.join(tmp.dir, 'git'), examples(), path.join(tmp.dir, 'work')), {
        created: false,
      });
      assert.equal(readBranch(fleetRepoPath(path.join(tmp.dir, 'git')), 'main')?.commit, head?.commit);
    });

    it('commits the new images, keeping comments, as the sandbox author', async () => {
      seedFleetRepo(path.join(tmp.dir, 'git'), examples(), path.join(tmp.dir, 'work'));
      const bare = fleetRepoPath(path.join(tmp.dir, 'git'));
      const result = commitImageChange(
        bare,
        path.join(tmp.dir, 'work'),
        (current) => new Map([...current].map(([n, i]) => [n, nextImage(i)])),
      );
      assert.deepEqual(
        result.changes.map((c) => [c.nodeImage, c.file, c.from, c.to]),
        [
          ['worker', 'images/images.yaml', 'sandbox/node:1.0.0', 'sandbox/node:1.0.1'],
          ['control-plane', 'images/images.yaml', 'sandbox/node:1.0.0', 'sandbox/node:1.0.1'],
        ],
      );
      const text = readTree(bare, 'main', 'images').get('images/images.yaml') ?? '';
      assert.match(text, /^# worker image: bump it in a pull request$/m);
      assert.match(text, /^ {2}image: sandbox\/node:1\.0\.1 # the OS image$/m);
      assert.equal(readBranch(bare, 'main')?.commit, result.commit);
      assert.equal(
        await git(tmp.dir, ['--git-dir', bare, 'log', '-1', '--format=%an <%ae>']),
        `${SANDBOX_AUTHOR.name} <${SANDBOX_AUTHOR.email}>`,
      );
    });

    it('refuses a NodeImage that does not exist and pushes nothing', () => {
      seedFleetRepo(path.join(tmp.dir, 'git'), examples(), path.join(tmp.dir, 'work'));
      const bare = fleetRepoPath(path.join(tmp.dir, 'git'));
      const before = readBranch(bare, 'main')?.commit;
      assert.throws(
        () => commitImageChange(bare, path.join(tmp.dir, 'work'), () => new Map([['gpu', 'x:2']])),
        (err: unknown) =>
          (err as { code?: string }).code === 'StepFailed' && /no NodeImage named gpu/.test((err as Error).message),
      );
      assert.equal(readBranch(bare, 'main')?.commit, before);
    });

    it('reads trailers of a status commit', async () => {
      seedFleetRepo(path.join(tmp.dir, 'git'), examples(), path.join(tmp.dir, 'work'));
      const bare = fleetRepoPath(path.join(tmp.dir, 'git'));
      const clone = path.join(tmp.dir, 'clone');
      await git(tmp.dir, ['clone', '--quiet', bare, clone]);
      await git(clone, ['checkout', '--quiet', '--orphan', 'drydock/status']);
      await git(clone, ['rm', '-rqf', '.']);
      mkdirSync(path.join(clone, 'status', 'NodeImage'), { recursive: true });
      writeFileSync(path.join(clone, 'status', 'NodeImage', 'worker.yaml'), 'phase: Complete\n');
      await git(clone, ['add', '.']);
      await git(
        clone,
        [
          'commit',
          '--quiet',
          '-m',
          'status: NodeImage/worker 6/6 replaced (source 1a2b3c4)\n\nDrydock-Source: 1a2b3c4\nDrydock-Cluster: sandbox',
        ],
        gitEnv(1),
      );
      await git(clone, ['push', '--quiet', 'origin', 'drydock/status']);
      const head = readBranch(bare, 'drydock/status');
      assert.equal(head?.subject, 'status: NodeImage/worker 6/6 replaced (source 1a2b3c4)');
      assert.deepEqual(head?.trailers, { 'Drydock-Source': '1a2b3c4', 'Drydock-Cluster': 'sandbox' });
      assert.deepEqual(
        [...readTree(bare, 'drydock/status', 'status')],
        [['status/NodeImage/worker.yaml', 'phase: Complete\n']],
      );
    });
  });
});
