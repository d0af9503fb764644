/**
 * An independent count of the requests drydock makes to the API server: a plain-HTTP proxy on
 * loopback that forwards every request over TLS with the admin's client certificate and
 * records it. drydock is given a kubeconfig that points at the proxy, so the count does not
 * rely on drydock's own instrumentation. (client-node accepts a plain-HTTP server only with
 * insecure-skip-tls-verify set; there is no TLS on that hop to verify.)
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly watch: boolean;
  readonly lease: boolean;
  readonly at: number;
  /** The request body of a write (any method but GET), for telling writes apart by content. */
  body?: string;
  /** The API server's status code, once it answered. */
  status?: number;
  /** When the API server's answer began (ms since the epoch): its latency, seen from drydock's side. */
  answeredAt?: number;
}

export interface ProxyCounts {
  /** Requests other than lease renewals. */
  readonly requests: number;
  readonly leases: number;
  /** Every request seen so far, leases included: a mark for `seenSince`. */
  readonly total: number;
}

/** The requests seen, lease renewals counted apart. */
export function countsOf(requests: readonly ProxiedRequest[]): ProxyCounts {
  let leases = 0;
  for (const r of requests) if (r.lease) leases++;
  return { requests: requests.length - leases, leases, total: requests.length };
}

/** A request as a benchmark reports it: no body, and the query cut down to what cannot be secret. */
export interface SeenRequest {
  readonly method: string;
  /** The path with only the query parameters of READABLE_PARAMS' values kept (others: `KEY=…`). */
  readonly path: string;
  /** A watch (re)started: an informer's own stream, not a request a reconcile made. */
  readonly watch: boolean;
  readonly at: number;
  readonly status?: number;
}

/** Query parameters whose values say how a list or watch was made and hold nothing secret. */
const READABLE_PARAMS = new Set([
  'watch',
  'resourceVersion',
  'resourceVersionMatch',
  'timeoutSeconds',
  'allowWatchBookmarks',
  'limit',
  'labelSelector',
  'fieldSelector',
]);

/** The path with every query value outside READABLE_PARAMS (a continue token among them) elided. */
export function readablePath(path: string): string {
  const q = path.indexOf('?');
  if (q < 0) return path;
  const params = new URLSearchParams(path.slice(q + 1));
  const parts = [...params].map(([k, v]) => (READABLE_PARAMS.has(k) ? `${k}=${v}` : `${k}=…`));
  return `${path.slice(0, q)}?${parts.join('&')}`;
}

/** The requests from index `since` on, lease renewals left out, as a report shows them. */
export function seenSince(requests: readonly ProxiedRequest[], since: number): SeenRequest[] {
  return requests
    .slice(since)
    .filter((r) => !r.lease)
    .map((r) => ({
      method: r.method,
      path: readablePath(r.path),
      watch: r.watch,
      at: r.at,
      ...(r.status === undefined ? {} : { status: r.status }),
    }));
}

/** One line per request: time, method, path, whether a watch, the answer's status. */
export function describeSeen(r: SeenRequest): string {
  return `${new Date(r.at).toISOString()} ${r.method} ${r.path}${r.watch ? ' (watch)' : ''} → ${r.status ?? 'no answer yet'}`;
}

export interface CountingProxy {
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** A kubeconfig (YAML) whose cluster is this proxy. */
  readonly kubeconfig: string;
  close(): Promise<void>;
}

/** A path of the core Events collection (a create's, or a list's with its query). */
export const isEventPath = (path: string): boolean => /\/events(\?|$)/.test(path);

export interface CountingProxyOptions {
  /**
   * Writes the proxy answers itself (201, the body sent back) instead of forwarding, still
   * recorded: what a benchmark takes off the API server to see what they cost it.
   */
  readonly answerLocally?: (method: string, path: string) => boolean;
}

export async function startCountingProxy(admin: KubeConfig, o: CountingProxyOptions = {}): Promise<CountingProxy> {
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('admin kubeconfig has no cluster');
  const target = new URL(cluster.server);
  const tls: https.RequestOptions = {};
  await admin.applyToHTTPSOptions(tls);
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const seen: ProxiedRequest = {
      method: req.method ?? 'GET',
      path,
      watch: /[?&]watch=(true|1)/.test(path),
      lease: path.includes('/apis/coordination.k8s.io/'),
      at: Date.now(),
    };
    requests.push(seen);
    if (seen.method !== 'GET') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => (seen.body = Buffer.concat(chunks).toString('utf8')));
    }
    if (o.answerLocally?.(seen.method, path) === true) {
      req.on('end', () => {
        seen.status = 201;
        seen.answeredAt = Date.now();
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(seen.body);
      });
      return;
    }
    const upstream = https.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path,
        headers: { ...req.headers, host: target.host },
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
      },
      (up) => {
        seen.status = up.statusCode;
        seen.answeredAt = Date.now();
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: proxy, cluster: {server: "' + url + '", insecure-skip-tls-verify: true}}]',
    'users: [{name: proxy, user: {}}]',
    'contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]',
    'current-context: proxy',
    '',
  ].join('\n');
  return {
    url,
    requests,
    kubeconfig,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
