// A real Kubernetes control plane on loopback for tests and the sandbox: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and KWOK (fake nodes), started the
// way envtest starts its API server, on free ports, stopped as a whole.
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { KubeConfig } from '@kubernetes/client-node';

import { signCert, type Ca } from './certs.js';
import { ControlPlaneError } from './errors.js';
import { httpGet, waitFor, type TlsOptions } from './processes.js';
import {
  ComponentSet,
  createCertificates,
  kubeconfigYaml,
  pickPorts,
  startApiserver,
  startControllers,
  startEtcd,
  type LogFn,
  type StartContext,
} from './startup.js';

export { ControlPlaneError } from './errors.js';
export { POD_CIDR, SERVICE_CIDR, type LogFn } from './startup.js';
export {
  fakeNode,
  kwokStages,
  KWOK_NODE_ANNOTATION,
  KWOK_NODE_VALUE,
  KWOK_TAINT,
  type FakeNodeOptions,
  type JobPodPlayer,
  type NodeHeartbeat,
} from './kwok.js';
import type { JobPodPlayer, NodeHeartbeat } from './kwok.js';

/** Kubernetes version the build script produces and the cache directory is keyed by. */
export const K8S_VERSION = '1.36.3';
export const REQUIRED_BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kwok',
] as const;
export interface ControlPlaneOptions {
  /** where certificates, etcd data, kubeconfigs and logs go; default: a new temp directory, removed by stop() */
  dataDir?: string;
  /** directory with the binaries; default: resolveBinDir() */
  binDir?: string;
  /** structured log: a fixed message plus fields; default: one line per message on stderr */
  log?: LogFn;
  /** extra KWOK configuration (multi-document YAML, e.g. more Stage objects) */
  kwokConfig?: string;
  /** who ends Job pods: KWOK at once (default), or a host player such as the sim cloud */
  jobPods?: JobPodPlayer;
  /** keep dataDir after stop() (default: keep only if it was given, or DRYDOCK_KEEP_CONTROL_PLANE=1) */
  keepDataDir?: boolean;
  /**
   * client QPS of the controller manager and the scheduler (burst twice that); default theirs
   * (20 and 50), which creates and binds pods at that rate: too slow for tens of thousands.
   * When set, the controller manager also runs 50 ReplicaSet and Deployment workers (default 5)
   * and KWOK runs unthrottled with more workers (startup.ts, KWOK_THROUGHPUT).
   */
  clientQps?: number;
  /**
   * slower node heartbeats for benchmark worlds of thousands of nodes: KWOK's lease duration and
   * status heartbeat, and the controller manager's node grace periods set to the lease's
   * duration; default KWOK's and the controller manager's own (40 s lease, 50 s grace)
   */
  nodeHeartbeat?: NodeHeartbeat;
  /** overall start-up timeout per wait, ms (default 90 000; DRYDOCK_CONTROL_PLANE_TIMEOUT_MS) */
  timeoutMs?: number;
}

export interface UserKubeConfig {
  user: string;
  groups: string[];
  kubeconfigPath: string;
  /** YAML, with the certificate and key embedded */
  kubeconfig: string;
  kubeConfig(): KubeConfig;
}

export interface ControlPlane {
  /** admin (system:masters) kubeconfig file */
  kubeconfigPath: string;
  /** the same, as YAML */
  kubeconfig: string;
  binDir: string;
  /** https://127.0.0.1:<port> */
  server: string;
  dataDir: string;
  /** wall time from startControlPlane() to ready, ms */
  startupMs: number;
  /** CA certificate (PEM) the API server's serving and client certificates chain to */
  caPem: string;
  /** log file per component: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok */
  logs: Record<string, string>;
  /** stops every process it started (idempotent); removes a temp dataDir */
  stop(): Promise<void>;
  /** a fresh KubeConfig for the admin user */
  adminKubeConfig(): KubeConfig;
  /** a client certificate and kubeconfig for `user` in `groups` (grant it rights with RBAC yourself) */
  kubeconfigFor(user: string, groups?: string[]): Promise<UserKubeConfig>;
  /**
   * Restarts etcd or kube-apiserver (a fault for reliability tests): stops it (SIGKILL when
   * `hard`, default), keeps it down `downMs` (default 0), starts it with the same flags and
   * resolves once the API server is ready again.
   */
  restartComponent(name: RestartableComponent, opts?: { hard?: boolean; downMs?: number }): Promise<void>;
}

export type RestartableComponent = 'etcd' | 'kube-apiserver';

function cacheBinDir(env: NodeJS.ProcessEnv): string {
  const cache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache');
  return path.join(cache, 'drydock', `k8s-${K8S_VERSION}`, 'bin');
}

function missingIn(dir: string): string[] {
  return REQUIRED_BINARIES.filter((b) => {
    try {
      const st = statSync(path.join(dir, b));
      return !st.isFile() || (st.mode & 0o111) === 0;
    } catch {
      return true;
    }
  });
}

