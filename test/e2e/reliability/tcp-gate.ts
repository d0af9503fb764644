/**
 * A TCP relay in front of a server that a test can take down and bring back on the same port:
 * while down, connections are refused and open ones are cut, as when a Git host is offline.
 */
import net from 'node:net';

export interface TcpGate {
  /** http://127.0.0.1:<port>, the address clients use. */
  readonly url: string;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpGate(targetPort: number): Promise<TcpGate> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const down = async (): Promise<void> => {
    if (!server.listening) return;
    const closed = new Promise((r) => server.close(r));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    down,
    up: async () => {
      if (!server.listening) await listen(port);
    },
    close: down,
  };
}
