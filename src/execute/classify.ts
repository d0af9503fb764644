/**
 * The one place an error becomes a decision (Flux-style): every failure of an action is
 * mapped, by HTTP status or CloudError code and never by message text, to
 * - stalled: needs a person (forbidden, invalid request, missing group); no retry;
 * - waiting: retry after a known delay (PDB refused an eviction, throttling, quota);
 * - transient: retry soon (conflicts, 5xx, timeouts, connection errors).
 */
import type { Retry } from '../errors.js';
import type { Action } from '../plan/types.js';
import { ApiException } from '@kubernetes/client-node';
import { CloudError } from '../cloud/provider.js';
import { ForeignObjectError } from './foreign-object.js';

/** What one action of a plan came to, and how long it took. */
export interface ActionResult {
  readonly action: Action;
  readonly outcome: Outcome;
  readonly durationMs: number;
}

export type OutcomeKind = 'done' | 'skipped' | Retry;

export type Outcome =
  | { readonly kind: 'done' }
  /** Nothing to do, and why (e.g. "not cordoned by drydock"). */
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'waiting'; readonly code: string; readonly reason: string; readonly retryAfterSeconds: number }
  | { readonly kind: 'transient'; readonly code: string; readonly reason: string }
  | { readonly kind: 'stalled'; readonly code: string; readonly reason: string };

/** Fallback delay when a 429 or throttle carries no Retry-After. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;
/** How long a quota-limited surge waits before trying again. */
export const QUOTA_RETRY_SECONDS = 30;

/** HTTP status of a client-node ApiException (or a watch error), if any. */
export function httpStatus(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  if (err && typeof err === 'object') {
    const e = err as { statusCode?: unknown };
    if (typeof e.statusCode === 'number') return e.statusCode;
  }
  return undefined;
}

function retryAfter(err: unknown): number {
  if (err instanceof ApiException) {
    const headers = (err.headers ?? {}) as Record<string, string | undefined>;
    const value = Number(headers['retry-after'] ?? headers['Retry-After']);
    if (Number.isFinite(value) && value > 0) return value;
  }
  return DEFAULT_RETRY_AFTER_SECONDS;
}

/** The API server's own short reason (Status.message), without headers or request details. */
function apiReason(err: ApiException<unknown>): string {
  const body = err.body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  if (parsed && typeof parsed === 'object' && typeof (parsed as { message?: unknown }).message === 'string') {
    return (parsed as { message: string }).message;
  }
  return `HTTP ${err.code}`;
}

/** Node's system error codes that mean the network, not the request, failed. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

/**
 * Maps any error thrown by an action to what happens next. `context` names the action
 * ("evict default/web-1") and prefixes the reason.
 */
export function classifyError(err: unknown, context: string): Exclude<Outcome, { kind: 'done' } | { kind: 'skipped' }> {
  if (err instanceof CloudError) {
    const reason = `${context}: ${err.message}`;
    switch (err.code) {
      case 'Throttled':
        return {
          kind: 'waiting',
          code: 'CloudThrottled',
          reason,
          retryAfterSeconds: err.data.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS,
        };
      case 'QuotaExceeded':
        return { kind: 'waiting', code: 'CloudQuotaExceeded', reason, retryAfterSeconds: QUOTA_RETRY_SECONDS };
      case 'Transient':
        return { kind: 'transient', code: 'CloudTransient', reason };
      case 'NotFound':
        return { kind: 'stalled', code: 'CloudNotFound', reason };
      case 'Permanent':
        return { kind: 'stalled', code: 'CloudPermanent', reason };
    }
  }
  // Someone else's object holds the name drydock needs: a person must move it.
  if (err instanceof ForeignObjectError)
    return { kind: 'stalled', code: err.code, reason: `${context}: ${err.message}` };
  const status = httpStatus(err);
  if (status !== undefined) {
    const reason = `${context}: ${err instanceof ApiException ? apiReason(err) : `HTTP ${status}`}`;
    if (status === 429) return { kind: 'waiting', code: 'TooManyRequests', reason, retryAfterSeconds: retryAfter(err) };
    if (status === 401 || status === 403)
      return { kind: 'stalled', code: status === 401 ? 'Unauthorized' : 'Forbidden', reason };
    if (status === 400 || status === 422) return { kind: 'stalled', code: 'Invalid', reason };
    if (status === 404) return { kind: 'transient', code: 'NotFound', reason };
    if (status === 409) return { kind: 'transient', code: 'Conflict', reason };
    return { kind: 'transient', code: `HTTP${status}`, reason };
  }
  const sys = err && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  if (typeof sys === 'string' && NETWORK_CODES.has(sys)) {
    return { kind: 'transient', code: 'Network', reason: `${context}: ${sys}` };
  }
  const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  return { kind: 'transient', code: 'Unknown', reason: `${context}: ${message}` };
}
