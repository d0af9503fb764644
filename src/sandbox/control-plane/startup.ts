// Starting the control plane's parts: certificates, then etcd, then the API server, then its
// clients (controllers, scheduler, KWOK), each waited for before the next needs it.
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { createCa, createServiceAccountKey, signCert, type Ca, type KeyPair } from './certs.js';
import {
  KWOK_NODE_ANNOTATION,
  KWOK_NODE_VALUE,
  kwokStages,
  withStatusHeartbeat,
  type JobPodPlayer,
  type NodeHeartbeat,
} from './kwok.js';
import { freePorts, httpGet, spawnComponent, waitFor, type Component, type TlsOptions } from './processes.js';
import { ControlPlaneError } from './errors.js';

/** Service CIDR of the API server; the `kubernetes` Service gets its first address. */
export const SERVICE_CIDR = '10.0.0.0/24';
/** KWOK hands out pod IPs from this range. */
export const POD_CIDR = '10.244.0.0/16';

export type LogFn = (msg: string, fields?: object) => void;

export function kubeconfigYaml(server: string, caPem: string, user: string, certPem: string, keyPem: string): string {
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

/** The processes of one control plane: started with their logs in one place, stopped in order. */
export class ComponentSet {
  readonly logs: Record<string, string> = {};
  readonly all: Component[] = [];
  private stopping: Promise<void> | undefined;
  /** How each component was started, so restart() can start it the same way. */
  private readonly specs = new Map<string, { args: string[]; env: NodeJS.ProcessEnv | undefined }>();

  constructor(
    private readonly binDir: string,
    private readonly dataDir: string,
    private readonly logDir: string,
    private readonly log: LogFn,
  ) {}

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  start(name: string, args: string[], env?: NodeJS.ProcessEnv): Component {
    this.specs.set(name, { args, env });
    const logFile = path.join(this.logDir, `${name}.log`);
    this.logs[name] = logFile;
    const c = spawnComponent(name, path.join(this.binDir, name), args, {
      logFile,
      env: childEnv(env),
      cwd: this.dataDir,
    });
    this.all.push(c);
    this.log('component started', { component: name, pid: c.pid, log: logFile });
    return c;
  }

  /**
   * Stops the running component `name` (SIGKILL at once when `hard`, else SIGTERM first),
   * waits `downMs`, and starts it again with the same arguments. The caller waits for it.
   */
  async restart(name: string, o: { hard: boolean; downMs: number }): Promise<Component> {
    const old = this.all.find((c) => c.name === name && c.running());
    const spec = this.specs.get(name);
    if (!old || !spec) {
      throw new ControlPlaneError(name, 'cannot be restarted: it is not running', {
        hint: 'restart only a component of a running control plane',
      });
    }
    this.log('component restarting', { component: name, hard: o.hard, downMs: o.downMs });
    await old.stop(o.hard ? 0 : 10_000);
    this.all.splice(this.all.indexOf(old), 1);
    await new Promise((r) => setTimeout(r, o.downMs));
    return this.start(name, spec.args, spec.env);
  }

  stopAll(removeDir: boolean): Promise<void> {
    this.stopping ??= (async () => {
      // clients of the API server first, then the API server, then its storage
      const order = [['kwok', 'kube-scheduler', 'kube-controller-manager'], ['kube-apiserver'], ['etcd']];
      for (const names of order) {
        await Promise.all(this.all.filter((c) => names.includes(c.name)).map((c) => c.stop()));
      }
      if (removeDir) await fs.rm(this.dataDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    })();
    return this.stopping;
  }
}

/** What every start-up step shares. */
export interface StartContext {
  readonly set: ComponentSet;
  readonly dataDir: string;
  readonly pki: string;
  readonly timeoutMs: number;
  readonly log: LogFn;
  /** When start-up began (ms since the epoch), for the timings in the log. */
  readonly t0: number;
}

export interface Certificates {
  readonly ca: Ca;
  readonly serving: KeyPair;
  readonly sa: { keyFile: string; pubFile: string };
  readonly adminCert: string;
  readonly adminKey: string;
}

export async function createCertificates(ctx: StartContext, advertise: string): Promise<Certificates> {
  const { pki } = ctx;
  const ca: Ca = await createCa(pki);
  const serving = await signCert(ca, pki, {
    name: 'apiserver',
    commonName: 'kube-apiserver',
    altNames: [
      'DNS:localhost',
      'DNS:kubernetes',
      'DNS:kubernetes.default',
      'DNS:kubernetes.default.svc',
      'DNS:kubernetes.default.svc.cluster.local',
      'IP:127.0.0.1',
      'IP:10.0.0.1',
      `IP:${advertise}`,
    ],
  });
  const admin = await signCert(ca, pki, {
    name: 'admin',
    commonName: 'drydock-admin',
    organizations: ['system:masters'],
  });
  const sa = await createServiceAccountKey(pki);
  const adminCert = await fs.readFile(admin.certFile, 'utf8');
  const adminKey = await fs.readFile(admin.keyFile, 'utf8');
  ctx.log('certificates ready', { ms: Date.now() - ctx.t0, dir: pki });
  return { ca, serving, sa, adminCert, adminKey };
}

export interface Ports {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly api: number;
  readonly kcm: number;
  readonly sched: number;
  readonly kwok: number;
}

export async function pickPorts(): Promise<Ports> {
  const [etcdClient, etcdPeer, api, kcm, sched, kwok] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { etcdClient, etcdPeer, api, kcm, sched, kwok };
}

export async function startEtcd(ctx: StartContext, ports: Ports): Promise<{ etcd: Component; etcdUrl: string }> {
  const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  const etcd = ctx.set.start('etcd', [
    `--data-dir=${path.join(ctx.dataDir, 'etcd')}`,
    '--name=default',
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=default=${peer}`,
    '--unsafe-no-fsync=true',
    '--quota-backend-bytes=2147483648',
    '--log-level=warn',
  ]);
  await waitFor('etcd /health', { timeoutMs: ctx.timeoutMs, watch: [etcd], blame: etcd }, async () => {
    const r = await httpGet(`${etcdUrl}/health`);
    return r.status === 200 && r.body.includes('"health":"true"') ? true : undefined;
  });
  ctx.log('etcd ready', { ms: Date.now() - ctx.t0, url: etcdUrl });
  return { etcd, etcdUrl };
}

export async function startApiserver(
  ctx: StartContext,
  p: { certs: Certificates; etcd: Component; etcdUrl: string; port: number; advertise: string; adminTls: TlsOptions },
): Promise<Component> {
  const { ca, serving, sa } = p.certs;
  const server = `https://127.0.0.1:${p.port}`;
  const apiserver = ctx.set.start('kube-apiserver', [
    `--etcd-servers=${p.etcdUrl}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${p.port}`,
    `--advertise-address=${p.advertise}`,
    `--cert-dir=${path.join(ctx.dataDir, 'apiserver-certs')}`,
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
  await waitFor(
    'kube-apiserver /readyz',
    { timeoutMs: ctx.timeoutMs, watch: [p.etcd, apiserver], blame: apiserver },
    async () => {
      const r = await httpGet(`${server}/readyz`, p.adminTls);
      return r.status === 200 ? true : undefined;
    },
  );
  ctx.log('kube-apiserver ready', { ms: Date.now() - ctx.t0, server, advertiseAddress: p.advertise });
  return apiserver;
}

/**
 * KWOK for tens of thousands of objects (with clientQps): its own client unthrottled (it
 * otherwise paces its status writes) and more workers playing node and pod stages and
 * renewing leases than its default few, which left pods Pending for minutes behind a queue.
 */
const KWOK_THROUGHPUT = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  disableQPSLimits: true
  nodePlayStageParallelism: 16
  podPlayStageParallelism: 16
  nodeLeaseParallelism: 16
  podsOnNodeSyncParallelism: 16`;

/**
 * The node lifecycle controller's grace periods for slower heartbeats: a node is unhealthy once
 * neither its lease nor its status has been renewed for the lease's whole duration (KWOK renews
 * the lease every quarter of it, so three renewals may be late before a node goes NotReady).
 */
function nodeGraceFlags(beat: NodeHeartbeat | undefined): string[] {
  if (!beat) return [];
  return [`--node-monitor-grace-period=${beat.leaseSeconds}s`, `--node-startup-grace-period=${beat.leaseSeconds}s`];
}

/**
 * kube-controller-manager, kube-scheduler and KWOK; all as cluster admins (system:masters):
 * they are test infrastructure, not what RBAC tests are about.
 */
export async function startControllers(
  ctx: StartContext,
  p: {
    certs: Certificates;
    server: string;
    ports: Ports;
    kwokConfig: string | undefined;
    jobPods: JobPodPlayer | undefined;
    clientQps: number | undefined;
    nodeHeartbeat: NodeHeartbeat | undefined;
    running: Component[];
  },
): Promise<{ kcm: Component; all: Component[] }> {
  const { dataDir, pki } = ctx;
  const { ca, sa } = p.certs;
  const writeKubeconfig = async (name: string, user: string) => {
    const pair = await signCert(ca, pki, { name, commonName: user, organizations: ['system:masters'] });
    const file = path.join(dataDir, `${name}.kubeconfig`);
    await fs.writeFile(
      file,
      kubeconfigYaml(
        p.server,
        ca.certPem,
        user,
        await fs.readFile(pair.certFile, 'utf8'),
        await fs.readFile(pair.keyFile, 'utf8'),
      ),
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
  const extra = [...(p.clientQps ? [KWOK_THROUGHPUT] : []), ...(p.kwokConfig ? [p.kwokConfig] : [])];
  const beat = p.nodeHeartbeat;
  const stages = beat ? withStatusHeartbeat(kwokStages(p.jobPods), beat.statusSeconds) : kwokStages(p.jobPods);
  await fs.writeFile(kwokConfigFile, [stages, ...extra].join('\n---\n'));
  const qps = p.clientQps ? [`--kube-api-qps=${p.clientQps}`, `--kube-api-burst=${2 * p.clientQps}`] : [];
  const kwokHome = path.join(dataDir, 'kwok-home');
  await fs.mkdir(kwokHome, { recursive: true });

  const kcm = ctx.set.start('kube-controller-manager', [
    `--kubeconfig=${kcmKubeconfig}`,
    '--controllers=*',
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${p.ports.kcm}`,
    `--cert-dir=${path.join(dataDir, 'kcm-certs')}`,
    `--service-account-private-key-file=${sa.keyFile}`,
    `--root-ca-file=${ca.certFile}`,
    `--cluster-signing-cert-file=${ca.certFile}`,
    `--cluster-signing-key-file=${ca.keyFile}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    ...qps,
    // At the default five workers the ReplicaSet controller created about ten pods a second on
    // a loaded machine whatever its QPS: each worker waits on its own round trips.
    ...(p.clientQps ? ['--concurrent-replicaset-syncs=50', '--concurrent-deployment-syncs=50'] : []),
    ...nodeGraceFlags(beat),
    '--v=1',
  ]);
  const sched = ctx.set.start('kube-scheduler', [
    `--kubeconfig=${schedKubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${p.ports.sched}`,
    ...qps,
    '--v=1',
  ]);
  const kwok = ctx.set.start(
    'kwok',
    [
      `--kubeconfig=${kwokKubeconfig}`,
      `--config=${kwokConfigFile}`,
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=${KWOK_NODE_VALUE}`,
      `--node-lease-duration-seconds=${beat?.leaseSeconds ?? 40}`,
      `--cidr=${POD_CIDR}`,
      `--server-address=127.0.0.1:${p.ports.kwok}`,
    ],
    { HOME: kwokHome }, // kwok also reads ~/.kwok/kwok.yaml; keep the developer's out
  );
  const all = [...p.running, kcm, sched, kwok];
  const healthy = (name: string, url: string, blame: Component, tls: TlsOptions = {}) =>
    waitFor(`${name} /healthz`, { timeoutMs: ctx.timeoutMs, watch: all, blame }, async () =>
      (await httpGet(url, tls)).status === 200 ? true : undefined,
    );
  await Promise.all([
    healthy('kube-controller-manager', `https://127.0.0.1:${p.ports.kcm}/healthz`, kcm, { insecure: true }),
    healthy('kube-scheduler', `https://127.0.0.1:${p.ports.sched}/healthz`, sched, { insecure: true }),
    healthy('kwok', `http://127.0.0.1:${p.ports.kwok}/healthz`, kwok),
  ]);
  ctx.log('controllers, scheduler and kwok healthy', { ms: Date.now() - ctx.t0 });
  return { kcm, all };
}
