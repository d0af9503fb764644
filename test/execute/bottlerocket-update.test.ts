/**
 * The Bottlerocket update script (assets/bottlerocket-update.sh), run as written with sh and
 * curl against a stand-in for the node's API on a Unix socket (test/support/bottlerocket-api.ts):
 * the calls it makes and their order, where it leaves the update state machine, and the
 * termination message it leaves for drydock, on success and on each way the API can fail.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bottlerocketUpdateJob,
  bottlerocketUpdateResult,
  bottlerocketUpdateScript,
  BOTTLEROCKET_API_SOCKET,
} from '../../src/execute/jobs/index.js';
import {
  startBottlerocketApi,
  type ApiCall,
  type BottlerocketApiOptions,
  type FakeBottlerocketApi,
} from '../support/bottlerocket-api.js';

const SCRIPT = fileURLToPath(new URL('../../../assets/bottlerocket-update.sh', import.meta.url));
const LOCK = '/settings?keys=settings.updates.version-lock';
const PATCH = '/settings?tx=drydock-update';
const COMMIT = '/tx/commit_and_apply?tx=drydock-update';
const STATUS = '/updates/status';
const REPO = ['1.21.0', '1.20.3', '1.19.2'];

interface Run {
  readonly code: number;
  readonly stderr: string;
  /** The termination log's text, trimmed; undefined when the file was not there. */
  readonly message: string | undefined;
}

let dir: string;
let api: FakeBottlerocketApi | undefined;

async function start(o: Omit<BottlerocketApiOptions, 'socketPath'>): Promise<FakeBottlerocketApi> {
  api = await startBottlerocketApi({ socketPath: path.join(dir, 'api.sock'), ...o });
  return api;
}

function runCommand(command: readonly string[], env: Record<string, string>, log = true): Promise<Run> {
  const logFile = path.join(dir, 'termination-log');
  if (log) writeFileSync(logFile, '');
  else rmSync(logFile, { force: true });
  return new Promise((resolve) => {
    execFile(
      command[0] ?? 'sh',
      command.slice(1),
      {
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          BOTTLEROCKET_API_SOCKET: path.join(dir, 'api.sock'),
          BOTTLEROCKET_TERMINATION_LOG: logFile,
          BOTTLEROCKET_POLL_SECONDS: '0.02',
          BOTTLEROCKET_TIMEOUT_SECONDS: '10',
          BOTTLEROCKET_SETTLE_SECONDS: '0',
          BOTTLEROCKET_REFRESH_ATTEMPTS: '3',
          ...env,
        },
      },
      (error, _stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        const message = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim() : undefined;
        resolve({ code, stderr, message });
      },
    );
  });
}

function runScript(env: Record<string, string>, log = true): Promise<Run> {
  return runCommand(['sh', SCRIPT], env, log);
}

/** The calls that change something or read settings, in order: status reads left out. */
function mutations(calls: readonly ApiCall[]): string[] {
  return calls.filter((c) => c.path !== STATUS).map((c) => `${c.method} ${c.path} ${c.status}`);
}

/** After every action the script read a status showing that action finished, before its next call. */
function assertWaitedForEach(calls: readonly ApiCall[]): void {
  calls.forEach((c, i) => {
    const cmd = /^\/actions\/(refresh|prepare|activate|deactivate)-update/.exec(c.path)?.[1];
    if (c.method !== 'POST' || c.status !== 204 || cmd === undefined) return;
    const next = calls.slice(i + 1).findIndex((x) => x.path !== STATUS);
    const reads = calls.slice(i + 1, next === -1 ? undefined : i + 1 + next);
    assert.ok(
      reads.some((r) => r.status === 200 && r.shown?.command === cmd),
      `${c.path} (call ${i}) was not seen finished before the next call`,
    );
  });
}

const pinnedCalls = (lock: string): string[] => [
  `GET ${LOCK} 200`,
  `PATCH ${PATCH} 204`,
  `POST ${COMMIT} 200`,
  'POST /actions/refresh-updates 204',
  'POST /actions/prepare-update 204',
  'POST /actions/activate-update 204',
  ...(lock === '' ? [] : [lock]),
];

