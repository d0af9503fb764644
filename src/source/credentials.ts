/**
 * Git credentials from the environment or from files (a mounted Kubernetes Secret), never from
 * flags' values: a token on a command line ends up in `ps` and shell history.
 *
 *   DRYDOCK_GIT_TOKEN / --git-token-file         a token, sent as basic auth (x-access-token:<token>),
 *                                                which GitHub, GitLab and Gitea all accept
 *   DRYDOCK_GIT_USERNAME + DRYDOCK_GIT_PASSWORD  basic auth; --git-password-file for the password
 *
 * Credentials in the URL itself (https://user:pass@host/...) are taken out of it and used
 * the same way, so the URL kept and shown never holds them.
 */
import { readFileSync } from 'node:fs';
import { GitSourceError } from './errors.js';

export interface GitCredentials {
  readonly username: string;
  readonly password: string;
}

export interface CredentialInputs {
  readonly env?: NodeJS.ProcessEnv;
  readonly tokenFile?: string;
  readonly passwordFile?: string;
  /** The repository URL, possibly with user info. */
  readonly url?: string;
}

function readSecretFile(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'error';
    throw new GitSourceError(
      'credentials',
      `cannot read the ${what} file ${file} (${code}); check the path and that drydock may read it`,
      {
        file,
        reason: code,
      },
    );
  }
  const value = text.trim();
  if (value === '')
    throw new GitSourceError('credentials', `the ${what} file ${file} is empty; put the ${what} in it`, { file });
  return value;
}

/** Splits user info off a URL: the clean URL and the credentials it held, if any. */
export function splitUrlCredentials(url: string): { url: string; credentials?: GitCredentials } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url };
  }
  if (u.username === '' && u.password === '') return { url };
  const username = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  // A lone user name in the URL is a token by convention (https://<token>@host/...).
  const credentials = password === '' ? { username: 'x-access-token', password: username } : { username, password };
  return { url: u.toString(), credentials };
}

/** The credentials to use, or undefined for anonymous access. Files win over variables. */
export function resolveCredentials(inputs: CredentialInputs): GitCredentials | undefined {
  const env = inputs.env ?? process.env;
  const username = env.DRYDOCK_GIT_USERNAME?.trim() || undefined;
  const token = inputs.tokenFile
    ? readSecretFile(inputs.tokenFile, 'token')
    : env.DRYDOCK_GIT_TOKEN?.trim() || undefined;
  if (token !== undefined) return { username: username ?? 'x-access-token', password: token };
  const password = inputs.passwordFile
    ? readSecretFile(inputs.passwordFile, 'password')
    : env.DRYDOCK_GIT_PASSWORD || undefined;
  if (password !== undefined) {
    if (username === undefined) {
      throw new GitSourceError('credentials', 'a Git password is set but no user name; set DRYDOCK_GIT_USERNAME', {});
    }
    return { username, password };
  }
  if (username !== undefined) {
    throw new GitSourceError(
      'credentials',
      'DRYDOCK_GIT_USERNAME is set but no password or token; set DRYDOCK_GIT_PASSWORD or DRYDOCK_GIT_TOKEN',
      {},
    );
  }
  return inputs.url ? splitUrlCredentials(inputs.url).credentials : undefined;
}

/** The secret values to scrub from any text that leaves the process. */
export function secretsOf(credentials: GitCredentials | undefined): string[] {
  return credentials
    ? [credentials.password, Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')]
    : [];
}

/** The Authorization header value, sent with the first request (saves the 401 round trip). */
export function basicAuthHeader(credentials: GitCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}