/**
 * The directory holding the binaries: DRYDOCK_K8S_BIN if set (it must be complete), else
 * KUBEBUILDER_ASSETS if it holds all of them, else the build script's cache directory.
 */
export function resolveBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const hint =
    'run `bash scripts/k8s-binaries.sh` (builds them from source into ' +
    cacheBinDir(env) +
    ' and prints the directory; cold build 20-60 min), or point DRYDOCK_K8S_BIN at a directory holding them';
  if (env.DRYDOCK_K8S_BIN) {
    const missing = missingIn(env.DRYDOCK_K8S_BIN);
    if (missing.length > 0) {
      throw new ControlPlaneError('binaries', `DRYDOCK_K8S_BIN=${env.DRYDOCK_K8S_BIN} lacks ${missing.join(', ')}`, {
        hint,
      });
    }
    return env.DRYDOCK_K8S_BIN;
  }
  if (env.KUBEBUILDER_ASSETS && missingIn(env.KUBEBUILDER_ASSETS).length === 0) return env.KUBEBUILDER_ASSETS;
  const dir = cacheBinDir(env);
  const missing = missingIn(dir);
  if (missing.length > 0) {
    throw new ControlPlaneError(
      'binaries',
      `Kubernetes binaries not found (missing in ${dir}: ${missing.join(', ')})`,
      { hint },
    );
  }
  return dir;
}

const defaultLog: LogFn = (msg, fields) => {
  process.stderr.write(`control-plane: ${msg}${fields ? ' ' + JSON.stringify(fields) : ''}\n`);
};

/** An IPv4 address the API server may advertise: not loopback (the Endpoints API refuses those). */
export function pickAdvertiseAddress(): string {
  const ifaces = os.networkInterfaces();
  const v4 = (name: string) => (ifaces[name] ?? []).find((a) => a.family === 'IPv4' && !a.internal)?.address;
  try {
    // the default route's interface, as kube-apiserver itself would choose
    for (const line of readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const [iface, dest] = line.trim().split(/\s+/);
      if (iface && dest === '00000000') {
        const a = v4(iface);
        if (a) return a;
      }
    }
  } catch {
    /* not Linux */
  }
  for (const name of Object.keys(ifaces)) {
    const a = v4(name);
    if (a) return a;
  }
  // No usable interface (an isolated sandbox): any non-loopback address will do, since
  // nothing connects to it; 192.0.2.0/24 is reserved for documentation.
  return '192.0.2.10';
}

// --- signal handling: one handler for all control planes of this process --------------------

const running = new Set<ControlPlane>();
let signalsInstalled = false;

function installSignalHandlers(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    const handler = () => {
      const stops = [...running].map((cp) => cp.stop().catch(() => undefined));
      void Promise.all(stops).finally(() => {
        // If nobody else handles the signal, behave as if we had not caught it.
        if (process.listenerCount(sig) <= 1) {
          process.removeListener(sig, handler);
          process.kill(process.pid, sig);
        }
      });
    };
    process.on(sig, handler);
  }
}

// --- start ------------------------------------------------------------------------------------

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const t0 = Date.now();
  const log = opts.log ?? defaultLog;
  const timeoutMs = opts.timeoutMs ?? (Number(process.env.DRYDOCK_CONTROL_PLANE_TIMEOUT_MS) || 90_000);
  const binDir = opts.binDir ?? resolveBinDir();
  const missing = missingIn(binDir);
  if (missing.length > 0) {
    throw new ControlPlaneError('binaries', `${binDir} lacks ${missing.join(', ')}`, {
      hint: 'run `bash scripts/k8s-binaries.sh` and use the directory it prints',
    });
  }
  const ownDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'drydock-cp-')));
  const keepDataDir = opts.keepDataDir ?? (!ownDataDir || process.env.DRYDOCK_KEEP_CONTROL_PLANE === '1');
  const logDir = path.join(dataDir, 'logs');
  await fs.mkdir(logDir, { recursive: true });
  installSignalHandlers();
  const set = new ComponentSet(binDir, dataDir, logDir, log);
  const ctx: StartContext = { set, dataDir, pki: path.join(dataDir, 'pki'), timeoutMs, log, t0 };

  // placeholder so SIGINT during start-up also stops what has been started so far
  const partial = { stop: () => set.stopAll(!keepDataDir) } as ControlPlane;
  running.add(partial);
  try {
    const cp = await startComponents(ctx, {
      binDir,
      keepDataDir,
      kwokConfig: opts.kwokConfig,
      jobPods: opts.jobPods,
      clientQps: opts.clientQps,
      nodeHeartbeat: opts.nodeHeartbeat,
    });
    running.delete(partial);
    running.add(cp);
    log('control plane ready', {
      startupMs: cp.startupMs,
      server: cp.server,
      kubeconfig: cp.kubeconfigPath,
      dataDir,
      binDir,
    });
    return cp;
  } catch (err) {
    // keep the data directory (logs!) when start-up failed
    await set.stopAll(false);
    running.delete(partial);
    if (err instanceof ControlPlaneError) throw err;
    throw new ControlPlaneError('start', (err as Error).message, { hint: `see the logs in ${logDir}` });
  }
}

