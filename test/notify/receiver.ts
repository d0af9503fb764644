/**
 * A local HTTP receiver that records what arrives: every request (path, headers, body) and the
 * answer it gave. `mode` says how it answers: ok, fail N times with 500 then ok, or hang (never
 * answer until closed).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  status: number | 'hung';
  readonly at: number;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Bodies of the requests answered 2xx. */
  accepted(): string[];
  /** Fail the next `n` requests with 500. */
  failNext(n: number): void;
  hang(on: boolean): void;
  /** Answers every held request 200 (the receiver came back). */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let failures = 0;
  let hanging = false;
  const held: { res: http.ServerResponse; entry: Received }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const base = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      if (hanging) {
        const entry: Received = { ...base, status: 'hung' };
        received.push(entry);
        held.push({ res, entry });
        return;
      }
      const status = failures > 0 ? 500 : 200;
      if (failures > 0) failures -= 1;
      received.push({ ...base, status });
      res.writeHead(status).end(status === 200 ? 'ok' : 'down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    accepted: () => received.filter((r) => r.status === 200).map((r) => r.body),
    failNext: (n) => void (failures = n),
    hang: (on) => void (hanging = on),
    release: () => {
      for (const h of held.splice(0)) {
        h.entry.status = 200;
        h.res.writeHead(200).end('ok');
      }
    },
    close: async () => {
      for (const h of held.splice(0)) h.res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
