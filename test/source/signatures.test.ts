import { strict as assert } from 'node:assert';
import fs from 'node:fs';
import git from 'isomorphic-git';
import * as openpgp from 'openpgp';
import { GitSource, parseKeyring, Sync, type Keyring } from '../../src/source/index.js';
import { tempDir } from '../support/git-server.js';

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

describe('signed commits (--verify-commits)', function () {
  this.timeout(30_000);
  let repo: { dir: string; remove: () => void };
  let trusted: { privateKey: string; publicKey: string };
  let stranger: { privateKey: string; publicKey: string };
  let keys: Keyring;
  before(async () => {
    trusted = await newKey('release');
    stranger = await newKey('mallory');
    keys = await parseKeyring(trusted.publicKey);
  });
  beforeEach(async () => {
    repo = tempDir('drydock-signed-');
    await git.init({ fs, dir: repo.dir, defaultBranch: 'main' });
  });
  afterEach(() => repo.remove());

  const commit = (tick: number, signingKey?: string): Promise<string> =>
    git.commit({
      fs,
      dir: repo.dir,
      message: `change ${tick}\n`,
      author: { name: 'Ada', email: 'ada@example.com', timestamp: 1704067200 + tick, timezoneOffset: 0 },
      ...(signingKey ? { signingKey, onSign: sign } : {}),
    });

  it('accepts a commit signed by a key of the keyring, naming the signer', async () => {
    const oid = await commit(1, trusted.privateKey);
    const verdict = await new GitSource({ repo: repo.dir }).verifyCommit(oid, keys);
    assert.equal(verdict.ok, true);
    assert.ok(verdict.ok);
    assert.equal(verdict.signer, 'release <release@example.com>');
  });

  const refusals: Array<{ name: string; key?: () => string; reason: string; message: RegExp }> = [
    { name: 'unsigned', reason: 'unsigned', message: /is not signed/ },
    {
      name: 'signed by an unknown key',
      key: () => stranger.privateKey,
      reason: 'unknown-key',
      message: /not in the keyring/,
    },
  ];
  for (const r of refusals) {
    it(`refuses a commit that is ${r.name}`, async () => {
      const oid = await commit(2, r.key?.());
      const verdict = await new GitSource({ repo: repo.dir }).verifyCommit(oid, keys);
      assert.ok(!verdict.ok);
      assert.equal(verdict.reason, r.reason);
      assert.equal(verdict.commit, oid);
      assert.match(verdict.message, r.message);
    });
  }

  it('refuses a signature that does not match the commit', async () => {
    const oid = await commit(3, trusted.privateKey);
    const { commit: c } = await git.readCommit({ fs, dir: repo.dir, oid });
    // Same signature, other content: what a tampered commit looks like.
    const forged = await git.writeCommit({ fs, dir: repo.dir, commit: { ...c, message: 'something else\n' } });
    const verdict = await new GitSource({ repo: repo.dir }).verifyCommit(forged, keys);
    assert.ok(!verdict.ok);
    assert.equal(verdict.reason, 'bad-signature');
  });

  it('Sync does not apply an unsigned tip; the signed one before it stays in force', async () => {
    const signed = await commit(4, trusted.privateKey);
    const load = async (): Promise<never> => {
      throw new Error('the loader must not see an unverified commit');
    };
    const sync = new Sync({
      source: new GitSource({ repo: repo.dir }),
      keys,
      load: async (t) => (t.commit === signed ? { ok: false, files: [], errors: [] } : load()),
    });
    assert.equal((await sync.run()).kind, 'refused');
    const unsigned = await commit(5);
    const out = await sync.run();
    assert.ok(out.kind === 'unverified');
    assert.equal(out.commit, unsigned);
    assert.equal(out.verdict.reason, 'unsigned');
    assert.deepEqual(sync.commits.newest?.load.ok, false);
  });

  it('refuses a keyring without keys, saying how to make one', async () => {
    await assert.rejects(parseKeyring('not a key'), { code: 'keyring', message: /gpg --armor --export/ });
  });
});
