/**
 * End to end, driven only by Git commits: notifications from drydock.yaml's receivers on the
 * real control plane, drydock running as deploy/'s ServiceAccount. Three NodeOps give every
 * event: one whose node's Job fails, and one that needs an approval before it starts, which
 * the test merges once the approval message came; local HTTP receivers record what arrives: a
 * steady one, one that answers 500 before it recovers, and one that hangs. Then a SIGKILL and
 * a restart: the sent-log keeps anything from being sent twice.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { startReceiver, type Receiver } from '../notify/receiver.js';
import {
  afterRounds,
  drydockArgs,
  serviceAccountKubeconfig,
  specDoc,
  startDrydockChild,
  startWorkerWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const NS = 'drydock-system';
const FAILING = 'workers-i-0002';
/** The node of the NodeOp that waits for an approval before it starts. */
const GATED = 'workers-i-0003';
// Planted in the receivers' addresses and the signing key: none may appear in any output.
const CANARY_TOKEN = 'XOXB-canary-8d1f0e';
const CANARY_KEY = 'hmac-canary-42c9aa';

interface Message {
  readonly id: string;
  readonly event: string;
  readonly summary: string;
  readonly detail?: string;
  readonly spec: { kind: string; name: string };
  readonly node?: string;
  readonly status: { branch?: string; commit?: string; url?: string };
}

function repoConfig(): string {
  const all = ['started', 'approval', 'nodeFailed', 'halted', 'complete'];
  return stringify({
    apiVersion: 'drydock.dev/v1alpha1',
    kind: 'RepoConfig',
    cluster: 'e2e',
    paths: ['ops'],
    notifications: {
      commitUrl: 'https://git.example/fleet/commit/{commit}',
      receivers: [
        {
          name: 'steady',
          type: 'webhook',
          urlFrom: { file: 'steady-url' },
          secretFrom: { env: 'DRYDOCK_NOTIFY_KEY' },
          events: all,
        },
        {
          name: 'flaky',
          type: 'webhook',
          urlFrom: { file: 'flaky-url' },
          secretFrom: { env: 'DRYDOCK_NOTIFY_KEY' },
          events: ['started', 'complete'],
        },
        {
          name: 'stuck',
          type: 'webhook',
          urlFrom: { file: 'stuck-url' },
          secretFrom: { env: 'DRYDOCK_NOTIFY_KEY' },
          events: ['started'],
        },
        { name: 'chat', type: 'slack', urlFrom: { env: 'DRYDOCK_NOTIFY_SLACK_URL' }, events: ['complete'] },
      ],
    },
  });
}

function nodeOp(name: string, node: string, rollout?: Record<string, unknown>): string {
  return specDoc('NodeOp', name, {
    nodeSelector: { matchLabels: { 'kubernetes.io/hostname': node } },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    backoffLimit: 0,
    stopOnFailure: true,
    ...(rollout !== undefined ? { rollout } : {}),
  });
}

const messages = (r: Receiver): Message[] => r.accepted().map((b) => JSON.parse(b) as Message);
const names = (ms: readonly Message[]): string[] =>
  ms.map((m) => `${m.spec.name} ${m.event}${m.node !== undefined ? ` ${m.node}` : ''}`).sort();

