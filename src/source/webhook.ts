/**
 * The webhook receiver: a push notification makes drydock fetch at once instead of at the next
 * poll. The request must prove it knows the shared secret, over the exact bytes received:
 *   GitHub   X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>
 *   GitLab   X-Gitlab-Token: <secret>
 *   generic  X-Drydock-Signature: sha256=<hex HMAC-SHA256 of the body>
 * Every comparison is constant-time. A wrong or missing proof gets 401 and fetches nothing.
 * The secret comes from DRYDOCK_WEBHOOK_SECRET or --webhook-secret-file, never a flag's value.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { GitSourceError } from './errors.js';

export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

export type WebhookProvider = 'github' | 'gitlab' | 'generic';

export type WebhookVerdict =
  | { readonly ok: true; readonly provider: WebhookProvider; readonly event?: string }
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
    return hmacMatches(secret, body, github)
      ? { ok: true, provider: 'github', ...(event ? { event } : {}) }
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
}): {
  readonly path: string;
  handle(headers: WebhookHeaders, body: Buffer): Promise<WebhookResponse>;
} {
  return {
    path: opts.path ?? '/webhook',
    async handle(headers, body) {
      const verdict = verifyWebhook(headers, body, opts.secret);
      if (!verdict.ok) {
        opts.onRejected?.(verdict.reason);
        return {
          status: 401,
          body: {
            error:
              verdict.reason === 'missing-signature' ? 'missing webhook signature' : 'webhook signature does not match',
          },
        };
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