/** A scratch directory and no API left running, around each test. */
function useScratch(): void {
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-bottlerocket-'));
  });
  afterEach(async () => {
    await api?.close();
    api = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
}

describe('the Bottlerocket update script against the update API', function () {
  this.timeout(30_000);

  before(() => {
    // The script's one tool beyond a POSIX shell and awk; missing, every case would fail alike.
    assert.doesNotThrow(() => execFileSync('sh', ['-c', 'command -v curl']), 'curl is needed to run these tests');
  });

  useScratch();

  it('pins the version, refreshes, prepares and activates it, and reports it staged', async () => {
    // Commands that outlast a poll, so the script meets the update lock they hold.
    const br = await start({ running: '1.19.2', updates: REPO, commandMs: 150 });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2)');
    assert.deepEqual(mutations(br.calls), pinnedCalls(''));
    assert.deepEqual(br.calls.find((c) => c.method === 'PATCH')?.body, { updates: { 'version-lock': 'v1.20.3' } });
    assert.equal(br.versionLock(), 'v1.20.3');
    assertWaitedForEach(br.calls);
    // Each command's lock answered 423 to a status read, and the script read on.
    assert.ok(br.calls.filter((c) => c.path === STATUS && c.status === 423).length > 0);
    const s = br.status();
    assert.equal(s?.update_state, 'Ready');
    assert.deepEqual(s?.staging_partition, {
      image: { arch: 'x86_64', version: '1.20.3', variant: 'aws-k8s-1.29' },
      next_to_boot: true,
    });
    assert.equal(s?.active_partition?.next_to_boot, false);
    assert.equal(br.rebooted(), false);
  });

  it('reads answers pretty-printed as well as compact, and takes a v-prefixed version', async () => {
    const br = await start({ running: '1.19.2', updates: REPO, pretty: true });
    const run = await runScript({ BOTTLEROCKET_VERSION: 'v1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2)');
    assert.equal(br.status()?.update_state, 'Ready');
  });

  it('latest: sets the lock back to latest and stages the newest update, which it names', async () => {
    const br = await start({ running: '1.19.2', updates: REPO, versionLock: 'v1.20.3' });
    const run = await runScript({ BOTTLEROCKET_VERSION: 'latest' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.21.0 (was 1.19.2)');
    assert.deepEqual(br.calls.find((c) => c.method === 'PATCH')?.body, { updates: { 'version-lock': 'latest' } });
    assert.equal(br.status()?.staging_partition?.image.version, '1.21.0');
    assert.equal(br.status()?.update_state, 'Ready');
  });

  it('leaves a lock that is right as it is', async () => {
    const br = await start({ running: '1.19.2', updates: REPO, versionLock: 'latest' });
    const run = await runScript({ BOTTLEROCKET_VERSION: 'latest' });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(mutations(br.calls), [
      `GET ${LOCK} 200`,
      'POST /actions/refresh-updates 204',
      'POST /actions/prepare-update 204',
      'POST /actions/activate-update 204',
    ]);
  });

  it('already on the pinned version: says so and prepares nothing', async () => {
    const br = await start({ running: '1.20.3', updates: REPO, versionLock: 'v1.20.3' });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'already at 1.20.3');
    assert.deepEqual(mutations(br.calls), [`GET ${LOCK} 200`, 'POST /actions/refresh-updates 204']);
    assert.equal(br.status()?.update_state, 'Idle');
    assert.equal(br.status()?.staging_partition, null);
  });

  it('latest with nothing newer in the repository: already at the running version', async () => {
    const br = await start({ running: '1.21.0', updates: REPO });
    const run = await runScript({ BOTTLEROCKET_VERSION: 'latest' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'already at 1.21.0');
    assert.ok(!br.calls.some((c) => c.path === '/actions/prepare-update'));
  });

  it('no such update: fails with what the API shows, after the refreshes a new lock may need', async () => {
    const br = await start({ running: '1.19.2', updates: REPO });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.5' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'refresh-updates failed: no update to 1.20.5: chosen_update null (update_state Idle, ' +
        'available_updates [1.21.0, 1.20.3, 1.19.2], running 1.19.2, version-lock v1.20.5)',
    );
    assert.equal(br.calls.filter((c) => c.path === '/actions/refresh-updates').length, 3);
    assert.ok(!br.calls.some((c) => c.path === '/actions/prepare-update'));
    assert.equal(br.status()?.update_state, 'Idle');
  });

  it('a chosen update that is not the target: fails and prepares nothing', async () => {
    // The new lock never reaches the dispatcher: it keeps choosing with latest.
    const br = await start({ running: '1.19.2', updates: REPO, lockLagRefreshes: Infinity });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'refresh-updates failed: chosen_update 1.21.0 is not the target 1.20.3 (update_state Available, ' +
        'available_updates [1.21.0, 1.20.3, 1.19.2], running 1.19.2, version-lock v1.20.3)',
    );
    assert.ok(!br.calls.some((c) => c.path === '/actions/prepare-update'));
    assert.equal(br.status()?.update_state, 'Available');
  });

  it('a new lock that reaches the dispatcher late: refreshes again until the target is chosen', async () => {
    const br = await start({ running: '1.19.2', updates: REPO, lockLagRefreshes: 1 });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2)');
    assert.equal(br.calls.filter((c) => c.path === '/actions/refresh-updates').length, 2);
    assert.equal(br.status()?.staging_partition?.image.version, '1.20.3');
  });

  it('refresh fails: the API words, nothing prepared', async () => {
    const stderr = 'Failed to fetch metadata: timestamp.json expired\n';
    const br = await start({ running: '1.19.2', updates: REPO, fail: { refresh: stderr } });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'refresh-updates failed: Failed (exit_status 1): Failed to fetch metadata: timestamp.json expired',
    );
    assert.ok(!br.calls.some((c) => c.path === '/actions/prepare-update'));
  });

  it('prepare fails: stderr of the command in the message, still Available, not activated', async () => {
    const stderr = 'Failed to write image to the inactive partition:\n  No space left on device\n';
    const br = await start({ running: '1.19.2', updates: REPO, fail: { prepare: stderr } });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'prepare-update failed: Failed (exit_status 1): Failed to write image to the inactive partition: No space left on device',
    );
    assert.ok(!br.calls.some((c) => c.path === '/actions/activate-update'));
    assert.equal(br.status()?.update_state, 'Available');
  });

  it('a long stderr: the message keeps the step and the last words, within what drydock reads', async () => {
    const progress = Array.from({ length: 60 }, (_, i) => `Downloading part ${i} of 60 of the root image`).join('\n');
    const last = 'Failed to write image: checksum mismatch for root.ext4.lz4';
    await start({ running: '1.19.2', updates: REPO, fail: { prepare: `${progress}\n${last}\n` } });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    const message = run.message ?? '';
    assert.equal(message.length, 1000);
    assert.ok(message.startsWith('prepare-update failed: Failed (exit_status 1): Downloading part 0 of 60'), message);
    assert.ok(message.includes(' ... '), message);
    assert.ok(message.endsWith(last), message);
  });

  it('activate fails: the API words, still Staged, no reboot', async () => {
    const br = await start({
      running: '1.19.2',
      updates: REPO,
      fail: { activate: 'Unable to set partition flags: "priority" out of range' },
    });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3', BOTTLEROCKET_REBOOT: 'true' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'activate-update failed: Failed (exit_status 1): Unable to set partition flags: "priority" out of range',
    );
    assert.equal(br.status()?.update_state, 'Staged');
    assert.ok(!br.calls.some((c) => c.path === '/actions/reboot'));
  });

  it('an HTTP error: status and body in the message', async () => {
    const br = await start({
      running: '1.19.2',
      updates: REPO,
      override: { method: 'POST', path: '/actions/prepare-update', status: 500, body: 'Update dispatcher failed' },
    });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    assert.equal(run.message, 'prepare-update failed: HTTP 500: Update dispatcher failed');
    assert.equal(br.status()?.update_state, 'Available');
  });

  it('a rejected setting: status and body in the message', async () => {
    await start({
      running: '1.19.2',
      updates: REPO,
      override: {
        method: 'PATCH',
        path: '/settings',
        status: 400,
        body: 'Unable to deserialize input JSON into model',
      },
    });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'setting updates.version-lock to v1.20.3 failed: HTTP 400: Unable to deserialize input JSON into model',
    );
  });

  it('no API on the socket: fails saying the socket did not answer', async () => {
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 1);
    assert.match(
      run.message ?? '',
      /^reading settings\.updates\.version-lock failed: no answer from .*api\.sock: curl: \(7\)/,
    );
  });

  it('waits while another command holds the update lock', async () => {
    const br = await start({ running: '1.19.2', updates: REPO });
    const theirs = br.command('refresh', 1000);
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    await theirs;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2)');
    const busy = br.calls.filter((c) => c.status === 423).map((c) => `${c.method} ${c.path}`);
    assert.ok(busy.includes(`GET ${STATUS}`), busy.join(', '));
  });

  it('reboots through the API when asked, after writing the message', async () => {
    const br = await start({ running: '1.19.2', updates: REPO });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3', BOTTLEROCKET_REBOOT: 'true' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2), reboot requested');
    assert.deepEqual(mutations(br.calls), pinnedCalls('POST /actions/reboot 204'));
    assert.equal(br.rebooted(), true);
  });

  it('a reboot refused: fails with the API words after the update is Ready', async () => {
    const br = await start({ running: '1.19.2', updates: REPO, rebootFails: 'Operation inhibited by "kubelet"' });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3', BOTTLEROCKET_REBOOT: 'true' });
    assert.equal(run.code, 1);
    assert.equal(
      run.message,
      'staged 1.20.3 (was 1.19.2), but reboot failed: HTTP 500: Failed to reboot, exit code: 1, stderr: Operation inhibited by "kubelet"',
    );
    assert.equal(br.status()?.update_state, 'Ready');
  });

  it('a host that goes down before it answers the reboot: the reboot is under way', async () => {
    await start({ running: '1.19.2', updates: REPO, rebootDropsConnection: true });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3', BOTTLEROCKET_REBOOT: 'true' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2), reboot requested');
  });

  it('a retried Job finds its update Ready and reports it without preparing again', async () => {
    const br = await start({ running: '1.19.2', updates: REPO });
    assert.equal((await runScript({ BOTTLEROCKET_VERSION: '1.20.3' })).code, 0);
    br.calls.length = 0;
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2)');
    assert.deepEqual(mutations(br.calls), [`GET ${LOCK} 200`, 'POST /actions/refresh-updates 204']);
    assert.equal(br.status()?.update_state, 'Ready');
  });

  it('another version activated and not booted: deactivates it, then stages the target', async () => {
    const br = await start({ running: '1.19.2', updates: REPO });
    for (const cmd of ['refresh', 'prepare', 'activate'] as const) assert.equal(await br.command(cmd), 204);
    assert.equal(br.status()?.staging_partition?.image.version, '1.21.0');
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'staged 1.20.3 (was 1.19.2)');
    assert.deepEqual(mutations(br.calls).slice(3), [
      'POST /actions/refresh-updates 204',
      'POST /actions/deactivate-update 204',
      'POST /actions/prepare-update 204',
      'POST /actions/activate-update 204',
    ]);
    assertWaitedForEach(br.calls);
    assert.equal(br.status()?.staging_partition?.image.version, '1.20.3');
    assert.equal(br.status()?.update_state, 'Ready');
  });

  it('already on the target with another version activated: deactivates it so the node stays', async () => {
    const br = await start({ running: '1.20.3', updates: REPO });
    for (const cmd of ['refresh', 'prepare', 'activate'] as const) assert.equal(await br.command(cmd), 204);
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, 'already at 1.20.3');
    assert.ok(br.calls.some((c) => c.path === '/actions/deactivate-update'));
    assert.ok(!br.calls.some((c) => c.path === '/actions/prepare-update'));
    assert.equal(br.status()?.update_state, 'Staged');
    assert.equal(br.status()?.active_partition?.next_to_boot, true);
  });

  it('refuses a version it cannot read, and calls nothing', async () => {
    const br = await start({ running: '1.19.2', updates: REPO });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20' });
    assert.equal(run.code, 2);
    assert.equal(run.message, "invalid input: BOTTLEROCKET_VERSION '1.20' is not X.Y.Z, vX.Y.Z or latest");
    assert.deepEqual(br.calls, []);
  });

  it('without a termination log the summary goes to stderr only', async () => {
    await start({ running: '1.20.3', updates: REPO, versionLock: 'v1.20.3' });
    const run = await runScript({ BOTTLEROCKET_VERSION: '1.20.3' }, false);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.message, undefined);
    assert.match(run.stderr, /^bottlerocket-update: already at 1\.20\.3$/m);
  });
});