describe('e2e: notifications', function () {
  this.timeout(240_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  const receivers: Receiver[] = [];

  after(async function () {
    this.timeout(30_000);
    if (drydock && drydock.proc.exitCode === null) {
      drydock.kill('SIGTERM');
      await drydock.exited;
    }
    await Promise.all(receivers.map((r) => r.close()));
    await sim?.stop();
    await repo?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('one message per event to each receiver, through a 500 and past a hung receiver, no secret anywhere', async () => {
    const [steady, flaky, stuck, chat] = await Promise.all([0, 1, 2, 3].map(() => startReceiver()));
    assert.ok(steady && flaky && stuck && chat);
    receivers.push(steady, flaky, stuck, chat);
    flaky.failNext(2);
    stuck.hang(true);
    const secrets = tempDir('drydock-e2e-notify-secrets-');
    dirs.push(secrets);
    mkdirSync(secrets, { recursive: true });
    for (const [name, r] of [
      ['steady', steady],
      ['flaky', flaky],
      ['stuck', stuck],
    ] as const)
      writeFileSync(path.join(secrets, `${name}-url`), `${r.url}/hook/${CANARY_TOKEN}\n`);

    // The world: 3 sim workers, deploy/'s RBAC; drydock started (below) with the receivers' secrets.
    const world = await startWorkerWorld(cp(), dirs, {
      name: 'notify',
      size: 3,
      host: { rebootSeconds: 1, jobRunSeconds: 1, failJobsOnNodes: [FAILING] },
      files: { 'drydock.yaml': repoConfig(), 'ops/.keep': '' },
    });
    ({ sim, repo } = world);
    // startWorkerWorld's drydock has no secrets: replace it with one that has.
    world.drydock.kill('SIGTERM');
    await world.drydock.exited;
    const args = [
      ...drydockArgs(repo, await serviceAccountKubeconfig(cp()), sim.url, tempDir('drydock-e2e-notify-cache-'), NS),
      '--notify-secrets-dir',
      secrets,
    ];
    const env = {
      DRYDOCK_NOTIFY_KEY: CANARY_KEY,
      DRYDOCK_NOTIFY_SLACK_URL: `${chat.url}/services/T0/B0/${CANARY_TOKEN}`,
    };
    drydock = startDrydockChild(args, env);
    const url = await drydock.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });

    await repo.push(
      {
        'ops/patch.yaml': nodeOp('patch', 'workers-i-0001'),
        'ops/broken.yaml': nodeOp('broken', FAILING),
        'ops/gated.yaml': nodeOp('gated', GATED, { approval: { required: 'start' } }),
      },
      'ops: patch one worker; another fails its Job; the third waits for an approval',
    );
    // Waiting for a person: one message, naming the file to merge; merged, the NodeOp goes on.
    const asked = await eventually(
      'the approval message',
      () => Promise.resolve(messages(steady).find((m) => m.spec.name === 'gated' && m.event === 'approval')),
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    const gatedDoc = parse((await repo.statusFile('status/NodeOp/gated.yaml')) ?? '') as {
      approvalFile?: { path: string; content: string };
    };
    const approvalFile = gatedDoc.approvalFile;
    assert.ok(approvalFile, 'the status file shows the Approval file to merge');
    assert.equal(asked.detail, `merge ${approvalFile.path}`);
    assert.match(asked.summary, /^NodeOp\/gated: waiting for an approval \(start\)$/);
    await repo.push({ [approvalFile.path]: approvalFile.content }, 'approvals: start the gated NodeOp');
    const want = [
      'broken halted',
      'broken nodeFailed workers-i-0002',
      'broken started',
      'gated approval',
      'gated complete',
      'gated started',
      'patch complete',
      'patch started',
    ];
    await eventually(
      'every event at the steady receiver',
      () => Promise.resolve(messages(steady).length >= want.length),
      {
        timeoutMs: 90_000,
        intervalMs: 200,
      },
    );
    await eventually('the flaky receiver recovered', () => Promise.resolve(messages(flaky).length >= 5), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    await eventually('the Slack receiver', () => Promise.resolve(chat.accepted().length >= 2), { timeoutMs: 30_000 });
    // A few more seconds: a duplicate would come now.
    await new Promise((r) => setTimeout(r, 3_000));

    assert.deepEqual(names(messages(steady)), want, 'exactly one message per event');
    assert.deepEqual(names(messages(flaky)), [
      'broken started',
      'gated complete',
      'gated started',
      'patch complete',
      'patch started',
    ]);
    assert.equal(flaky.received.filter((r) => r.status === 500).length, 2, 'two attempts answered 500 first');
    assert.deepEqual(
      chat
        .accepted()
        .map((b) => /^\[e2e\] (NodeOp\/\w+): rollout complete/.exec((JSON.parse(b) as { text: string }).text)?.[1])
        .sort(),
      ['NodeOp/gated', 'NodeOp/patch'],
    );
    assert.equal(stuck.received.filter((r) => r.status === 'hung').length >= 1, true, 'the hung receiver was called');

    // Signed, and linked to a status commit that exists on the status branch.
    for (const got of steady.received) {
      assert.equal(
        got.headers['x-drydock-signature'],
        `sha256=${createHmac('sha256', CANARY_KEY).update(got.body).digest('hex')}`,
      );
    }
    const complete = messages(steady).find((m) => m.event === 'complete');
    assert.equal(complete?.status.branch, 'drydock/status');
    assert.equal(complete?.status.url, `https://git.example/fleet/commit/${complete?.status.commit ?? ''}`);
    const onBranch = execFileSync('git', ['--git-dir', repo.bare, 'rev-list', 'drydock/status'], { encoding: 'utf8' });
    assert.ok(
      onBranch.split('\n').includes(complete?.status.commit ?? '-'),
      'the linked commit is on the status branch',
    );
    const status = (await repo.statusFile('status/NodeOp/patch.yaml')) ?? '';
    assert.match(status, /phase: Complete/);

    // The hung receiver never held a round: none took as long as one attempt's limit (10 s).
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const count = (le: string): number => {
      const prefix = `drydock_reconcile_duration_seconds_bucket{le="${le}",result="ok"} `;
      const line = metrics.split('\n').find((l) => l.startsWith(prefix));
      return line === undefined ? NaN : Number(line.slice(prefix.length));
    };
    assert.equal(count('+Inf') - count('10'), 0, 'a round took 10 s or more');
    assert.match(metrics, /^drydock_notifications_total\{receiver="steady",outcome="sent"\} 8$/m);
    assert.match(metrics, /^drydock_notifications_total\{receiver="flaky",outcome="retried"\} 2$/m);

    // The sent-log, under deploy/'s RBAC, holds every event the steady receiver was sent.
    const cm = await cp()
      .adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'drydock-notifications', namespace: NS });
    const logged = new Set((cm.data?.sent ?? '').split('\n'));
    // Logged once every receiver that wants it is done with it; the hung receiver wants only
    // the starts, so the others are done, and a restart now would not send them again.
    for (const m of messages(steady).filter((x) => x.event !== 'started'))
      assert.ok(logged.has(m.id), `${m.event} logged`);

    // The hung receiver comes back and takes the starts; then drydock is killed (SIGKILL) and
    // started again: the sent-log has every event, so nothing is sent a second time.
    stuck.release();
    stuck.hang(false);
    const allIds = messages(steady).map((m) => m.id);
    await eventually(
      'every event in the sent-log',
      async () => {
        const now = await cp()
          .adminKubeConfig()
          .makeApiClient(CoreV1Api)
          .readNamespacedConfigMap({ name: 'drydock-notifications', namespace: NS });
        const ids = new Set((now.data?.sent ?? '').split('\n'));
        return allIds.every((id) => ids.has(id));
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const firstLife = drydock;
    firstLife.kill('SIGKILL');
    await firstLife.exited;
    const before = receivers.map((r) => r.received.length);
    drydock = startDrydockChild(args, env);
    const again = await drydock.url;
    await eventually('drydock ready again', async () => (await fetch(`${again}/readyz`)).ok, { timeoutMs: 30_000 });
    await eventually(
      'the restarted drydock leads',
      async () => /^drydock_leader 1$/m.test(await (await fetch(`${again}/metrics`)).text()),
      {
        timeoutMs: 30_000,
      },
    );
    await afterRounds(drydock, 3);
    await new Promise((r) => setTimeout(r, 2_000));
    assert.deepEqual(
      receivers.map((r) => r.received.length),
      before,
      'nothing sent again after the restart',
    );

    // No secret in any message, log line or status file.
    const outputs = [
      ...receivers.flatMap((r) => r.received.map((x) => x.body)),
      ...firstLife.lines,
      ...drydock.lines,
      ...statusFiles(repo.bare),
      JSON.stringify(cm),
    ].join('\n');
    assert.ok(!outputs.includes(CANARY_TOKEN), 'an address token leaked');
    assert.ok(!outputs.includes(CANARY_KEY), 'the signing key leaked');
  });
});

/** Every file of the status branch's tip. */
function statusFiles(bare: string): string[] {
  const git = (...a: string[]): string => execFileSync('git', ['--git-dir', bare, ...a], { encoding: 'utf8' });
  return git('ls-tree', '-r', '--name-only', 'drydock/status')
    .split('\n')
    .filter((f) => f !== '')
    .map((f) => git('show', `drydock/status:${f}`));
}
