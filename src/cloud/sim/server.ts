/**
 * The simulated cloud behind a small JSON HTTP API, so drydock reaches it over the network
 * the way it reaches a real cloud. Errors answer with the status of their kind, a
 * Retry-After header when throttled, and a body carrying the typed code (see http-api.ts).
 */
import Fastify, { LogController, type FastifyReply } from 'fastify';
import { pino, type Logger } from 'pino';
import { CloudError } from '../provider.js';
import type { SimCloud } from './cloud.js';
import type { SimFaultConfig } from './config.js';
import { HTTP_STATUS_BY_CODE, errorBody } from './http-api.js';

export interface SimServerOptions {
  readonly cloud: SimCloud;
  /** Default 127.0.0.1: the simulator has no authentication, so it stays on loopback unless told. */
  readonly host?: string;
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number;
  readonly logger?: Logger;
}

export interface SimServer {
  /** Base URL, e.g. http://127.0.0.1:7070 */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

type Params = { groupId: string; instanceId?: string };

function bad(message: string): CloudError {
  return new CloudError('Permanent', `sim cloud API: ${message}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sendError(reply: FastifyReply, err: CloudError): FastifyReply {
  if (err.code === 'Throttled') reply.header('retry-after', String(err.data.retryAfterSeconds ?? 1));
  return reply.status(HTTP_STATUS_BY_CODE[err.code]).send(errorBody(err));
}

export function buildSimApp(cloud: SimCloud, logger: Logger) {
  // Ids of other providers can be long (Azure resource ids); the default limit is 100.
  const app = Fastify({
    loggerInstance: logger,
    // Requests are logged by the handlers that matter, with fixed messages.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: 2048 },
  });

  app.setErrorHandler((err, request, reply) => {
    if (err instanceof CloudError) {
      request.log.info({ method: request.method, url: request.url, code: err.code }, 'sim cloud request refused');
      return sendError(reply, err);
    }
    const status = (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendError(
        reply,
        bad(`${request.method} ${request.url}: ${err instanceof Error ? err.message : 'bad request'}`),
      );
    }
    request.log.error(
      { method: request.method, url: request.url, reason: err instanceof Error ? err.name : 'unknown' },
      'sim cloud request failed',
    );
    return sendError(reply, new CloudError('Transient', 'sim cloud API: internal error; retry'));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(
        errorBody(bad(`no route ${request.method} ${request.url.split('?')[0] ?? ''}; see the sim cloud API routes`)),
      ),
  );

  app.get('/healthz', async () => ({ ok: true }));

  app.get('/groups', async () => ({ groups: await cloud.listGroups() }));

  app.get<{ Params: Params }>('/groups/:groupId', async (request) => cloud.describeGroup(request.params.groupId));

  app.put<{ Params: Params; Body: unknown }>('/groups/:groupId/image', async (request, reply) => {
    const body = request.body;
    if (!isRecord(body) || typeof body['image'] !== 'string') {
      throw bad(`PUT image of group "${request.params.groupId}": body must be {"image": "<name>"}`);
    }
    await cloud.setGroupImage(request.params.groupId, body['image']);
    return reply.status(204).send();
  });

  app.post<{ Params: Params; Body: unknown }>('/groups/:groupId/capacity', async (request) => {
    const body = request.body;
    if (!isRecord(body) || typeof body['count'] !== 'number') {
      throw bad(`POST capacity of group "${request.params.groupId}": body must be {"count": <whole number>}`);
    }
    return { instanceIds: await cloud.addCapacity(request.params.groupId, body['count']) };
  });

  app.delete<{ Params: Params }>('/groups/:groupId/instances/:instanceId', async (request, reply) => {
    await cloud.removeInstance(request.params.groupId, request.params.instanceId ?? '');
    return reply.status(204).send();
  });

  app.post<{ Params: Params; Body: unknown }>('/groups/:groupId/bottlerocket/releases', async (request, reply) => {
    const body = request.body;
    if (!isRecord(body) || typeof body['version'] !== 'string') {
      throw bad(`POST Bottlerocket release of group "${request.params.groupId}": body must be {"version": "X.Y.Z"}`);
    }
    await cloud.publishBottlerocketRelease(request.params.groupId, body['version']);
    return reply.status(204).send();
  });

  app.get('/faults', async () => cloud.faultSettings);

  app.put<{ Body: unknown }>('/faults', async (request, reply) => {
    const merged = mergeFaults(cloud.faultSettings, request.body);
    await cloud.configureFaults(merged);
    request.log.info({ faults: merged }, 'fault settings changed');
    return reply.status(204).send();
  });

  app.post<{ Body: unknown }>('/faults/inject', async (request, reply) => {
    const body = request.body;
    const count = isRecord(body) ? (body['count'] ?? 1) : undefined;
    const kind = isRecord(body) ? body['kind'] : undefined;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
      throw bad('inject faults: "count" must be a whole number from 1 to 1000');
    }
    if (kind === 'Throttled' || kind === 'Transient') await cloud.injectApiFaults(kind, count);
    else if (kind === 'BootFailure') await cloud.failNextBoots(count);
    else
      throw bad(`inject faults: "kind" must be "Throttled", "Transient" or "BootFailure", not ${JSON.stringify(kind)}`);
    return reply.status(204).send();
  });

  return app;
}

const RATE_FIELDS = ['bootFailureRate', 'throttleRate', 'transientRate'] as const;

/** Fault settings with `patch` applied; refuses anything out of range, naming the field. */
export function mergeFaults(current: SimFaultConfig, patch: unknown): SimFaultConfig {
  if (!isRecord(patch)) throw bad('fault settings: body must be a JSON object');
  const known = new Set(['seed', 'retryAfterSeconds', 'latencyMs', ...RATE_FIELDS]);
  for (const key of Object.keys(patch)) if (!known.has(key)) throw bad(`fault settings: unknown field "${key}"`);
  const next = { ...current, latencyMs: { ...current.latencyMs } };
  for (const field of RATE_FIELDS) {
    const v = patch[field];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      throw bad(`fault settings: ${field} must be a number from 0 to 1`);
    next[field] = v;
  }
  const wholeNumber = (field: string, v: unknown, min: number, max: number): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw bad(`fault settings: ${field} must be a whole number from ${min} to ${max}`);
    }
    return v;
  };
  if (patch['seed'] !== undefined) next.seed = wholeNumber('seed', patch['seed'], 0, 4294967295);
  if (patch['retryAfterSeconds'] !== undefined)
    next.retryAfterSeconds = wholeNumber('retryAfterSeconds', patch['retryAfterSeconds'], 1, 3600);
  const latency = patch['latencyMs'];
  if (latency !== undefined) {
    if (!isRecord(latency)) throw bad('fault settings: latencyMs must be {"min": ms, "max": ms}');
    if (latency['min'] !== undefined) next.latencyMs.min = wholeNumber('latencyMs.min', latency['min'], 0, 60000);
    if (latency['max'] !== undefined) next.latencyMs.max = wholeNumber('latencyMs.max', latency['max'], 0, 60000);
    if (next.latencyMs.min > next.latencyMs.max)
      throw bad('fault settings: latencyMs.min must not be larger than latencyMs.max');
  }
  return next;
}

/** Starts the API; resolves once it listens. */
export async function startSimServer(options: SimServerOptions): Promise<SimServer> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const app = buildSimApp(options.cloud, logger);
  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${urlHost}:${port}`;
  logger.info({ url }, 'sim cloud API listening');
  return {
    url,
    port,
    close: async () => {
      await app.close();
    },
  };
}
