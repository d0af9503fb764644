/**
 * Azure Resource Manager errors → drydock's typed cloud errors, by HTTP status and the ARM
 * error code (never the message); Retry-After read from the answer.
 */
import { CloudError, type CloudErrorCode, type CloudErrorData } from '../provider.js';
import { DEFAULT_RETRY_AFTER_SECONDS, isTimeout, nextStep, retryAfterSeconds } from '../calls.js';

const QUOTA = new Set([
  'QuotaExceeded',
  'OperationNotAllowedQuota',
  'AllocationFailed',
  'ZonalAllocationFailed',
  'OverconstrainedAllocationRequest',
  'OverconstrainedZonalAllocationRequest',
  'SkuNotAvailable',
]);
const THROTTLED = new Set([
  'TooManyRequests',
  'SubscriptionRequestsThrottled',
  'TenantRequestsThrottled',
  'ResourceRequestsThrottled',
  'ResourceCollectionRequestsThrottled',
  'OperationThrottled',
]);
const NOT_FOUND = new Set(['ResourceNotFound', 'NotFound', 'ResourceGroupNotFound', 'ParentResourceNotFound']);
const TRANSIENT = new Set([
  'InternalServerError',
  'ServiceUnavailable',
  'RetryableError',
  'Conflict',
  'OperationPreempted',
]);

interface RestErrorLike {
  name?: string;
  code?: string;
  statusCode?: number;
  message?: string;
  response?: { headers?: { get?(name: string): string | undefined } };
}

export function azureErrorCode(err: unknown): CloudErrorCode {
  const e = (err ?? {}) as RestErrorLike;
  const code = e.code ?? '';
  const status = e.statusCode;
  if (status === 429 || THROTTLED.has(code)) return 'Throttled';
  if (QUOTA.has(code)) return 'QuotaExceeded';
  if (status === 404 || NOT_FOUND.has(code)) return 'NotFound';
  if (TRANSIENT.has(code) || isTimeout(err)) return 'Transient';
  if (status !== undefined && (status >= 500 || status === 408 || status === 409)) return 'Transient';
  if (status !== undefined && status >= 400) return 'Permanent';
  if (e.name === 'CredentialUnavailableError' || e.name === 'AuthenticationError') return 'Permanent';
  return 'Transient';
}

export function azureCloudError(err: unknown, context: string, data: CloudErrorData): CloudError {
  if (err instanceof CloudError) return err;
  const e = (err ?? {}) as RestErrorLike;
  const code = azureErrorCode(err);
  const what = isTimeout(err)
    ? 'no answer in time'
    : `${e.statusCode !== undefined ? `HTTP ${e.statusCode} ` : ''}${e.code ?? e.name ?? 'Error'}: ${e.message ?? String(err)}`;
  const hint =
    e.name === 'CredentialUnavailableError' || e.name === 'AuthenticationError'
      ? 'give drydock an Azure workload identity (or AZURE_* variables)'
      : nextStep(code, { quotaOf: "subscription's", access: "drydock's role assignment" });
  const retryAfter =
    code === 'Throttled'
      ? (retryAfterSeconds(e.response?.headers?.get?.('retry-after')) ?? DEFAULT_RETRY_AFTER_SECONDS)
      : undefined;
  return new CloudError(code, `azure: ${context}: ${what}; ${hint}`, {
    ...data,
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  });
}
