/**
 * Hostile commits, secrets and least privilege, on the running service (two replicas of
 * `drydock run` as deploy/'s ServiceAccount, every API call through a counting proxy; the
 * real control plane, the sim cloud, a real Git server):
 *  - a seeded part of the hostile corpus pushed as commits: each refused with a located error
 *    in errors.yaml, no cluster write and no cloud change, no crash, memory bounded
 *    (DRYDOCK_HOSTILE_SERVICE_CASES=500 pushes the whole corpus, 500 cases over this fleet);
 *  - canary secrets (Git token and password, webhook secret, cloud credentials) found nowhere:
 *    logs, Events, the status branch's files and messages, metrics, plan and status output,
 *    error messages;
 *  - every API call recorded in a rollout, a NodeOp with a reboot and a relayed webhook is
 *    allowed by deploy/'s RBAC (SubjectAccessReviews), and RBAC grants nothing unrecorded.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { strict as assert } from 'node:assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments, parse, stringify } from 'yaml';
import { startCountingProxy, type CountingProxy } from '../service/counting-proxy.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { hostileCorpus, seededSubset } from '../reliability/hostile-corpus.js';
import { CANARY, CANARY_AWS_ENV, drydockCli, findCanaries, serviceOutputs } from './canaries.js';
import { allowed, apiCallOf, callKey, type ApiCall } from './api-calls.js';
import {
  applyDeployRbac,
  drydockArgs,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  ROOT,
  serviceAccountKubeconfig,
  startDrydockChild,
  startWorld,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetEntry,
  type FleetRepo,
} from './world.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';

const NS = 'drydock-system';
const SA = 'system:serviceaccount:drydock-system:drydock';
const SA_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:drydock-system', 'system:authenticated'];
const TOKEN_USER = { username: 'x-access-token', password: CANARY.token };
const READER = { username: 'reader', password: CANARY.password };
const HOSTILE_CASES = Number(process.env['DRYDOCK_HOSTILE_SERVICE_CASES'] ?? 30);

function rssBytes(pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** Writes drydock's Git-changing and cloud-changing requests apart from its Lease and Events. */
function writes(proxy: CountingProxy, from: number): string[] {
  return proxy.requests
    .slice(from)
    .filter((r) => r.method !== 'GET' && !r.lease)
    .map((r) => `${r.method} ${r.path}`);
}

