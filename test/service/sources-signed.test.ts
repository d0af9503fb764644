import { strict as assert } from 'node:assert';
import fs from 'node:fs';
import path from 'node:path';
import isogit from 'isomorphic-git';
import * as openpgp from 'openpgp';
import { pino } from 'pino';
import { createServiceSources } from '../../src/service/sources.js';
import { buildStatus } from '../../src/service/status.js';
import {
  git,
  gitEnv,
  startTestGitServer,
  tempDir,
  TEST_USER,
  withUser,
  type GitServer,
} from '../support/git-server.js';

async function newKey(name: string): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'ecc',
    curve: 'curve25519Legacy',
    userIDs: [{ name, email: `${name}@example.com` }],
    format: 'armored',
  });
  return { privateKey, publicKey };
}

async function sign({ payload, secretKey }: { payload: string; secretKey: string }): Promise<{ signature: string }> {
  const key: openpgp.PrivateKey = await openpgp.readPrivateKey({ armoredKey: secretKey });
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- the linter's project service resolves openpgp.sign's overloads to an error type; tsc types them
  const signature: string = await openpgp.sign({
    message: await openpgp.createMessage({ text: payload }),
    signingKeys: key,
    detached: true,
    format: 'armored',
  });
  return { signature };
}

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: signed\npaths: [specs]\n';
const image = (tag: string): string =>
  `apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: os:${tag}\n  strategy: replace\n`;

describe('drydock run --verify-commits --keyring', function () {
  this.timeout(60_000);
  let server: GitServer;
  let url: string;
  let work: { dir: string; remove: () => void };
  let cache: { dir: string; remove: () => void };
  let trusted: { privateKey: string; publicKey: string };
  let stranger: { privateKey: string; publicKey: string };
  let keyringFile: string;
  let tick = 0;

  /** Commits the image tag with isomorphic-git (signed when a key is given) and pushes with native git. */
  async function commit(tag: string, signingKey?: string): Promise<string> {
    fs.writeFileSync(path.join(work.dir, 'specs/image.yaml'), image(tag));
    await isogit.add({ fs, dir: work.dir, filepath: '.' });
    tick += 1;
    const oid = await isogit.commit({
      fs,
      dir: work.dir,
      message: `image ${tag}\n`,
      author: { name: 'Ada Lovelace', email: 'ada@example.com', timestamp: 1704067200 + tick * 60, timezoneOffset: 0 },
      ...(signingKey ? { signingKey, onSign: sign } : {}),
    });
    await git(work.dir, ['push', '-q', withUser(url, TEST_USER), 'HEAD:refs/heads/main'], gitEnv(tick));
    return oid;
  }

  before(async () => {
    trusted = await newKey('release');
    stranger = await newKey('mallory');
    server = await startTestGitServer();
    server.createBareRepo('specs.git', 'main');
    url = server.repoUrl('specs.git');
    work = tempDir('drydock-work-');
    cache = tempDir('drydock-cache-');
    await isogit.init({ fs, dir: work.dir, defaultBranch: 'main' });
    fs.mkdirSync(path.join(work.dir, 'specs'));
    fs.writeFileSync(path.join(work.dir, 'drydock.yaml'), CONFIG);
    keyringFile = path.join(cache.dir, 'keys.asc');
    fs.writeFileSync(keyringFile, trusted.publicKey);
  });
  after(async () => {
    await server?.stop();
    work?.remove();
    cache?.remove();
  });

  it('applies a signed tip, and neither an unsigned nor an unknown-key tip; errors.yaml and README name the commit and why', async () => {
    const { source, status } = await createServiceSources(
      {
        repo: url,
        branch: 'main',
        path: '.',
        cacheDir: path.join(cache.dir, 'clone'),
        verifyCommits: true,
        keyring: keyringFile,
        env: { DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password },
      },
      pino({ level: 'silent' }),
    );
    assert.ok(status);

    const signed = await commit('v1', trusted.privateKey);
    const first = await source.sync();
    assert.equal(first.commit, signed);
    assert.ok(first.load.ok, 'the signed commit is applied');

    const cases = [
      { tag: 'v2', key: undefined, code: 'signature-unsigned', message: /is not signed/ },
      { tag: 'v3', key: stranger.privateKey, code: 'signature-unknown-key', message: /not in the keyring/ },
    ];
    for (const c of cases) {
      const oid = await commit(c.tag, c.key);
      const rev = await source.sync();
      assert.equal(rev.commit, oid);
      assert.ok(!rev.load.ok, `${c.code}: not applied`);
      assert.equal(rev.load.errors[0]?.code, c.code);
      assert.match(rev.load.errors[0]?.message ?? '', new RegExp(oid.slice(0, 7)));
      assert.match(rev.load.errors[0]?.message ?? '', c.message);

      await status.write(
        buildStatus({ cluster: 'signed', sourceCommit: signed, newestCommit: oid, loadErrors: rev.load.errors }),
      );
      const fetched = tempDir('drydock-status-');
      try {
        await git(fetched.dir, ['init', '-q']);
        await git(fetched.dir, ['fetch', '-q', withUser(url, TEST_USER), 'refs/heads/drydock/status']);
        const errors = await git(fetched.dir, ['show', 'FETCH_HEAD:errors.yaml']);
        assert.match(errors, new RegExp(c.code));
        assert.match(errors, new RegExp(oid.slice(0, 7)));
        const readme = await git(fetched.dir, ['show', 'FETCH_HEAD:README.md']);
        assert.match(readme, new RegExp(`Source commit in force: \`${signed}\``));
        assert.match(readme, new RegExp(`Newest commit \`${oid}\` is not applied`));
      } finally {
        fetched.remove();
      }
    }
  });

  it('refuses --verify-commits without --keyring, and a keyring file without keys', async () => {
    const logger = pino({ level: 'silent' });
    await assert.rejects(
      createServiceSources({ repo: url, branch: 'main', path: '.', verifyCommits: true, env: {} }, logger),
      { code: 'option', message: /--keyring/ },
    );
    const bad = path.join(cache.dir, 'bad.asc');
    fs.writeFileSync(bad, 'not a key\n');
    await assert.rejects(
      createServiceSources(
        { repo: url, branch: 'main', path: '.', verifyCommits: true, keyring: bad, env: {} },
        logger,
      ),
      { code: 'keyring' },
    );
  });
});
