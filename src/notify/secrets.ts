/**
 * A receiver's address and signing key are secrets (a Slack or Teams address carries its token):
 * drydock.yaml names where to read them, never the value. A commit may only point into the
 * secrets directory (a mounted Kubernetes Secret) or at DRYDOCK_NOTIFY_* variables, so a change
 * in Git cannot make drydock send another file or variable of its own anywhere.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SecretRef } from '../spec/model.js';

export const DEFAULT_SECRETS_DIR = '/etc/drydock/notify';
const ENV_PREFIX = 'DRYDOCK_NOTIFY_';

export class SecretError extends Error {
  override readonly name = 'SecretError';
}

/** Where the ref points, in words for a log (the place, never the value). */
export function describeRef(ref: SecretRef): string {
  return 'file' in ref ? `file ${ref.file}` : `env ${ref.env}`;
}

export async function readSecret(
  ref: SecretRef,
  opts: { readonly dir: string; readonly env: NodeJS.ProcessEnv },
): Promise<string> {
  if ('file' in ref) {
    if (!/^[A-Za-z0-9._-]+$/.test(ref.file) || ref.file === '.' || ref.file === '..') {
      throw new SecretError(`secret file ${JSON.stringify(ref.file)} is not a plain file name`);
    }
    let text: string;
    try {
      text = await readFile(path.join(opts.dir, ref.file), 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'read';
      throw new SecretError(`secret file ${ref.file} in ${opts.dir} cannot be read (${code})`);
    }
    const value = text.trim();
    if (value === '') throw new SecretError(`secret file ${ref.file} in ${opts.dir} is empty`);
    return value;
  }
  if (!ref.env.startsWith(ENV_PREFIX)) throw new SecretError(`variable ${ref.env} does not start with ${ENV_PREFIX}`);
  const value = opts.env[ref.env]?.trim() ?? '';
  if (value === '') throw new SecretError(`variable ${ref.env} is not set`);
  return value;
}
