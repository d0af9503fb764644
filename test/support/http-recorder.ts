/**
 * A loopback HTTP server standing in for a cloud API in tests: it records every request
 * (method, path with query, parsed JSON body) and answers through a route table the test
 * writes from the API's documented shapes.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, e.g. /compute/v1/projects/p/zones/z/instanceGroupManagers/m?alt=json */
  readonly path: string;
  readonly body: unknown;
  readonly headers: IncomingMessage['headers'];
}

export interface Answer {
  readonly status?: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** A handler may answer later (a call that blocks, as a long-running operation's wait does). */
export type Handler = (req: RecordedRequest) => Answer | undefined | Promise<Answer | undefined>;

export interface HttpRecorder {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers matching requests with `answer` (first registered route that answers wins); `once` drops it after one use. */
  route(method: string, path: RegExp | string, answer: Answer | Handler, opts?: { once?: boolean }): void;
  /** Forget routes and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

/** `tls`: serve HTTPS with this key and certificate (clients that insist on TLS, e.g. for bearer tokens). */
export async function startHttpRecorder(tls?: { key: string; cert: string }): Promise<HttpRecorder> {
  let routes: { method: string; path: RegExp | string; answer: Answer | Handler; once: boolean }[] = [];
  const requests: RecordedRequest[] = [];
  const listener: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    const answerRequest = async (): Promise<void> => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = text;
      }
      // Node 26's URL handling leaves an empty query ("…/workers?") where Node 20 and 22 drop it;
      // the same request either way, so it is recorded without it.
      const url = (req.url ?? '').replace(/\?$/, '');
      const recorded: RecordedRequest = { method: req.method ?? '', path: url, body, headers: req.headers };
      requests.push(recorded);
      const pathOnly = recorded.path.split('?')[0] ?? '';
      let answer: Answer | undefined;
      for (const r of routes) {
        if (r.method !== recorded.method) continue;
        if (typeof r.path === 'string' ? r.path !== pathOnly : !r.path.test(recorded.path)) continue;
        answer = typeof r.answer === 'function' ? await r.answer(recorded) : r.answer;
        if (answer) {
          if (r.once) routes = routes.filter((x) => x !== r);
          break;
        }
      }
      answer ??= {
        status: 404,
        body: { error: { code: 404, message: `no route for ${recorded.method} ${recorded.path}` } },
      };
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    };
    req.on('end', () => void answerRequest());
  };
  const server: Server = tls ? createTlsServer(tls, listener) : createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    route: (method, path, answer, opts = {}) => {
      routes.push({ method, path, answer, once: opts.once === true });
    },
    reset: () => {
      routes = [];
      requests.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A throwaway self-signed certificate for 127.0.0.1 (openssl), for startHttpRecorder's tls. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'drydock-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