/** Certificates, etcd, the API server, then its clients; resolves once the cluster serves its default ServiceAccount. */
async function startComponents(
  ctx: StartContext,
  o: {
    binDir: string;
    keepDataDir: boolean;
    kwokConfig: string | undefined;
    jobPods: JobPodPlayer | undefined;
    clientQps: number | undefined;
    nodeHeartbeat: NodeHeartbeat | undefined;
  },
): Promise<ControlPlane> {
  const advertise = pickAdvertiseAddress();
  const certs = await createCertificates(ctx, advertise);
  const ports = await pickPorts();
  const server = `https://127.0.0.1:${ports.api}`;
  const { etcd, etcdUrl } = await startEtcd(ctx, ports);
  const adminTls = { ca: certs.ca.certPem, cert: certs.adminCert, key: certs.adminKey };
  const apiserver = await startApiserver(ctx, { certs, etcd, etcdUrl, port: ports.api, advertise, adminTls });
  const { kcm, all } = await startControllers(ctx, {
    certs,
    server,
    ports,
    kwokConfig: o.kwokConfig,
    jobPods: o.jobPods,
    clientQps: o.clientQps,
    nodeHeartbeat: o.nodeHeartbeat,
    running: [etcd, apiserver],
  });
  await waitFor(
    'the default ServiceAccount in namespace default',
    { timeoutMs: ctx.timeoutMs, watch: all, blame: kcm },
    async () =>
      (await httpGet(`${server}/api/v1/namespaces/default/serviceaccounts/default`, adminTls)).status === 200
        ? true
        : undefined,
  );

  const kubeconfig = kubeconfigYaml(server, certs.ca.certPem, 'drydock-admin', certs.adminCert, certs.adminKey);
  const kubeconfigPath = path.join(ctx.dataDir, 'admin.kubeconfig');
  await fs.writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });

  // After start-up, a component that dies is reported once (tests then fail on API errors).
  for (const c of all) {
    void c.exited.then((info) => {
      if (!ctx.set.isStopping)
        ctx.log('component exited unexpectedly', {
          component: c.name,
          code: info.code,
          signal: info.signal,
          log: c.logFile,
        });
    });
  }
  return controlPlaneHandle(ctx, {
    binDir: o.binDir,
    keepDataDir: o.keepDataDir,
    server,
    ca: certs.ca,
    kubeconfig,
    kubeconfigPath,
    adminTls,
  });
}

/** The running control plane as callers see it: its kubeconfigs, logs and stop(). */
function controlPlaneHandle(
  ctx: StartContext,
  p: {
    binDir: string;
    keepDataDir: boolean;
    server: string;
    ca: Ca;
    kubeconfig: string;
    kubeconfigPath: string;
    adminTls: TlsOptions;
  },
): ControlPlane {
  const { server, ca, kubeconfig } = p;
  const dataDir = ctx.dataDir;
  let userSeq = 0;
  const cp: ControlPlane = {
    kubeconfigPath: p.kubeconfigPath,
    kubeconfig,
    binDir: p.binDir,
    server,
    dataDir,
    startupMs: Date.now() - ctx.t0,
    caPem: ca.certPem,
    logs: ctx.set.logs,
    stop: async () => {
      await ctx.set.stopAll(!p.keepDataDir);
      running.delete(cp);
    },
    async restartComponent(name, o = {}) {
      const c = await ctx.set.restart(name, { hard: o.hard ?? true, downMs: o.downMs ?? 0 });
      await waitFor(
        'kube-apiserver /readyz after a restart',
        { timeoutMs: ctx.timeoutMs, watch: [c], blame: c },
        async () => ((await httpGet(`${server}/readyz`, p.adminTls)).status === 200 ? true : undefined),
      );
      ctx.log('component restarted', { component: name });
    },
    adminKubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfig);
      return kc;
    },
    async kubeconfigFor(user: string, groups: string[] = []) {
      const name = `user-${++userSeq}`;
      const pair = await signCert(ca, path.join(ctx.pki, 'users'), { name, commonName: user, organizations: groups });
      const yaml = kubeconfigYaml(
        server,
        ca.certPem,
        user,
        await fs.readFile(pair.certFile, 'utf8'),
        await fs.readFile(pair.keyFile, 'utf8'),
      );
      const file = path.join(dataDir, `${name}.kubeconfig`);
      await fs.writeFile(file, yaml, { mode: 0o600 });
      return {
        user,
        groups,
        kubeconfigPath: file,
        kubeconfig: yaml,
        kubeConfig() {
          const kc = new KubeConfig();
          kc.loadFromString(yaml);
          return kc;
        },
      };
    },
  };
  return cp;
}

/** True if `dir` holds every binary the control plane needs. */
export function hasBinaries(dir: string): boolean {
  return existsSync(dir) && missingIn(dir).length === 0;
}
