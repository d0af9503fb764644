/**
 * Delivering one message to one receiver: the body signed where the receiver verifies it, a
 * time limit on every attempt, and retries with backoff. Nothing here logs or throws the
 * receiver's address or key: errors are reduced to an HTTP status or an error code.
 */
import { createHmac } from 'node:crypto';
import pRetry, { AbortError } from 'p-retry';
import type { NotifyReceiver } from '../spec/model.js';
import { readSecret } from './secrets.js';

export const SIGNATURE_HEADER = 'x-drydock-signature';
export const EVENT_HEADER = 'x-drydock-event-id';

export interface DeliveryOptions {
  readonly secretsDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** Retries after the first attempt. */
  readonly retries: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** One attempt's limit: a receiver that hangs is given up on after it. */
  readonly attemptTimeoutMs: number;
  readonly signal: AbortSignal;
  readonly fetch: typeof fetch;
}

/** `sha256=<hex>` of HMAC-SHA256 over the exact body bytes, as GitHub signs its webhooks. */
export function signBody(body: string, key: string): string {
  return `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
}

/** Why an attempt failed, without the address: an HTTP status or an error code. */
export class DeliveryError extends Error {
  override readonly name = 'DeliveryError';
  constructor(readonly reason: string) {
    super(`delivery failed: ${reason}`);
  }
}

function reasonOf(err: unknown): string {
  if (err instanceof DeliveryError) return err.reason;
  const e = err as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (e.name === 'TimeoutError' || e.cause?.name === 'TimeoutError') return 'timeout';
  return e.cause?.code ?? e.code ?? e.name ?? 'error';
}

async function attempt(r: NotifyReceiver, eventId: string, body: string, o: DeliveryOptions): Promise<void> {
  const secrets = { dir: o.secretsDir, env: o.env };
  let url: string;
  let key: string | undefined;
  try {
    url = await readSecret(r.urlFrom, secrets);
    key = r.secretFrom ? await readSecret(r.secretFrom, secrets) : undefined;
  } catch (err) {
    throw new DeliveryError((err as Error).message);
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', [EVENT_HEADER]: eventId };
  if (key !== undefined) headers[SIGNATURE_HEADER] = signBody(body, key);
  let res: Response;
  try {
    res = await o.fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.any([o.signal, AbortSignal.timeout(o.attemptTimeoutMs)]),
    });
  } catch (err) {
    if (o.signal.aborted) throw new AbortError(new DeliveryError('stopped'));
    throw new DeliveryError(reasonOf(err));
  }
  // The body is not read past its start: a receiver's answer is not ours to log.
  await res.body?.cancel().catch(() => undefined);
  if (res.ok) return;
  const error = new DeliveryError(`HTTP ${res.status}`);
  // A request the receiver refuses as such (a revoked token, a bad signature) fails again.
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new AbortError(error);
  throw error;
}

/** Sends until the receiver takes it or the retries run out; `onRetry` hears each failed attempt. */
export async function deliver(
  r: NotifyReceiver,
  eventId: string,
  body: string,
  o: DeliveryOptions,
  onRetry: (reason: string, attempt: number) => void,
): Promise<void> {
  try {
    await pRetry(() => attempt(r, eventId, body, o), {
      retries: o.retries,
      minTimeout: o.minBackoffMs,
      maxTimeout: o.maxBackoffMs,
      factor: 2,
      randomize: true,
      signal: o.signal,
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft > 0 && !o.signal.aborted) onRetry(reasonOf(error), attemptNumber);
      },
    });
  } catch (err) {
    throw new DeliveryError(reasonOf(err));
  }
}
