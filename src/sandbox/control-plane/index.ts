// A real Kubernetes control plane on loopback for tests and the sandbox: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and KWOK (fake nodes), started the
// way envtest starts its API server, on free ports, stopped as a whole.
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { KubeConfig } from '@kubernetes/client-node';

import { createCa, createServiceAccountKey, signCert, type Ca } from './certs.js';
import { ControlPlaneError } from './errors.js';
import { KWOK_NODE_ANNOTATION, KWOK_NODE_VALUE, kwokStages, type JobPodPlayer } from './kwok.js';
import { freePorts, httpGet, spawnComponent, waitFor, type Component } from './processes.js';

export { ControlPlaneError } from './errors.js';
export { fakeNode, kwokStages, KWOK_NODE_ANNOTATION, KWOK_NODE_VALUE, KWOK_TAINT, type FakeNodeOptions, type JobPodPlayer } from './kwok.js';

/** Kubernetes version the build script produces and the cache directory is keyed by. */
export const K8S_VERSION = '1.36.3';
export const REQUIRED_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl', 'kwok'] as const;
/** Service CIDR of the API server; the `kubernetes` Service gets its first address. */
export const SERVICE_CIDR = '10.0.0.0/24';
/** KWOK hands out pod IPs from this range. */
export const POD_CIDR = '10.244.0.0/16';

