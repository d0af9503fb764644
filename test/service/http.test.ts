/** The service's HTTP face against a real API server: readiness follows caches and commits. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { useControlPlane, eventually } from '../support/control-plane.js';
import { CountingKubeConfig } from '../../src/observe/kube.js';
import { plan } from '../../src/plan/index.js';
import { directoryDesiredSource } from '../../src/service/directory-source.js';
import { startService, type Service } from '../../src/service/service.js';
import type { CloudProvider } from '../../src/cloud/provider.js';

describe('service HTTP: /healthz, /readyz, /metrics', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  let dir: string;
  let service: Service | undefined;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-http-'));
    mkdirSync(path.join(dir, 'specs'));
    writeFileSync(
      path.join(dir, 'drydock.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: http\npaths: [specs]\n',
    );
    // Invalid from the start: a NodeImage without its image.
    writeFileSync(
      path.join(dir, 'specs/image.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: worker\nspec:\n  strategy: replace\n',
    );
  });
  after(async () => {
    await service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is alive at once, not ready while no valid commit is loaded, ready once one is', async () => {
    const kc = new CountingKubeConfig();
    kc.loadFromString(cp().kubeconfig);
    service = await startService({
      kubeConfig: kc,
      source: directoryDesiredSource(dir),
      planner: (d, o, now) => plan(d, o, now),
      providers: {},
      cluster: '',
      logger: pino({ level: 'silent' }),
      listen: '127.0.0.1:0',
      leaderElection: false,
      pollIntervalMs: 200,
    });
    const url = service.url;
    assert.ok(url);
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    await eventually('caches synced', async () => service?.state().synced);
    const notReady = await fetch(`${url}/readyz`);
    assert.equal(notReady.status, 503);
    assert.match(await notReady.text(), /no valid commit yet \(newest dir-[0-9a-f]{12} was refused\)/);

    writeFileSync(
      path.join(dir, 'specs/image.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: os:v1\n  strategy: replace\n',
    );
    await eventually('ready', async () => (await fetch(`${url}/readyz`)).status === 200);
  });

  it('serves Prometheus metrics', async () => {
    const res = await fetch(`${service?.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    const text = await res.text();
    for (const name of [
      'drydock_reconcile_duration_seconds',
      'drydock_nodes',
      'drydock_spec_progress_ratio',
      'drydock_errors_total',
      'drydock_git_last_sync_age_seconds',
      'drydock_kube_api_requests_total',
      'drydock_leader',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    assert.match(text, /^drydock_errors_total\{kind="stalled",code="InvalidCommit"\} 1$/m);
    assert.match(text, /^drydock_leader 1$/m);
  });

  it('is not healthy any more once stopping', async () => {
    const s = service;
    assert.ok(s?.url);
    const url = s.url;
    await s.stop();
    service = undefined;
    const r = await fetch(`${url}/healthz`).then(
      (x) => x.status,
      () => 'closed',
    );
    assert.ok(r === 503 || r === 'closed');
  });

  it('fails liveness when a round hangs (a cloud call that never answers)', async () => {
    const hung = mkdtempSync(path.join(tmpdir(), 'drydock-http-hung-'));
    writeFileSync(
      path.join(hung, 'drydock.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: hung\npaths: [specs]\n',
    );
    mkdirSync(path.join(hung, 'specs'));
    writeFileSync(
      path.join(hung, 'specs/g.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: ScalingGroup\nmetadata:\n  name: w\nspec:\n  provider: sim\n  groupId: w\n  nodeImage: w\n  role: worker\n---\napiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: w\nspec:\n  image: os:v1\n  strategy: replace\n',
    );
    const never = new Promise<never>(() => undefined);
    const provider: CloudProvider = {
      name: 'sim',
      listGroups: () => never,
      describeGroup: () => never,
      setGroupImage: () => never,
      addCapacity: () => never,
      removeInstance: () => never,
      instanceForProviderID: () => undefined,
    };
    const kc = new CountingKubeConfig();
    kc.loadFromString(cp().kubeconfig);
    const s = await startService({
      kubeConfig: kc,
      source: directoryDesiredSource(hung),
      planner: (d, o, now) => plan(d, o, now),
      providers: { sim: provider },
      cluster: '',
      logger: pino({ level: 'silent' }),
      listen: '127.0.0.1:0',
      leaderElection: false,
      stuckAfterMs: 300,
      shutdownTimeoutMs: 200,
    });
    try {
      await eventually('a round started', async () => s.state().rounds > 0);
      const res = await eventually('liveness fails', async () => {
        const r = await fetch(`${s.url}/healthz`);
        return r.status === 503 ? r : undefined;
      });
      assert.match(await res.text(), /unhealthy: a reconcile has been running for \d+s/);
    } finally {
      // Bounded: a hung round does not hold shutdown (or the Lease) forever.
      await s.stop();
      rmSync(hung, { recursive: true, force: true });
    }
  });
});
