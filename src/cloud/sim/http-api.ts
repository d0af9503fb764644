/**
 * The wire contract of the simulated cloud's HTTP API, shared by server and client: routes,
 * how an error travels (status, Retry-After, a body with the typed code) and how it is read
 * back. groupIds go into paths percent-encoded, since other providers' ids contain slashes.
 */
import { CloudError, isCloudErrorCode, type CloudErrorCode, type CloudErrorData } from '../provider.js';

export const HTTP_STATUS_BY_CODE = {
  NotFound: 404,
  Throttled: 429,
  Transient: 503,
  Permanent: 400,
  QuotaExceeded: 403,
} as const satisfies Record<CloudErrorCode, number>;

export interface ErrorBody {
  readonly error: { readonly code: CloudErrorCode; readonly message: string; readonly data: CloudErrorData };
}

export const simRoutes = {
  health: () => '/healthz',
  groups: () => '/groups',
  group: (groupId: string) => `/groups/${encodeURIComponent(groupId)}`,
  image: (groupId: string) => `/groups/${encodeURIComponent(groupId)}/image`,
  capacity: (groupId: string) => `/groups/${encodeURIComponent(groupId)}/capacity`,
  instance: (groupId: string, instanceId: string) =>
    `/groups/${encodeURIComponent(groupId)}/instances/${encodeURIComponent(instanceId)}`,
  bottlerocketReleases: (groupId: string) => `/groups/${encodeURIComponent(groupId)}/bottlerocket/releases`,
  faults: () => '/faults',
  injectFaults: () => '/faults/inject',
} as const;

export function errorBody(err: CloudError): ErrorBody {
  return { error: { code: err.code, message: err.message, data: err.data } };
}

/**
 * The CloudError an HTTP error response stands for: the body's typed code when there is one,
 * otherwise a code derived from the status (a proxy's 502 is as transient as the cloud's 503).
 */
export function cloudErrorFromResponse(
  status: number,
  retryAfterHeader: string | null,
  body: unknown,
  context: string,
): CloudError {
  const retryAfter = parseRetryAfter(retryAfterHeader);
  const e = (body as { error?: { code?: unknown; message?: unknown; data?: unknown } } | undefined)?.error;
  if (e && isCloudErrorCode(e.code) && typeof e.message === 'string') {
    const data = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as CloudErrorData;
    const withRetry =
      e.code === 'Throttled' && data.retryAfterSeconds === undefined
        ? { ...data, retryAfterSeconds: retryAfter ?? 1 }
        : data;
    return new CloudError(e.code, e.message, withRetry);
  }
  if (status === 429) {
    return new CloudError('Throttled', `${context}: throttled (HTTP 429)`, { retryAfterSeconds: retryAfter ?? 1 });
  }
  if (status === 404) return new CloudError('NotFound', `${context}: not found (HTTP 404)`);
  if (status >= 500 || status === 408)
    return new CloudError('Transient', `${context}: server error (HTTP ${status}); retry`);
  return new CloudError('Permanent', `${context}: request refused (HTTP ${status})`);
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
