/**
 * The webhook receiver: a push notification makes drydock fetch at once instead of at the next
 * poll. The request must prove it knows the shared secret, over the exact bytes received:
 *   GitHub   X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>
 *   GitLab   X-Gitlab-Token: <secret>
 *   generic  X-Drydock-Signature: sha256=<hex HMAC-SHA256 of the body>
 * Every comparison is constant-time. A wrong or missing proof gets 401 and fetches nothing.
 * A signed body that is not a JSON object gets 400, and a GitHub delivery id (X-GitHub-Delivery)
 * seen before gets 409: a captured request replayed as it was fetches nothing. The signature
 * covers the body only, never the delivery id, so this stops replays, not forgeries; the ids
 * are kept in memory (bounded), per replica, so a restart forgets them.
 * The secret comes from DRYDOCK_WEBHOOK_SECRET or --webhook-secret-file, never a flag's value.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { GitSourceError } from './errors.js';

export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

export type WebhookProvider = 'github' | 'gitlab' | 'generic';

export type WebhookVerdict =
  | { readonly ok: true; readonly provider: WebhookProvider; readonly event?: string; readonly delivery?: string }
  | { readonly ok: false; readonly status: 401; readonly reason: 'missing-signature' | 'bad-signature' };

function header(headers: WebhookHeaders, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function hmacMatches(secret: string, body: Buffer, claimed: string): boolean {
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(claimed.trim());
  if (!m?.[1]) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return sameBytes(expected, Buffer.from(m[1], 'hex'));
}

/** Checks a webhook request against the shared secret; decides nothing else. */
export function verifyWebhook(headers: WebhookHeaders, body: Buffer, secret: string): WebhookVerdict {
  const github = header(headers, 'x-hub-signature-256');
  if (github !== undefined) {
    const event = header(headers, 'x-github-event');
    const delivery = header(headers, 'x-github-delivery');
    return hmacMatches(secret, body, github)
      ? { ok: true, provider: 'github', ...(event ? { event } : {}), ...(delivery !== undefined ? { delivery } : {}) }
      : { ok: false, status: 401, reason: 'bad-signature' };
  }
  const gitlab = header(headers, 'x-gitlab-token');
  if (gitlab !== undefined) {
    const event = header(headers, 'x-gitlab-event');
    // Hash both sides first: equal-length buffers, so the comparison leaks nothing about length either.
    const a = createHmac('sha256', 'drydock').update(gitlab).digest();
    const b = createHmac('sha256', 'drydock').update(secret).digest();
    return sameBytes(a, b)
      ? { ok: true, provider: 'gitlab', ...(event ? { event } : {}) }
      : { ok: false, status: 401, reason: 'bad-signature' };
  }
  const generic = header(headers, 'x-drydock-signature');
  if (generic !== undefined) {
    return hmacMatches(secret, body, generic)
      ? { ok: true, provider: 'generic' }
      : { ok: false, status: 401, reason: 'bad-signature' };
  }
  return { ok: false, status: 401, reason: 'missing-signature' };
}

/** The webhook secret from a file (wins) or DRYDOCK_WEBHOOK_SECRET; undefined: no webhook. */
export function webhookSecret(opts: { env?: NodeJS.ProcessEnv; file?: string }): string | undefined {
  if (opts.file) {
    let text: string;
    try {
      text = readFileSync(opts.file, 'utf8').trim();
    } catch (err) {
      const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'error';
      throw new GitSourceError(
        'credentials',
        `cannot read the webhook secret file ${opts.file} (${code}); check the path`,
        { file: opts.file, reason: code },
      );
    }
    if (text === '')
      throw new GitSourceError('credentials', `the webhook secret file ${opts.file} is empty`, { file: opts.file });
    return text;
  }
  const v = (opts.env ?? process.env).DRYDOCK_WEBHOOK_SECRET?.trim();
  return v ? v : undefined;
}

/**
 * Delivery ids already accepted, oldest first. Bounded: a flood of signed deliveries forgets the
 * oldest ids rather than growing without end (GitHub retries a delivery within hours, far fewer
 * than `capacity` deliveries later).
 */
export class DeliveryLog {
  private readonly seen = new Set<string>();
  constructor(private readonly capacity = 10_000) {}

  /** Records `id`; false when it was recorded before. */
  admit(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > this.capacity) {
      const oldest = this.seen.values().next();
      if (oldest.done !== true) this.seen.delete(oldest.value);
    }
    return true;
  }
}

/** A delivery id longer than this is not one a Git host sends (GitHub's are GUIDs). */
const MAX_DELIVERY_ID = 128;

/**
 * Whether the body is a JSON object: sent as application/json (the default) or, as GitHub may
 * be configured to, form-encoded with the JSON in its `payload` field.
 */
export function isJsonPayload(headers: WebhookHeaders, body: Buffer): boolean {
  const type = header(headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  let text: string | null = body.toString('utf8');
  if (type === 'application/x-www-form-urlencoded') text = new URLSearchParams(text).get('payload');
  if (text === null) return false;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

export interface WebhookResponse {
  readonly status: number;
  readonly body: unknown;
}

/** Events that carry no new commit: answered 200, nothing fetched. */
const PING_EVENTS = new Set(['ping']);

/**
 * The route's logic as a plain function (the service's HTTP server mounts it, see
 * src/service/http.ts WebhookHandler): verify, then trigger a fetch without waiting for it.
 */
export function webhookHandler(opts: {
  secret: string;
  trigger: () => void;
  path?: string;
  onRejected?: (reason: string) => void;
  deliveries?: DeliveryLog;
}): {
  readonly path: string;
  handle(headers: WebhookHeaders, body: Buffer): Promise<WebhookResponse>;
} {
  const deliveries = opts.deliveries ?? new DeliveryLog();
  const refuse = (status: number, reason: string, error: string): WebhookResponse => {
    opts.onRejected?.(reason);
    return { status, body: { error } };
  };
  return {
    path: opts.path ?? '/webhook',
    async handle(headers, body) {
      const verdict = verifyWebhook(headers, body, opts.secret);
      if (!verdict.ok)
        return refuse(
          401,
          verdict.reason,
          verdict.reason === 'missing-signature' ? 'missing webhook signature' : 'webhook signature does not match',
        );
      if (!isJsonPayload(headers, body))
        return refuse(400, 'bad-payload', "webhook body is not a JSON object; send the Git host's push event as it is");
      // Checked last, so only a request that would otherwise be accepted uses up its id.
      if (verdict.delivery !== undefined) {
        if (verdict.delivery.length > MAX_DELIVERY_ID)
          return refuse(400, 'bad-delivery', `X-GitHub-Delivery is longer than ${MAX_DELIVERY_ID} characters`);
        if (!deliveries.admit(verdict.delivery))
          return refuse(409, 'replayed-delivery', 'webhook delivery already received; a replayed delivery is refused');
      }
      if (verdict.event !== undefined && PING_EVENTS.has(verdict.event))
        return { status: 200, body: { accepted: false, reason: 'ping' } };
      opts.trigger();
      return { status: 202, body: { accepted: true, provider: verdict.provider } };
    },
  };
}

/** The same as a fastify plugin, keeping the body raw so signatures are checked over its bytes. */
export const webhookPlugin: FastifyPluginAsync<{ secret: string; trigger: () => void; path?: string }> = async (
  app,
  opts,
) => {
  const handler = webhookHandler(opts);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post(handler.path, async (req, reply) => {
    const res = await handler.handle(req.headers, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    return reply.code(res.status).send(res.body);
  });
};
