/**
 * Compute Engine API errors → drydock's typed cloud errors, by HTTP status, the error's
 * reason (errors[].reason) and, for failed long-running operations, the operation's error codes.
 */
import { CloudError, type CloudErrorCode, type CloudErrorData } from '../provider.js';
import { DEFAULT_RETRY_AFTER_SECONDS, isTimeout, nextStep, retryAfterSeconds } from '../calls.js';

const THROTTLE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RATE_LIMIT_EXCEEDED']);
const QUOTA_REASONS = new Set([
  'quotaExceeded',
  'QUOTA_EXCEEDED',
  'ZONE_RESOURCE_POOL_EXHAUSTED',
  'ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS',
  'REGION_RESOURCE_POOL_EXHAUSTED',
]);
const NOT_FOUND_REASONS = new Set(['notFound', 'RESOURCE_NOT_FOUND']);

export interface GcpHttpFailure {
  readonly status: number;
  readonly retryAfter?: string | null;
  readonly reasons: readonly string[];
  readonly message: string;
}

export function gcpErrorCode(f: Pick<GcpHttpFailure, 'status' | 'reasons'>): CloudErrorCode {
  if (f.status === 429 || f.reasons.some((r) => THROTTLE_REASONS.has(r))) return 'Throttled';
  if (f.reasons.some((r) => QUOTA_REASONS.has(r))) return 'QuotaExceeded';
  if (f.status === 404 || f.reasons.some((r) => NOT_FOUND_REASONS.has(r))) return 'NotFound';
  if (f.status >= 500 || f.status === 408) return 'Transient';
  return 'Permanent';
}

export function gcpHttpError(f: GcpHttpFailure, context: string, data: CloudErrorData): CloudError {
  const code = gcpErrorCode(f);
  const retryAfter =
    code === 'Throttled' ? (retryAfterSeconds(f.retryAfter) ?? DEFAULT_RETRY_AFTER_SECONDS) : undefined;
  const reason = f.reasons.length > 0 ? ` (${f.reasons.join(', ')})` : '';
  return new CloudError(
    code,
    `gcp: ${context}: HTTP ${f.status}${reason}: ${f.message}; ${nextStep(code, { quotaOf: "project's", access: "drydock's IAM permissions" })}`,
    {
      ...data,
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    },
  );
}

/** The body of a failed Compute call: {"error": {"code", "message", "errors": [{"reason", "message"}]}}. */
export function parseErrorBody(text: string): { reasons: string[]; message: string } {
  try {
    const body = JSON.parse(text) as { error?: { message?: string; status?: string; errors?: { reason?: string }[] } };
    const reasons = (body.error?.errors ?? []).map((e) => e.reason ?? '').filter((r) => r !== '');
    if (body.error?.status) reasons.push(body.error.status);
    return { reasons, message: body.error?.message ?? text.slice(0, 200) };
  } catch {
    return { reasons: [], message: text.slice(0, 200) };
  }
}

/** A failed long-running operation: its error codes decide. */
export function gcpOperationError(
  op: {
    error?: { errors?: { code?: string | null; message?: string | null }[] | null } | null;
    httpErrorStatusCode?: number | null;
    httpErrorMessage?: string | null;
  },
  context: string,
  data: CloudErrorData,
): CloudError {
  const errors = op.error?.errors ?? [];
  const reasons = errors.map((e) => e.code ?? '').filter((c) => c !== '');
  const message =
    errors
      .map((e) => e.message ?? '')
      .filter((m) => m !== '')
      .join('; ') ||
    (op.httpErrorMessage ?? 'operation failed');
  return gcpHttpError(
    { status: op.httpErrorStatusCode ?? 400, reasons, message },
    `${context}: the operation failed`,
    data,
  );
}

/** Anything else a call threw: a CloudError from the transport as is, a deadline or a dropped connection as Transient. */
export function gcpCloudError(err: unknown, context: string, data: CloudErrorData): CloudError {
  if (err instanceof CloudError) return err;
  const e = (err ?? {}) as {
    message?: string;
    code?: unknown;
    response?: { status?: number; headers?: { get?(n: string): string | null } };
  };
  if (typeof e.response?.status === 'number') {
    return gcpHttpError(
      {
        status: e.response.status,
        retryAfter: e.response.headers?.get?.('retry-after') ?? null,
        reasons: [],
        message: e.message ?? '',
      },
      context,
      data,
    );
  }
  if (isTimeout(err)) return new CloudError('Transient', `gcp: ${context}: no answer in time; retry`, data);
  return new CloudError('Transient', `gcp: ${context}: ${e.message ?? String(err)}; retry`, data);
}
