/**
 * The Compute client's transport: credentials from Application Default Credentials (a
 * workload identity in GKE, the metadata server on GCE, GOOGLE_APPLICATION_CREDENTIALS), and
 * every failed HTTP answer turned into a typed CloudError right where its status and
 * Retry-After header are still known (the client's own errors drop the headers).
 */
import { CloudError } from '../provider.js';
import { parseErrorBody, type GcpHttpFailure } from './errors.js';

/** A failed answer, carried out of the client to the call that knows its context. */
export class GcpHttpFailureError extends Error {
  override readonly name = 'GcpHttpFailureError';
  constructor(readonly failure: GcpHttpFailure) {
    super(`HTTP ${failure.status}: ${failure.message}`);
  }
}

/** What the Compute client's REST transport needs of an auth client. */
export interface GcpAuthClient {
  getRequestHeaders(url?: string | URL): Promise<Headers | Record<string, string>>;
  fetch(url: string | URL, init: RequestInit & Record<string, unknown>): Promise<Response>;
  readonly universeDomain?: string;
}

interface HttpLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text?(): Promise<string>;
}

async function failure(response: HttpLike): Promise<GcpHttpFailureError> {
  const text = typeof response.text === 'function' ? await response.text().catch(() => '') : '';
  const { reasons, message } = parseErrorBody(text);
  return new GcpHttpFailureError({
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    reasons,
    message,
  });
}

/** Wraps `inner` so a failed answer rejects with its status, reasons and Retry-After (the caller adds the context). */
export function typedErrors(inner: GcpAuthClient): GcpAuthClient {
  return {
    getRequestHeaders: (url) => inner.getRequestHeaders(url),
    ...(inner.universeDomain !== undefined ? { universeDomain: inner.universeDomain } : {}),
    fetch: async (url, init) => {
      let response: Response;
      try {
        response = await inner.fetch(url, init);
      } catch (err) {
        // gaxios rejects non-2xx answers; its error keeps the response.
        const r = (err as { response?: HttpLike }).response;
        if (r && typeof r.status === 'number') throw await failure(r);
        throw err;
      }
      if (!response.ok) throw await failure(response);
      return response;
    },
  };
}

/** Application Default Credentials, loaded on first use. */
export async function defaultAuthClient(): Promise<GcpAuthClient> {
  const { GoogleAuth } = await import('google-auth-library');
  try {
    const client = await new GoogleAuth({ scopes: ['https://www.googleapis.com/auth/cloud-platform'] }).getClient();
    return client;
  } catch (err) {
    throw new CloudError(
      'Permanent',
      `gcp: no Google credentials (${err instanceof Error ? err.message : String(err)}); give drydock a workload identity or set GOOGLE_APPLICATION_CREDENTIALS`,
    );
  }
}
