/**
 * Errors of the Git source, one class with a stable `code` and structured `data` (never a
 * secret: every URL in a message or in data has its credentials stripped). Callers decide by
 * `code`; `retry` says what should happen next, in the one retry vocabulary (errors.ts).
 */
import { CodedError, type Retry } from '../errors.js';

export type GitSourceErrorCode =
  /** The server refused the credentials, or none were given and it wants some. */
  | 'auth'
  /** Connection refused, DNS failure, timeout, 5xx, or not a Git server. */
  | 'unreachable'
  /** The tracked branch does not exist on the remote (deleted, or a typo). */
  | 'branch-missing'
  /** --repo is neither an http(s) URL nor a local Git repository. */
  | 'invalid-repo'
  /** A flag's value is malformed (an --interval cron cannot express, a bad branch name). */
  | 'invalid-option'
  /** A credential file or variable could not be read. */
  | 'credentials'
  /** --path does not exist in the commit, or is not a directory. */
  | 'path-missing'
  /** --verify-commits: the commit is unsigned, signed by an unknown key, or the signature is bad. */
  | 'signature'
  /** --verify-commits: the keyring cannot be read or holds no public key. */
  | 'keyring'
  /** The status branch could not be pushed after every retry. */
  | 'push-rejected'
  /** The status branch does not exist (yet). */
  | 'status-missing'
  /** Anything else reported by git; data.cause names isomorphic-git's code. */
  | 'git';

/** A Git failure either needs a person or is retried soon; nothing names a delay. */
export type RetryClass = Extract<Retry, 'stalled' | 'transient'>;

const STALLED: ReadonlySet<GitSourceErrorCode> = new Set([
  'auth',
  'invalid-repo',
  'invalid-option',
  'credentials',
  'keyring',
  'signature',
  'path-missing',
]);

export class GitSourceError extends CodedError<
  GitSourceErrorCode,
  Readonly<Record<string, string | number | boolean | undefined>>
> {
  override readonly name = 'GitSourceError';
  constructor(
    code: GitSourceErrorCode,
    message: string,
    data: Readonly<Record<string, string | number | boolean | undefined>> = {},
  ) {
    super(code, message, data);
  }

  /** stalled: needs a person (fix credentials, URL, keyring); transient: retry later. */
  get retry(): RetryClass {
    return STALLED.has(this.code) ? 'stalled' : 'transient';
  }
}

export function isGitSourceError(err: unknown, code?: GitSourceErrorCode): err is GitSourceError {
  return err instanceof GitSourceError && (code === undefined || err.code === code);
}

/** The `code` property of any thrown value (isomorphic-git's and Node's errors carry one). */
export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}