describe('e2e: hostile commits, secrets and least privilege on the running service', function () {
  this.timeout(900_000);
  const cp = useControlPlane({ jobPods: 'host' });
  const dirs: string[] = [];
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let proxy: CountingProxy;
  let leader: DrydockChild;
  let standby: DrydockChild;
  const outputs: string[] = [];
  /** The last hostile case's files, undone by the next push. */
  let leftover: Record<string, FleetEntry> = {};

  before(async function () {
    this.timeout(180_000);
    ({ sim, repo } = await startWorld(cp(), dirs, [TOKEN_USER, READER]));
    const admin = cp().adminKubeConfig();
    await applyDeployRbac(admin);
    const sa = new KubeConfig();
    sa.loadFromFile(await serviceAccountKubeconfig(cp()));
    proxy = await startCountingProxy(sa);
    const kubeconfig = path.join(tempDir('drydock-e2e-sec-'), 'proxy.kubeconfig');
    dirs.push(path.dirname(kubeconfig));
    writeFileSync(kubeconfig, proxy.kubeconfig);
    const env = {
      DRYDOCK_GIT_USERNAME: TOKEN_USER.username,
      DRYDOCK_GIT_PASSWORD: '',
      DRYDOCK_GIT_TOKEN: CANARY.token,
      DRYDOCK_WEBHOOK_SECRET: CANARY.webhook,
      ...CANARY_AWS_ENV,
    };
    const start = (n: number): DrydockChild => {
      const cache = tempDir(`drydock-e2e-sec-cache${n}-`);
      dirs.push(cache);
      return startDrydockChild(drydockArgs(repo, kubeconfig, sim.url, cache, NS), env);
    };
    leader = start(1);
    await eventually('drydock ready', async () => (await fetch(`${await leader.url}/readyz`)).ok, {
      timeoutMs: 60_000,
    });
    standby = start(2);
    await eventually('the status branch written', async () => (await repo.statusFile('README.md')) !== undefined, {
      timeoutMs: 60_000,
    });
  });

  after(async function () {
    this.timeout(180_000);
    // Both replicas stop before the proxy they talk through.
    for (const child of [standby, leader]) {
      if (!child) continue;
      child.kill('SIGTERM');
      const stopped = await Promise.race([child.exited.then(() => true), sleep(30_000).then(() => false)]);
      if (!stopped) {
        process.stderr.write(
          `      (a replica did not stop within 30 s of SIGTERM; killed)\n${child.lines.slice(-15).join('\n')}\n`,
        );
        child.kill('SIGKILL');
        await child.exited;
      }
    }
    await proxy?.close();
    await stopWorld({ sim, repo, dirs });
  });

  async function signedWebhook(url: string, delivery: string): Promise<number> {
    const { createHmac } = await import('node:crypto');
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const sig = createHmac('sha256', CANARY.webhook).update(body).digest('hex');
    const r = await fetch(`${url}/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': delivery,
        'x-hub-signature-256': `sha256=${sig}`,
      },
      body,
    });
    return r.status;
  }

  it('refuses every hostile commit with a located error in errors.yaml; no write, no cloud change, no crash', async function () {
    this.timeout(Math.max(900_000, HOSTILE_CASES * 60_000)); // the whole corpus: about 25 min
    // Every hostile commit also moves the workers to v2: applied even in part, it would act.
    const base = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V1 });
    const cases = seededSubset(hostileCorpus(base, 7), HOSTILE_CASES, 7);
    const cloudBefore = JSON.stringify(sim.cloud.inspectGroup('workers'));
    const from = proxy.requests.length;
    const rssBefore = rssBytes(leader.proc.pid);
    let previous: Record<string, FleetEntry> = {};
    const started = Date.now();
    const failures: string[] = [];
    for (const [i, c] of cases.entries()) {
      // Undo the previous case's extra files, then write this one over the base.
      const undo = Object.fromEntries(Object.keys(previous).map((f) => [f, f in base ? base[f]! : null]));
      const files: Record<string, FleetEntry> = { ...undo, ...base, ...c.changes };
      previous = { ...c.changes };
      const commit = await repo.push(files, `hostile ${i}: ${c.category}`);
      await signedWebhook(await leader.url, `hostile-${i}`);
      try {
        await eventually(
          `errors.yaml for ${c.name.slice(0, 80)}`,
          async () => {
            const text = await repo.statusFile('errors.yaml');
            if (text === undefined) return false;
            const doc = parse(text) as { commit?: string; errors?: { file: string; line: number; column: number }[] };
            if (doc.commit !== commit) return false;
            const errs = doc.errors ?? [];
            return (
              errs.every((e) => e.line >= 1 && e.column >= 1) &&
              errs.some((e) => e.file === c.expect.file && (c.expect.line === undefined || e.line === c.expect.line))
            );
          },
          { timeoutMs: 60_000 },
        );
      } catch (err) {
        failures.push(`[${c.category}] ${c.name.slice(0, 120)}: ${(err as Error).message.slice(0, 300)}`);
      }
      assert.equal(leader.proc.exitCode, null, `drydock exited after ${c.name}`);
      if ((i + 1) % 50 === 0) {
        const s = ((Date.now() - started) / 1000).toFixed(0);
        process.stderr.write(
          `      (${i + 1} of ${cases.length} hostile commits sent, ${failures.length} not refused as expected, ${s} s)\n`,
        );
      }
    }
    const seconds = (Date.now() - started) / 1000;
    const rssGrowth = rssBytes(leader.proc.pid) - rssBefore;
    process.stderr.write(
      `      (${cases.length} hostile commits refused through the service in ${seconds.toFixed(0)} s; RSS ${rssGrowth >= 0 ? '+' : ''}${Math.round(rssGrowth / 2 ** 20)} MiB)\n`,
    );
    leftover = previous;
    assert.deepEqual(failures, []);
    assert.deepEqual(writes(proxy, from), [], 'no cluster write but the Lease');
    assert.equal(JSON.stringify(sim.cloud.inspectGroup('workers')), cloudBefore, 'the cloud is untouched');
    assert.ok(rssGrowth < 256 * 2 ** 20, `RSS grew by ${rssGrowth} bytes`);
    assert.equal(standby.proc.exitCode, null);
  });

  it('rolls out, runs a NodeOp with a reboot and relays a webhook, all as the ServiceAccount', async () => {
    const kc = cp().adminKubeConfig();
    const base = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V1 });
    const undo = Object.fromEntries(Object.keys(leftover).map((f) => [f, f in base ? base[f]! : null]));
    await repo.push({ ...undo, ...base }, 'images: workers on v2');
    await eventually(
      'workers on v2',
      async () => {
        const ns = (await kc.makeApiClient(CoreV1Api).listNode()).items.filter(
          (n) => n.metadata?.labels?.['sim.drydock.dev/group'] === 'workers',
        );
        return ns.length === 6 && ns.every((n) => n.metadata?.annotations?.['sim.drydock.dev/image'] === IMAGE_V2);
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    const core = kc.makeApiClient(CoreV1Api);
    const worker = (await core.listNode()).items.find(
      (n) => n.metadata?.labels?.['sim.drydock.dev/group'] === 'workers',
    );
    const name = worker?.metadata?.name ?? '';
    await core.patchNode({
      name,
      body: [{ op: 'add', path: '/metadata/labels/e2e.drydock.dev~1op', value: 'yes' }],
    });
    await repo.push(
      {
        'clusters/op.yaml': stringify({
          apiVersion: 'drydock.dev/v1alpha1',
          kind: 'NodeOp',
          metadata: { name: 'patch' },
          spec: {
            nodeSelector: { matchLabels: { 'e2e.drydock.dev/op': 'yes' } },
            image: 'busybox:1.36',
            command: ['sh', '-c', 'echo patched'],
            cordon: true,
            rebootOnSuccess: true,
            backoffLimit: 0,
          },
        }),
      },
      'ops: patch one worker',
    );
    await eventually(
      'the NodeOp done on its node',
      async () => {
        const n = await core.readNode({ name });
        return n.metadata?.annotations?.['nodeop.drydock.dev/patch'] !== undefined && n.spec?.unschedulable !== true;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    // A webhook at the standby is relayed to the leader through the Lease.
    assert.equal(await signedWebhook(await standby.url, 'relay-1'), 202);
    assert.equal(await signedWebhook(await standby.url, 'relay-1'), 409, 'a replayed delivery');
    await eventually('the relay patched the Lease', async () =>
      proxy.requests.some((r) => r.method === 'PATCH' && r.lease),
    );
  });

  it('every recorded API call is allowed by deploy/ RBAC, and RBAC grants nothing unrecorded', async () => {
    const admin = cp().adminKubeConfig();
    const calls = new Map<string, ApiCall>();
    for (const r of proxy.requests) {
      const c = apiCallOf(r);
      calls.set(callKey(c), c);
    }
    const denied: string[] = [];
    for (const [key, call] of calls) if (!(await allowed(admin, SA, SA_GROUPS, call))) denied.push(key);
    const rbac = parseAllDocuments(readFileSync(path.join(ROOT, 'deploy', 'rbac.yaml'), 'utf8')).map(
      (d) =>
        d.toJS() as {
          kind: string;
          metadata: { namespace?: string };
          rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
        },
    );
    const unused: string[] = [];
    let grants = 0;
    for (const role of rbac.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role'))
      for (const rule of role.rules ?? [])
        for (const group of rule.apiGroups)
          for (const res of rule.resources)
            for (const verb of rule.verbs) {
              grants += 1;
              const [resource, subresource = ''] = res.split('/');
              const used = [...calls.values()].some(
                (c) =>
                  c.nonResource === undefined &&
                  c.verb === verb &&
                  c.group === group &&
                  c.resource === resource &&
                  c.subresource === subresource &&
                  (role.kind === 'ClusterRole' || c.namespace === role.metadata.namespace),
              );
              if (!used) unused.push(`${role.kind} ${verb} ${group || 'core'}/${res}`);
            }
    process.stderr.write(
      `      (${calls.size} distinct API calls recorded, ${calls.size - denied.length} allowed; ${grants} RBAC grants, ${grants - unused.length} used)\n`,
    );
    assert.deepEqual(denied, [], 'calls deploy/ RBAC does not allow');
    // createRebootPod reads the pod only when its create meets 409 (a restart after the create):
    // a path this run does not take. The one grant allowed to go unrecorded, named here.
    const onlyAfterConflict = ['Role get core/pods'];
    // ClusterVersion and the MachineConfigPools are read and patched only on OpenShift, with a
    // MutexRunConfig: test/e2e/mco.test.ts records and checks those calls the same way.
    const onlyOpenShift = [
      'ClusterRole list config.openshift.io/clusterversions',
      'ClusterRole list machineconfiguration.openshift.io/machineconfigpools',
      'ClusterRole patch machineconfiguration.openshift.io/machineconfigpools',
      'ClusterRole watch config.openshift.io/clusterversions',
      'ClusterRole watch machineconfiguration.openshift.io/machineconfigpools',
    ];
    // The notifications' sent-log is read and written only for a drydock.yaml that names
    // receivers: test/e2e/notifications.test.ts runs under deploy/'s RBAC and checks the ConfigMap.
    const onlyWithNotifications = [
      'Role create core/configmaps',
      'Role get core/configmaps',
      'Role update core/configmaps',
    ];
    assert.deepEqual(
      unused.sort(),
      [...onlyAfterConflict, ...onlyOpenShift, ...onlyWithNotifications].sort(),
      'grants no recorded call used',
    );
  });

  it('no canary secret appears in any output', async () => {
    outputs.push(...(await serviceOutputs(cp().adminKubeConfig(), repo, [leader, standby])));
    const reader = { DRYDOCK_GIT_USERNAME: READER.username, DRYDOCK_GIT_PASSWORD: CANARY.password, ...CANARY_AWS_ENV };
    const cache = tempDir('drydock-e2e-sec-cli-');
    dirs.push(cache);
    const status = await drydockCli(['status', '--repo', repo.url, '--cache-dir', cache], reader);
    assert.match(status, /NodeImage/, 'drydock status printed the status');
    const plan = await drydockCli(
      [
        'plan',
        '--repo',
        repo.url,
        '--kubeconfig',
        cp().kubeconfigPath,
        '--provider',
        'sim',
        '--cloud-endpoint',
        sim.url,
        '--namespace',
        NS,
      ],
      reader,
    );
    assert.match(plan, /worker/, `drydock plan printed a plan: ${plan.slice(0, 2000)}`);
    // Thrown errors: a wrong token and a wrong password, refused by the server.
    const wrong = await drydockCli(['status', '--repo', repo.url, '--cache-dir', cache], {
      DRYDOCK_GIT_USERNAME: 'reader',
      DRYDOCK_GIT_PASSWORD: `${CANARY.password}-wrong`,
    });
    const wrongToken = await drydockCli(['plan', '--repo', repo.url], { DRYDOCK_GIT_TOKEN: `${CANARY.token}-wrong` });
    assert.match(wrong + wrongToken, /401|auth|credential/i, 'the refusals are reported');
    outputs.push(status, plan, wrong, wrongToken);
    assert.deepEqual(findCanaries(outputs), []);
    rmSync(cache, { recursive: true, force: true });
  });
});
