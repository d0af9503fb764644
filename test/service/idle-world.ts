/**
 * A steady cluster for measuring idle reconciles: `nodeCount` KWOK nodes, a sim cloud group
 * whose instances are some of them, a repository whose image they already run, and the service
 * in-process, reaching the API server only through a counting proxy.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { stringify } from 'yaml';
import { createProvider, parseSimConfigText } from '../../src/cloud/index.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/index.js';
import { CountingKubeConfig } from '../../src/observe/kube.js';
import { plan } from '../../src/plan/index.js';
import { directoryDesiredSource } from '../../src/service/directory-source.js';
import { startService, type Service } from '../../src/service/service.js';
import { fakeNode } from '../support/control-plane.js';
import { countsOf, seenSince, startCountingProxy, type CountingProxy, type SeenRequest } from './counting-proxy.js';
import { startProxyProcess, type ProxyCounter } from './counting-proxy-process.js';

export const IDLE_IMAGE = 'registry.example/node-os:v1.0.0';

export interface IdleWorld {
  readonly service: Service;
  /** The proxy, when it runs in this process (the default); see `proxyProcess`. */
  readonly proxy?: CountingProxy;
  readonly sim: RunningSimCloud;
  /** Requests (not lease renewals) the proxy has seen. */
  clusterRequests(): Promise<number>;
  /** Lease requests the proxy has seen. */
  leaseRequests(): Promise<number>;
  /** A mark in the proxy's record of requests, for `seenSince`. */
  mark(): Promise<number>;
  /** The requests (not lease renewals) the proxy saw from `mark` on, which they were. */
  seenSince(mark: number): Promise<SeenRequest[]>;
  /** Runs `rounds` reconciles and returns the non-lease requests made during them (`seen`: which). */
  idleRounds(rounds: number): Promise<{ requests: number; rounds: number; ms: number; seen: SeenRequest[] }>;
  close(): Promise<void>;
}

function writeRepo(dir: string): void {
  const doc = (kind: string, name: string, spec: unknown) =>
    stringify({ apiVersion: 'drydock.dev/v1alpha1', kind, metadata: { name }, spec });
  mkdirSync(path.join(dir, 'specs'), { recursive: true });
  writeFileSync(
    path.join(dir, 'drydock.yaml'),
    stringify({ apiVersion: 'drydock.dev/v1alpha1', kind: 'RepoConfig', cluster: 'idle', paths: ['specs'] }),
  );
  writeFileSync(
    path.join(dir, 'specs/group.yaml'),
    doc('ScalingGroup', 'workers', { provider: 'sim', groupId: 'workers', nodeImage: 'worker', role: 'worker' }),
  );
  writeFileSync(
    path.join(dir, 'specs/image.yaml'),
    doc('NodeImage', 'worker', { image: IDLE_IMAGE, strategy: 'replace' }),
  );
}

/** The name of the i-th node createNodes makes. */
export const idleNodeName = (i: number): string => `idle-${String(i).padStart(5, '0')}`;

/** 64 in flight by default: with 16, creating thousands of nodes waited on these round trips. */
export async function createNodes(kc: KubeConfig, count: number, concurrency = 64): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        await core.createNode({ body: fakeNode(idleNodeName(i)) });
      }
    }),
  );
}

export async function startIdleWorld(
  admin: KubeConfig,
  adminKubeconfigPath: string,
  nodeCount: number,
  groupSize = 3,
  /** Called once everything but the service runs (a benchmark's memory baseline). */
  beforeService?: () => Promise<void> | void,
  /** Runs the counting proxy in a process of its own, so its CPU and memory are not this one's. */
  proxyProcess = false,
  /** The service's logger (silent unless given: a benchmark may want its warnings, a watch failing). */
  logger: Logger = pino({ level: 'silent' }),
): Promise<IdleWorld> {
  await createNodes(admin, nodeCount);
  const dir = mkdtempSync(path.join(tmpdir(), 'drydock-idle-'));
  writeRepo(path.join(dir, 'repo'));
  const sim = await runSimCloud({
    config: parseSimConfigText(
      stringify({ bootDelaySeconds: 0, groups: [{ id: 'workers', size: groupSize, image: IDLE_IMAGE }] }),
    ),
    stateDir: path.join(dir, 'sim'),
    kubeconfigPath: adminKubeconfigPath,
    host: '127.0.0.1',
    port: 0,
  });
  const proxy = proxyProcess ? undefined : await startCountingProxy(admin);
  const counter: ProxyCounter = proxy
    ? {
        kubeconfig: proxy.kubeconfig,
        counts: async () => countsOf(proxy.requests),
        seen: async (since) => seenSince(proxy.requests, since),
        close: () => proxy.close(),
      }
    : await startProxyProcess(adminKubeconfigPath);
  const kc = new CountingKubeConfig();
  kc.loadFromString(counter.kubeconfig);
  await beforeService?.();
  const service = await startService({
    kubeConfig: kc,
    source: directoryDesiredSource(path.join(dir, 'repo')),
    planner: (d, o, now) => plan(d, o, now),
    providers: { sim: createProvider({ provider: 'sim', cloud: sim.cloud }) },
    cluster: 'idle',
    logger,
    leaderElection: {
      namespace: 'kube-system',
      name: 'drydock-idle',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    },
    pollIntervalMs: 3_600_000,
    resyncMs: 3_600_000,
  });
  const clusterRequests = async (): Promise<number> => (await counter.counts()).requests;
  const mark = async (): Promise<number> => (await counter.counts()).total;
  return {
    service,
    proxy,
    sim,
    clusterRequests,
    leaseRequests: async () => (await counter.counts()).leases,
    mark,
    seenSince: (since) => counter.seen(since),
    async idleRounds(rounds) {
      const start = service.state().rounds;
      const from = await mark();
      const t0 = Date.now();
      while (service.state().rounds < start + rounds) {
        service.poke();
        await new Promise((r) => setTimeout(r, 5));
      }
      const done = service.state().rounds - start;
      const seen = await counter.seen(from);
      return { requests: seen.length, rounds: done, ms: Date.now() - t0, seen };
    },
    async close() {
      await service.stop();
      await counter.close();
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
