/**
 * AWS SDK errors → drydock's typed cloud errors, by the error's code (its `name`) and HTTP
 * status, never by its message.
 */
import { CloudError, type CloudErrorCode, type CloudErrorData } from '../provider.js';
import { DEFAULT_RETRY_AFTER_SECONDS, isTimeout, nextStep, retryAfterSeconds } from '../calls.js';

// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html and the Auto Scaling API's errors.
const THROTTLED = new Set([
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ProvisionedThroughputExceededException',
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
]);
const QUOTA = new Set([
  'LimitExceeded',
  'LimitExceededException',
  'InstanceLimitExceeded',
  'VcpuLimitExceeded',
  'InsufficientInstanceCapacity',
  'MaxSpotInstanceCountExceeded',
  'VolumeLimitExceeded',
  'LaunchTemplateVersionLimitExceeded',
  'ServiceQuotaExceededException',
]);
const NOT_FOUND_SUFFIXES = ['.NotFound', 'NotFoundException', '.Malformed.NotFound'];
const TRANSIENT = new Set([
  'ResourceContention',
  'ScalingActivityInProgress',
  'InternalError',
  'InternalFailure',
  'ServiceUnavailable',
  'Unavailable',
  'RequestTimeout',
  'RequestTimeoutException',
  'IDPCommunicationError',
  'InstanceInUse',
]);
// The SDK's own: no credentials found by the default chain, no region.
const CONFIG = new Set([
  'CredentialsProviderError',
  'ExpiredToken',
  'ExpiredTokenException',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'AuthFailure',
  'UnauthorizedOperation',
  'AccessDenied',
  'AccessDeniedException',
  'SignatureDoesNotMatch',
]);

interface SdkError {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
  $retryable?: { throttling?: boolean };
}

export function awsErrorCode(err: unknown): CloudErrorCode {
  const e = (err ?? {}) as SdkError;
  const name = e.Code ?? e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  if (THROTTLED.has(name) || e.$retryable?.throttling === true || status === 429) return 'Throttled';
  if (QUOTA.has(name)) return 'QuotaExceeded';
  if (NOT_FOUND_SUFFIXES.some((s) => name.endsWith(s))) return 'NotFound';
  if (CONFIG.has(name)) return 'Permanent';
  if (TRANSIENT.has(name) || isTimeout(err)) return 'Transient';
  if (status !== undefined && status >= 500) return 'Transient';
  if (status !== undefined && status >= 400) return 'Permanent';
  // No HTTP status: the request never got an answer (connection refused, reset, DNS).
  return 'Transient';
}

/** `context` says which call on what ("describe group workers"); `data` names the ids. */
export function awsCloudError(err: unknown, context: string, data: CloudErrorData): CloudError {
  if (err instanceof CloudError) return err;
  const e = (err ?? {}) as SdkError;
  const code = awsErrorCode(err);
  const name = e.Code ?? e.name ?? 'Error';
  const what = isTimeout(err) ? 'no answer in time' : `${name}: ${e.message ?? String(err)}`;
  const hint =
    name === 'CredentialsProviderError'
      ? 'give drydock AWS credentials (an IAM role for its service account, or AWS_* variables)'
      : nextStep(code, {
          quotaOf: "group's MaxSize or the account's",
          access: "drydock's IAM permissions",
          notFound: 'check the groupId and region',
        });
  const retryAfter =
    code === 'Throttled'
      ? (retryAfterSeconds(e.$response?.headers?.['retry-after']) ?? DEFAULT_RETRY_AFTER_SECONDS)
      : undefined;
  return new CloudError(code, `aws: ${context}: ${what}; ${hint}`, {
    ...data,
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  });
}