export type LogFn = (msg: string, fields?: object) => void;

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
}

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
  const hint = 'run `bash scripts/k8s-binaries.sh` (builds them from source into ' + cacheBinDir(env) +
    ' and prints the directory; cold build 20-60 min), or point DRYDOCK_K8S_BIN at a directory holding them';
  if (env.DRYDOCK_K8S_BIN) {
    const missing = missingIn(env.DRYDOCK_K8S_BIN);
    if (missing.length > 0) {
      throw new ControlPlaneError('binaries', `DRYDOCK_K8S_BIN=${env.DRYDOCK_K8S_BIN} lacks ${missing.join(', ')}`, { hint });
    }
    return env.DRYDOCK_K8S_BIN;
  }
  if (env.KUBEBUILDER_ASSETS && missingIn(env.KUBEBUILDER_ASSETS).length === 0) return env.KUBEBUILDER_ASSETS;
  const dir = cacheBinDir(env);
  const missing = missingIn(dir);
  if (missing.length > 0) {
    throw new ControlPlaneError('binaries', `Kubernetes binaries not found (missing in ${dir}: ${missing.join(', ')})`, { hint });
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

function kubeconfigYaml(server: string, caPem: string, user: string, certPem: string, keyPem: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: drydock-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caPem)}`,
    'users:',
    `- name: ${JSON.stringify(user)}`,
    '  user:',
    `    client-certificate-data: ${b64(certPem)}`,
    `    client-key-data: ${b64(keyPem)}`,
    'contexts:',
    '- name: drydock-test',
    '  context:',
    '    cluster: drydock-test',
    `    user: ${JSON.stringify(user)}`,
    'current-context: drydock-test',
    '',
  ].join('\n');
}

function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.KUBECONFIG; // never let a component pick up the developer's cluster
  return env;
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
  const pki = path.join(dataDir, 'pki');
  const logDir = path.join(dataDir, 'logs');
  await fs.mkdir(logDir, { recursive: true });
  const logs: Record<string, string> = {};
  const components: Component[] = [];
  installSignalHandlers();

  let stopping: Promise<void> | undefined;
  const stopAll = (removeDir: boolean): Promise<void> => {
    stopping ??= (async () => {
      // clients of the API server first, then the API server, then its storage
      const order = [['kwok', 'kube-scheduler', 'kube-controller-manager'], ['kube-apiserver'], ['etcd']];
      for (const names of order) {
        await Promise.all(components.filter((c) => names.includes(c.name)).map((c) => c.stop()));
      }
      if (removeDir) await fs.rm(dataDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    })();
    return stopping;
  };
  const start = (name: string, args: string[], env?: NodeJS.ProcessEnv): Component => {
    const logFile = path.join(logDir, `${name}.log`);
    logs[name] = logFile;
    const c = spawnComponent(name, path.join(binDir, name), args, { logFile, env: childEnv(env), cwd: dataDir });
    components.push(c);
    log('component started', { component: name, pid: c.pid, log: logFile });
    return c;
  };

  // placeholder so SIGINT during start-up also stops what has been started so far
  const partial = { stop: () => stopAll(!keepDataDir) } as ControlPlane;
  running.add(partial);
  try {
    // certificates
    const advertise = pickAdvertiseAddress();
    const ca: Ca = await createCa(pki);
    const serving = await signCert(ca, pki, {
      name: 'apiserver',
      commonName: 'kube-apiserver',
      altNames: [
        'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc',
        'DNS:kubernetes.default.svc.cluster.local', 'IP:127.0.0.1', 'IP:10.0.0.1', `IP:${advertise}`,
      ],
    });
    const admin = await signCert(ca, pki, { name: 'admin', commonName: 'drydock-admin', organizations: ['system:masters'] });
    const sa = await createServiceAccountKey(pki);
    const adminCert = await fs.readFile(admin.certFile, 'utf8');
    const adminKey = await fs.readFile(admin.keyFile, 'utf8');
    log('certificates ready', { ms: Date.now() - t0, dir: pki });

    const [etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kwokPort] = (await freePorts(6)) as [number, number, number, number, number, number];
    const server = `https://127.0.0.1:${apiPort}`;

    // etcd
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const etcd = start('etcd', [
      `--data-dir=${path.join(dataDir, 'etcd')}`,
      '--name=default',
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync=true',
      '--quota-backend-bytes=2147483648',
      '--log-level=warn',
    ]);
    await waitFor('etcd /health', { timeoutMs, watch: [etcd], blame: etcd }, async () => {
      const r = await httpGet(`${etcdUrl}/health`);
      return r.status === 200 && r.body.includes('"health":"true"') ? true : undefined;
    });
    log('etcd ready', { ms: Date.now() - t0, url: etcdUrl });

    // kube-apiserver
    const apiserver = start('kube-apiserver', [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--advertise-address=${advertise}`,
      `--cert-dir=${path.join(dataDir, 'apiserver-certs')}`,
      `--tls-cert-file=${serving.certFile}`,
      `--tls-private-key-file=${serving.keyFile}`,
      `--client-ca-file=${ca.certFile}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${sa.pubFile}`,
      `--service-account-signing-key-file=${sa.keyFile}`,
      '--authorization-mode=Node,RBAC',
      '--allow-privileged=true',
      '--enable-priority-and-fairness=false',
      '--v=1',
    ]);
    const adminTls = { ca: ca.certPem, cert: adminCert, key: adminKey };
    await waitFor('kube-apiserver /readyz', { timeoutMs, watch: [etcd, apiserver], blame: apiserver }, async () => {
      const r = await httpGet(`${server}/readyz`, adminTls);
      return r.status === 200 ? true : undefined;
    });
    log('kube-apiserver ready', { ms: Date.now() - t0, server, advertiseAddress: advertise });

    // controllers, scheduler and KWOK; all as cluster admins (system:masters): they are test
    // infrastructure, not what RBAC tests are about.
    const writeKubeconfig = async (name: string, user: string) => {
      const pair = await signCert(ca, pki, { name, commonName: user, organizations: ['system:masters'] });
      const file = path.join(dataDir, `${name}.kubeconfig`);
      await fs.writeFile(
        file,
        kubeconfigYaml(server, ca.certPem, user, await fs.readFile(pair.certFile, 'utf8'), await fs.readFile(pair.keyFile, 'utf8')),
        { mode: 0o600 },
      );
      return file;
    };
    const [kcmKubeconfig, schedKubeconfig, kwokKubeconfig] = await Promise.all([
      writeKubeconfig('kube-controller-manager', 'system:kube-controller-manager'),
      writeKubeconfig('kube-scheduler', 'system:kube-scheduler'),
      writeKubeconfig('kwok', 'system:kwok-controller'),
    ]);
    const kwokConfigFile = path.join(dataDir, 'kwok.yaml');
    await fs.writeFile(kwokConfigFile, kwokStages(opts.jobPods) + (opts.kwokConfig ? `\n---\n${opts.kwokConfig}` : ''));
    const kwokHome = path.join(dataDir, 'kwok-home');
    await fs.mkdir(kwokHome, { recursive: true });

    const kcm = start('kube-controller-manager', [
      `--kubeconfig=${kcmKubeconfig}`,
      '--controllers=*',
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      `--cert-dir=${path.join(dataDir, 'kcm-certs')}`,
      `--service-account-private-key-file=${sa.keyFile}`,
      `--root-ca-file=${ca.certFile}`,
      `--cluster-signing-cert-file=${ca.certFile}`,
      `--cluster-signing-key-file=${ca.keyFile}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--v=1',
    ]);
    const sched = start('kube-scheduler', [
      `--kubeconfig=${schedKubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedPort}`,
      '--v=1',
    ]);
    const kwok = start(
      'kwok',
      [
        `--kubeconfig=${kwokKubeconfig}`,
        `--config=${kwokConfigFile}`,
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=${KWOK_NODE_VALUE}`,
        '--node-lease-duration-seconds=40',
        `--cidr=${POD_CIDR}`,
        `--server-address=127.0.0.1:${kwokPort}`,
      ],
      { HOME: kwokHome }, // kwok also reads ~/.kwok/kwok.yaml; keep the developer's out
    );
    const all = [etcd, apiserver, kcm, sched, kwok];
    await Promise.all([
      waitFor('kube-controller-manager /healthz', { timeoutMs, watch: all, blame: kcm }, async () =>
        (await httpGet(`https://127.0.0.1:${kcmPort}/healthz`, { insecure: true })).status === 200 ? true : undefined),
      waitFor('kube-scheduler /healthz', { timeoutMs, watch: all, blame: sched }, async () =>
        (await httpGet(`https://127.0.0.1:${schedPort}/healthz`, { insecure: true })).status === 200 ? true : undefined),
      waitFor('kwok /healthz', { timeoutMs, watch: all, blame: kwok }, async () =>
        (await httpGet(`http://127.0.0.1:${kwokPort}/healthz`)).status === 200 ? true : undefined),
    ]);
    log('controllers, scheduler and kwok healthy', { ms: Date.now() - t0 });
    await waitFor('the default ServiceAccount in namespace default', { timeoutMs, watch: all, blame: kcm }, async () =>
      (await httpGet(`${server}/api/v1/namespaces/default/serviceaccounts/default`, adminTls)).status === 200 ? true : undefined);

    const kubeconfig = kubeconfigYaml(server, ca.certPem, 'drydock-admin', adminCert, adminKey);
    const kubeconfigPath = path.join(dataDir, 'admin.kubeconfig');
    await fs.writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });

    // After start-up, a component that dies is reported once (tests then fail on API errors).
    for (const c of all) {
      void c.exited.then((info) => {
        if (!stopping) log('component exited unexpectedly', { component: c.name, code: info.code, signal: info.signal, log: c.logFile });
      });
    }

    let userSeq = 0;
    const cp: ControlPlane = {
      kubeconfigPath,
      kubeconfig,
      binDir,
      server,
      dataDir,
      startupMs: Date.now() - t0,
      caPem: ca.certPem,
      logs,
      stop: async () => {
        await stopAll(!keepDataDir);
        running.delete(cp);
      },
      adminKubeConfig() {
        const kc = new KubeConfig();
        kc.loadFromString(kubeconfig);
        return kc;
      },
      async kubeconfigFor(user: string, groups: string[] = []) {
        const name = `user-${++userSeq}`;
        const pair = await signCert(ca, path.join(pki, 'users'), { name, commonName: user, organizations: groups });
        const yaml = kubeconfigYaml(server, ca.certPem, user, await fs.readFile(pair.certFile, 'utf8'), await fs.readFile(pair.keyFile, 'utf8'));
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
    running.delete(partial);
    running.add(cp);
    log('control plane ready', { startupMs: cp.startupMs, server, kubeconfig: kubeconfigPath, dataDir, binDir });
    return cp;
  } catch (err) {
    // keep the data directory (logs!) when start-up failed
    await stopAll(false);
    running.delete(partial);
    if (err instanceof ControlPlaneError) throw err;
    throw new ControlPlaneError('start', (err as Error).message, { hint: `see the logs in ${logDir}` });
  }
}

/** True if `dir` holds every binary the control plane needs. */
export function hasBinaries(dir: string): boolean {
  return existsSync(dir) && missingIn(dir).length === 0;
}
