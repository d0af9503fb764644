/**
 * The service's HTTP face (fastify): /healthz (the process and its loop are alive), /readyz
 * (caches synced and a valid commit loaded), /metrics (Prometheus), and the Git webhook route.
 * Webhook bodies are kept raw: signatures are computed over the exact bytes received.
 */
import { CodedError } from '../errors.js';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface WebhookHandler {
  /** e.g. /webhook */
  readonly path: string;
  handle(
    headers: Readonly<Record<string, string | string[] | undefined>>,
    body: Buffer,
  ): Promise<{ status: number; body: unknown }>;
}

export interface Readiness {
  readonly ready: boolean;
  /** What is missing, in words, when not ready. */
  readonly reasons: readonly string[];
}

export interface HttpOptions {
  readonly listen: string;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly healthy: () => { ok: boolean; reason?: string };
  readonly readiness: () => Readiness;
  readonly webhook?: WebhookHandler;
  /**
   * How long a client may take to send a whole request, headers and body (default 10 s, as long
   * as GitHub itself waits for a webhook answer): a slow client (slowloris) gets 408 and is
   * disconnected instead of holding a connection open.
   */
  readonly requestTimeoutMs?: number;
  /** Largest request body; a larger one gets 413 before it is read (default 5 MiB). */
  readonly bodyLimitBytes?: number;
}

export interface HttpServer {
  /** The bound address, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

export class ListenError extends CodedError<'listen', { readonly listen: string }> {
  override readonly name = 'ListenError';
  constructor(message: string, data: { readonly listen: string }) {
    super('listen', message, data);
  }
}

/** Parses "host:port", ":port" or "port". */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:(.*):)?(\d{1,5})$/.exec(listen.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw new ListenError(`--listen ${JSON.stringify(listen)} is not host:port; use e.g. :8080 or 127.0.0.1:8080`, {
      listen,
    });
  }
  const host = m[1] === undefined || m[1] === '' ? '0.0.0.0' : m[1].replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

export async function startHttp(opts: HttpOptions): Promise<HttpServer> {
  const { host, port } = parseListen(opts.listen);
  const requestTimeout = opts.requestTimeoutMs ?? 10_000;
  const app = Fastify({
    logger: false,
    bodyLimit: opts.bodyLimitBytes ?? 5 * 1024 * 1024,
    requestTimeout,
    // Node checks request deadlines on this interval (30 s by default), so it bounds how late
    // a slow client is cut off.
    http: { headersTimeout: requestTimeout, connectionsCheckingInterval: Math.min(1000, requestTimeout) },
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.get('/healthz', async (_req, reply) => {
    const h = opts.healthy();
    return reply.code(h.ok ? 200 : 503).send(h.ok ? 'ok\n' : `unhealthy: ${h.reason ?? 'unknown'}\n`);
  });
  app.get('/readyz', async (_req, reply) => {
    const r = opts.readiness();
    return reply.code(r.ready ? 200 : 503).send(r.ready ? 'ok\n' : `not ready: ${r.reasons.join('; ')}\n`);
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await opts.registry.metrics();
    return reply.header('content-type', opts.registry.contentType).send(body);
  });
  if (opts.webhook) {
    const hook = opts.webhook;
    app.post(hook.path, async (req, reply) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const res = await hook.handle(req.headers, body);
      return reply.code(res.status).send(res.body);
    });
  }
  try {
    const url = await app.listen({ host, port });
    opts.logger.info({ url }, 'http listening');
    return { url, app, close: () => app.close() };
  } catch (err) {
    await app.close().catch(() => undefined);
    throw new ListenError(
      `cannot listen on ${opts.listen}: ${err instanceof Error ? err.message : String(err)}; pick a free port with --listen`,
      {
        listen: opts.listen,
      },
    );
  }
}