describe('the Bottlerocket update Job', () => {
  const op = { kind: 'NodeImage', name: 'bottlerocket', revision: '0123456789abcdef' } as const;
  const node = { name: 'ip-10-0-0-1', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] };
  const job = bottlerocketUpdateJob({
    operation: op,
    node,
    namespace: 'drydock-system',
    update: { version: '1.20.3', reboot: false, image: 'registry.example/tools/curl:8' },
    imagePullSecrets: [],
    backoffLimit: 2,
  });
  const pod = job.spec?.template.spec;
  const container = pod?.containers[0];

  it('is pinned to the node, tolerates its taints and mounts only the API socket', () => {
    assert.equal(pod?.nodeName, 'ip-10-0-0-1');
    assert.deepEqual(
      pod?.tolerations?.map((t) => t.key),
      ['node.kubernetes.io/unschedulable', 'dedicated'],
    );
    assert.deepEqual(pod?.volumes, [
      { name: 'bottlerocket-api-socket', hostPath: { path: '/run/api.sock', type: 'Socket' } },
    ]);
    assert.deepEqual(container?.volumeMounts, [{ name: 'bottlerocket-api-socket', mountPath: '/run/api.sock' }]);
    assert.equal(container?.securityContext?.privileged, undefined);
    assert.equal(container?.securityContext?.seLinuxOptions?.type, 'super_t');
    assert.equal(job.metadata?.name, 'nodeimage-bottlerocket-ip-10-0-0-1-0123456789abcdef');
    assert.equal(job.spec?.backoffLimit, 2);
  });

  it('runs the script as shipped, with the target and reboot choice in its environment', () => {
    assert.deepEqual(container?.command, ['sh', '-c', readFileSync(SCRIPT, 'utf8'), 'bottlerocket-update']);
    assert.equal(bottlerocketUpdateScript(), readFileSync(SCRIPT, 'utf8'));
    assert.deepEqual(container?.env, [
      { name: 'BOTTLEROCKET_API_SOCKET', value: BOTTLEROCKET_API_SOCKET },
      { name: 'BOTTLEROCKET_REBOOT', value: 'false' },
      { name: 'BOTTLEROCKET_VERSION', value: '1.20.3' },
    ]);
  });

  describe('its command against the API', function () {
    this.timeout(30_000);
    useScratch();

    it('stages the update, and its message reads back as the version staged', async () => {
      const br = await start({ running: '1.19.2', updates: REPO });
      const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value ?? '']));
      // Only the socket moves: the test's, not the host's.
      const run = await runCommand(container?.command ?? [], {
        ...env,
        BOTTLEROCKET_API_SOCKET: path.join(dir, 'api.sock'),
      });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(br.status()?.update_state, 'Ready');
      assert.deepEqual(bottlerocketUpdateResult(run.message), {
        outcome: 'staged',
        version: '1.20.3',
        previous: '1.19.2',
        rebootRequested: false,
      });
    });
  });

  it('reads the messages back: staged, rebooting, already current; nothing from a failure', () => {
    assert.deepEqual(bottlerocketUpdateResult('staged 1.21.0 (was 1.19.2), reboot requested\n'), {
      outcome: 'staged',
      version: '1.21.0',
      previous: '1.19.2',
      rebootRequested: true,
    });
    assert.deepEqual(bottlerocketUpdateResult('already at 1.20.3'), { outcome: 'current', version: '1.20.3' });
    assert.equal(bottlerocketUpdateResult('prepare-update failed: HTTP 500: Update dispatcher failed'), undefined);
    assert.equal(bottlerocketUpdateResult(undefined), undefined);
  });
});
