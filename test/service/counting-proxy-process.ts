/**
 * The counting proxy in a process of its own, for benchmarks that measure drydock's memory and
 * CPU from its process: relaying thousands of nodes' watch streams costs the relaying process
 * CPU, and the list responses it buffers leave the allocator holding pages, which an in-process
 * proxy charged to drydock. The parent forks this module with the admin kubeconfig's path; it
 * answers IPC messages `count` (requests and lease requests seen so far), `{ since }` (the
 * requests seen from that mark on, for a report of which they were) and `close`.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { countsOf, seenSince, startCountingProxy, type ProxyCounts, type SeenRequest } from './counting-proxy.js';

/** A counting proxy as its user sees it, wherever it runs. */
export interface ProxyCounter {
  readonly kubeconfig: string;
  counts(): Promise<ProxyCounts>;
  /** The requests (not lease renewals) seen from mark `since` (a `total` of counts()) on. */
  seen(since: number): Promise<SeenRequest[]>;
  close(): Promise<void>;
}

type Reply = { kubeconfig: string } | { counts: ProxyCounts } | { seen: SeenRequest[] };
type Ask = 'count' | 'close' | { since: number };

export async function startProxyProcess(adminKubeconfigPath: string): Promise<ProxyCounter> {
  const child = fork(fileURLToPath(import.meta.url), [adminKubeconfigPath], { stdio: 'inherit' });
  const waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      for (const w of waiting.splice(0)) w.reject(new Error(`the counting proxy's process exited with ${code}`));
      resolve();
    }),
  );
  child.on('message', (m) => waiting.shift()?.resolve(m as Reply));
  const next = (): Promise<Reply> => new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const first = await next();
  if (!('kubeconfig' in first)) throw new Error('the counting proxy did not start');
  return {
    kubeconfig: first.kubeconfig,
    async counts() {
      const reply = next();
      child.send('count');
      const r = await reply;
      if (!('counts' in r)) throw new Error('the counting proxy answered out of turn');
      return r.counts;
    },
    async seen(since) {
      const reply = next();
      child.send({ since } satisfies Ask);
      const r = await reply;
      if (!('seen' in r)) throw new Error('the counting proxy answered out of turn');
      return r.seen;
    },
    async close() {
      child.send('close');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(process.argv[2] ?? '');
  const proxy = await startCountingProxy(kc);
  const send = (m: Reply) => process.send?.(m);
  process.on('message', (m: Ask) => {
    if (m === 'count') send({ counts: countsOf(proxy.requests) });
    else if (typeof m === 'object') send({ seen: seenSince(proxy.requests, m.since) });
    else if (m === 'close') {
      // The upstream watch connections would keep this process alive: it ends here.
      void proxy.close().then(() => process.exit(0));
    }
  });
  send({ kubeconfig: proxy.kubeconfig });
}

// Imported by the parent for startProxyProcess: only the forked process runs the proxy.
if (import.meta.url === `file://${process.argv[1]}` && process.send) await main();
