/**
 * --verify-commits: a commit is applied only when it carries an OpenPGP signature made by a key
 * of the configured keyring (armored public keys, one file). The signed payload is the commit
 * object without its gpgsig header, exactly as isomorphic-git's readCommit returns it.
 */
import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import git from 'isomorphic-git';
import * as openpgp from 'openpgp';
import { GitSourceError } from './errors.js';
import { shortCommit } from '../commit.js';

export type SignatureVerdict =
  | { readonly ok: true; readonly commit: string; readonly keyId: string; readonly signer?: string }
  | {
      readonly ok: false;
      readonly commit: string;
      readonly reason: 'unsigned' | 'unknown-key' | 'bad-signature';
      readonly message: string;
      readonly keyId?: string;
    };

export type Keyring = readonly openpgp.PublicKey[];

/** Reads a file of armored public keys; throws GitSourceError 'keyring' with what to fix. */
export async function loadKeyring(file: string): Promise<Keyring> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'error';
    throw new GitSourceError(
      'keyring',
      `cannot read the keyring ${file} (${code}); pass a file of armored OpenPGP public keys to --verify-commits`,
      { file, reason: code },
    );
  }
  return parseKeyring(text, file);
}

export async function parseKeyring(armored: string, file = '(keyring)'): Promise<Keyring> {
  let keys: openpgp.Key[];
  try {
    keys = await openpgp.readKeys({ armoredKeys: armored });
  } catch {
    throw new GitSourceError(
      'keyring',
      `${file} holds no readable armored OpenPGP public key; export one with \`gpg --armor --export <id>\``,
      { file },
    );
  }
  const pub = keys.map((k) => k.toPublic());
  if (pub.length === 0) throw new GitSourceError('keyring', `${file} holds no public key`, { file });
  return pub;
}

function keyIdsOf(keys: Keyring): Set<string> {
  const ids = new Set<string>();
  for (const k of keys) for (const id of k.getKeyIDs()) ids.add(id.toHex());
  return ids;
}

export async function verifyCommitSignature(opts: {
  gitdir: string;
  cache?: object;
  commit: string;
  keys: Keyring;
}): Promise<SignatureVerdict> {
  const { commit: c, payload } = await git.readCommit({
    fs,
    gitdir: opts.gitdir,
    oid: opts.commit,
    cache: opts.cache ?? {},
  });
  const short = shortCommit(opts.commit);
  if (!c.gpgsig) {
    return {
      ok: false,
      commit: opts.commit,
      reason: 'unsigned',
      message: `commit ${short} is not signed; sign it with a key of the keyring (git commit -S)`,
    };
  }
  let signature: openpgp.Signature;
  try {
    signature = await openpgp.readSignature({ armoredSignature: c.gpgsig });
  } catch {
    return {
      ok: false,
      commit: opts.commit,
      reason: 'bad-signature',
      message: `commit ${short} has a signature that is not OpenPGP (SSH and X.509 signatures are not supported)`,
    };
  }
  const signers = signature.getSigningKeyIDs().map((id) => id.toHex());
  const known = keyIdsOf(opts.keys);
  const keyId = signers.find((id) => known.has(id));
  if (keyId === undefined) {
    return {
      ok: false,
      commit: opts.commit,
      reason: 'unknown-key',
      message: `commit ${short} is signed by key ${signers.join(', ') || '(none)'}, which is not in the keyring; add the signer's public key or sign with a known key`,
      ...(signers[0] ? { keyId: signers[0] } : {}),
    };
  }
  try {
    const message = await openpgp.createMessage({ binary: Buffer.from(payload, 'utf8') });
    const result = await openpgp.verify({ message, signature, verificationKeys: [...opts.keys] });
    for (const s of result.signatures) await s.verified;
  } catch {
    return {
      ok: false,
      commit: opts.commit,
      reason: 'bad-signature',
      message: `commit ${short}: the signature by key ${keyId} does not match the commit (tampered or corrupt)`,
      keyId,
    };
  }
  const signerKey = opts.keys.find((k) => k.getKeyIDs().some((id) => id.toHex() === keyId));
  const user = signerKey?.users[0]?.userID?.userID;
  return { ok: true, commit: opts.commit, keyId, ...(user ? { signer: user } : {}) };
}
