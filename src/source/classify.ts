/**
 * Turns what isomorphic-git and Node throw during a fetch or push into a GitSourceError with
 * a code a caller can act on. Decided by codes and status numbers, never by message text;
 * every message is built here from safe parts, so no credential can slip through.
 */
import { errorCode, GitSourceError } from './errors.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

function httpStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('data' in err)) return undefined;
  const data = err.data;
  return typeof data === 'object' && data !== null && 'statusCode' in data && typeof data.statusCode === 'number'
    ? data.statusCode
    : undefined;
}

export interface ClassifyContext {
  /** The repository, credentials stripped. */
  readonly repo: string;
  readonly branch: string;
  readonly operation: 'fetch' | 'push';
  readonly authenticated: boolean;
}

export function classifyGitError(err: unknown, ctx: ClassifyContext): GitSourceError {
  if (err instanceof GitSourceError) return err;
  const code = errorCode(err);
  const base = { repo: ctx.repo, branch: ctx.branch, operation: ctx.operation, cause: code };
  if (code === 'HttpError') {
    const status = httpStatus(err);
    if (status === 401 || status === 403) {
      const how = ctx.authenticated
        ? 'the server refused the credentials; check DRYDOCK_GIT_TOKEN / DRYDOCK_GIT_USERNAME and DRYDOCK_GIT_PASSWORD (or the token file) and that they may ' +
          (ctx.operation === 'push' ? 'push' : 'read')
        : 'the server wants credentials; set DRYDOCK_GIT_TOKEN, or DRYDOCK_GIT_USERNAME and DRYDOCK_GIT_PASSWORD, or --git-token-file';
      return new GitSourceError('auth', `${ctx.operation} ${ctx.repo}: HTTP ${status}: ${how}`, { ...base, status });
    }
    if (status === 404) {
      return new GitSourceError(
        'unreachable',
        `${ctx.operation} ${ctx.repo}: HTTP 404: no repository at this URL; check --repo`,
        { ...base, status },
      );
    }
    return new GitSourceError(
      'unreachable',
      `${ctx.operation} ${ctx.repo}: HTTP ${status ?? 'error'} from the server; will retry`,
      { ...base, status },
    );
  }
  if (code === 'UserCanceledError') {
    return new GitSourceError(
      'auth',
      `${ctx.operation} ${ctx.repo}: the server refused the credentials; check them and that they may ${ctx.operation === 'push' ? 'push' : 'read'}`,
      base,
    );
  }
  if (code === 'NotFoundError') {
    return new GitSourceError(
      'branch-missing',
      `branch ${ctx.branch} does not exist in ${ctx.repo}; push it or fix --branch`,
      base,
    );
  }
  if (code === 'SmartHttpError' || code === 'ParseError' || code === 'EmptyServerResponseError') {
    return new GitSourceError(
      'unreachable',
      `${ctx.operation} ${ctx.repo}: the server did not answer as a Git smart HTTP server; check --repo`,
      base,
    );
  }
  if (code === 'UrlParseError' || code === 'UnknownTransportError') {
    return new GitSourceError('invalid-repo', `${ctx.repo} is not a URL drydock can fetch; use an https:// URL`, base);
  }
  if (code !== undefined && NETWORK_CODES.has(code)) {
    return new GitSourceError(
      'unreachable',
      `${ctx.operation} ${ctx.repo}: cannot connect (${code}); will retry`,
      base,
    );
  }
  return new GitSourceError('git', `${ctx.operation} ${ctx.repo} failed (${code ?? 'unknown error'})`, base);
}
