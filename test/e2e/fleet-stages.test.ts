/**
 * End to end, a fleet of two clusters on this machine: each has its own control plane, sim cloud
 * and drydock (`--cluster a`, `--cluster b`), and both read one repository on one Git server.
 * The fleet file puts a in the first stage and b in the second, with a soak, no tolerance and a
 * short staleness. What b does is checked from the status branches and from a watch on b's
 * nodes (never from drydock's logs): b starts a shared change only after a reported it Complete
 * and the soak passed; a's drydock stopped holds b once a's branch is stale, although a said
 * Complete, and `drydock plan --cluster b` says so too; a failure in a holds b.
 */
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { parseSimConfigText } from '../../src/cloud/index.js';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/index.js';
import { git, TEST_USER } from '../support/git-server.js';
import { eventually, useControlPlane, type ControlPlane } from '../support/control-plane.js';
import { ApiLog, type Announced } from './api-watch.js';
import { drydockCli } from './canaries.js';
import {
  afterRounds,
  converged,
  drydockArgs,
  IMAGE_V1,
  IMAGE_V2,
  IMAGE_V3,
  IMAGE_V4,
  rolloutYaml,
  specDoc,
  startDrydockChild,
  startFleetRepo,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const WORKERS = 2;
const SOAK_MS = 15_000;
/** Shorter than the soak, so a stopped first cluster goes stale while its change still soaks. */
const STALE_AFTER = '6s';
const SPEC_FILE = 'status/NodeImage/worker.yaml';

function workerImage(image: string): string {
  // A short join timeout: a boot that never joins fails the rollout in seconds.
  return specDoc('NodeImage', 'worker', { image, strategy: 'replace', rollout: rolloutYaml({ joinTimeout: '6s' }) });
}

function fleetRepoFiles(): Record<string, string> {
  const group = specDoc('ScalingGroup', 'workers', {
    provider: 'sim',
    groupId: 'workers',
    nodeImage: 'worker',
    role: 'worker',
    autoscaling: false,
  });
  return {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      budget: { maxUnavailable: 1 },
      paths: ['images', 'groups'],
    }),
    'images/worker.yaml': workerImage(IMAGE_V1),
    'clusters/a/groups/workers.yaml': group,
    'clusters/b/groups/workers.yaml': group,
    'fleet/fleet.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'Fleet',
      metadata: { name: 'e2e' },
      spec: {
        staleAfter: STALE_AFTER,
        clusters: [{ name: 'a' }, { name: 'b' }],
        stages: [
          { name: 'first', clusters: ['a'], soak: `${SOAK_MS / 1000}s`, tolerate: 0 },
          { name: 'second', clusters: ['b'], tolerate: 0 },
        ],
      },
    }),
  };
}

interface Member {
  readonly name: string;
  readonly cp: ControlPlane;
  readonly sim: RunningSimCloud;
  readonly args: string[];
  drydock: DrydockChild | undefined;
}

async function startSim(cp: ControlPlane, dirs: string[]): Promise<RunningSimCloud> {
  const stateDir = tempDir('drydock-e2e-fleet-sim-');
  dirs.push(stateDir);
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds: 1,
      terminateDelaySeconds: 1,
      groups: [{ id: 'workers', role: 'worker', size: WORKERS, image: IMAGE_V1 }],
    }),
  );
  const sim = await runSimCloud({ config, stateDir, kubeconfigPath: cp.kubeconfigPath, host: '127.0.0.1', port: 0 });
  const kc = cp.adminKubeConfig();
  await eventually(`${WORKERS} workers Ready`, async () => converged(kc, IMAGE_V1, WORKERS), { timeoutMs: 60_000 });
  return sim;
}

async function startMemberDrydock(m: Member): Promise<void> {
  m.drydock = startDrydockChild(m.args);
  const url = await m.drydock.url;
  await eventually(`drydock of ${m.name} ready`, async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
}

async function stopMemberDrydock(m: Member): Promise<void> {
  m.drydock?.kill('SIGTERM');
  await m.drydock?.exited;
  m.drydock = undefined;
}

interface SpecReport {
  readonly phase?: string;
  readonly revision?: string;
  readonly waitingFor?: string;
}

async function report(repo: FleetRepo, cluster: string): Promise<SpecReport> {
  return (parse((await repo.statusFile(SPEC_FILE, `drydock/status-${cluster}`)) ?? '{}') ?? {}) as SpecReport;
}

/** The commit time (ms) of the first commit of `cluster`'s status branch that says Complete at `revision`. */
async function firstComplete(repo: FleetRepo, cluster: string, revision: string): Promise<number> {
  const branch = `drydock/status-${cluster}`;
  const log = await git(repo.bare, ['--git-dir', repo.bare, 'log', '--reverse', '--format=%H %ct', branch]);
  for (const line of log.split('\n')) {
    const [oid, ct] = line.split(' ');
    const doc = (await repo.statusFile(SPEC_FILE, oid)) ?? '';
    const r = (parse(doc) ?? {}) as SpecReport;
    if (r.revision === revision && r.phase === 'Complete') return Number(ct) * 1000;
  }
  throw new Error(`${branch} never said ${revision} Complete`);
}

/** The phases `cluster`'s status branch gave `revision` in the commits written before `before` (ms). */
async function phasesAt(repo: FleetRepo, cluster: string, revision: string, before: number): Promise<Set<string>> {
  const branch = `drydock/status-${cluster}`;
  const log = await git(repo.bare, ['--git-dir', repo.bare, 'log', '--format=%H %ct', branch]);
  const phases = new Set<string>();
  for (const line of log.split('\n')) {
    const [oid, ct] = line.split(' ');
    if (Number(ct) * 1000 >= before) continue;
    const r = (parse((await repo.statusFile(SPEC_FILE, oid)) ?? '') ?? {}) as SpecReport;
    if (r.revision === revision) phases.add(r.phase ?? '');
  }
  return phases;
}

/** When b's watch first showed drydock acting on a node (locked, cordoned, or a node on `image`), or undefined. */
function firstAction(events: readonly Announced[], image: string): number | undefined {
  const acted = events.find((e) => {
    const o = e.obj as { metadata?: { annotations?: Record<string, string> }; spec?: { unschedulable?: boolean } };
    const a = o.metadata?.annotations ?? {};
    return (
      o.spec?.unschedulable === true ||
      a['drydock.dev/operation']?.includes(`@`) === true ||
      a['sim.drydock.dev/image'] === image
    );
  });
  return acted?.at;
}

describe('e2e: a fleet of two clusters in stages', function () {
  this.timeout(300_000);
  const cpA = useControlPlane();
  const cpB = useControlPlane();
  const dirs: string[] = [];
  let repo: FleetRepo;
  let a: Member;
  let b: Member;
  const watchB = new ApiLog();

  before(async function () {
    this.timeout(180_000);
    repo = await startFleetRepo(fleetRepoFiles());
    const member = async (name: string, cp: ControlPlane): Promise<Member> => {
      const sim = await startSim(cp, dirs);
      const cacheDir = tempDir(`drydock-e2e-fleet-${name}-cache-`);
      dirs.push(cacheDir);
      const args = [...drydockArgs(repo, cp.kubeconfigPath, sim.url, cacheDir), '--cluster', name];
      const m: Member = { name, cp, sim, args, drydock: undefined };
      await startMemberDrydock(m);
      return m;
    };
    [a, b] = await Promise.all([member('a', cpA()), member('b', cpB())]);
    await watchB.start(cpB().adminKubeConfig(), { nodes: '/api/v1/nodes' });
  });

  after(async function () {
    this.timeout(60_000);
    watchB.stop();
    // Unset where before() never ran (the unit-only pass skips the control plane) or failed early.
    const started = [a, b] as (Member | undefined)[];
    for (const m of started) if (m) await stopMemberDrydock(m);
    await stopWorld({ sim: started[0]?.sim, dirs: [] });
    await stopWorld({ sim: started[1]?.sim, repo, dirs });
  });

  it('rolls a shared image change through a, then b after the soak, b saying what it waits for', async () => {
    const since = watchB.events.length;
    await repo.push({ 'images/worker.yaml': workerImage(IMAGE_V2) }, 'images: worker v2');
    const seen = new Set<string>();
    const groupImages: { at: number; image: string }[] = [];
    await eventually(
      'a on v2, then b on v2',
      async () => {
        const w = (await report(repo, 'b')).waitingFor;
        if (w !== undefined) seen.add(w);
        // b's cloud group: until the soak ended, a scale-up there must not boot v2.
        groupImages.push({ at: Date.now(), image: b.sim.cloud.inspectGroup('workers').image });
        await converged(a.cp.adminKubeConfig(), IMAGE_V2, WORKERS);
        return converged(b.cp.adminKubeConfig(), IMAGE_V2, WORKERS);
      },
      { timeoutMs: 180_000, intervalMs: 200 },
    );
    const revision = (await report(repo, 'a')).revision ?? '';
    assert.match(revision, /^[0-9a-f]{16}$/);
    const completeAt = await firstComplete(repo, 'a', revision);
    const until = new Date(completeAt + SOAK_MS).toISOString();
    const want = `NodeImage/worker revision ${revision}`;
    assert.ok(
      seen.has(`fleet: waits for cluster a (stage first) to report ${want} Complete`),
      `b's waits: ${[...seen].join(' | ')}`,
    );
    assert.ok(seen.has(`fleet: stage first soaks ${want} until ${until}`), `b's waits: ${[...seen].join(' | ')}`);
    const heldImages = new Set(groupImages.filter((g) => g.at < completeAt + SOAK_MS - 1000).map((g) => g.image));
    assert.deepEqual([...heldImages], [IMAGE_V1], "b's group image before the soak ended");
    watchB.assertWhole();
    const started = firstAction(watchB.events.slice(since), IMAGE_V2);
    assert.ok(started !== undefined, 'the watch saw b act');
    assert.ok(started >= completeAt + SOAK_MS, `b acted ${completeAt + SOAK_MS - started} ms before the soak ended`);
    // b's own branch agrees: until the soak ended, it said the change waits (commit times are whole seconds).
    const early = await phasesAt(repo, 'b', revision, completeAt + SOAK_MS - 1000);
    assert.ok(
      early.size > 0 && [...early].every((p) => p === 'Waiting'),
      `b's phases before the soak ended: ${[...early].join(', ')}`,
    );
  });

  it("holds b once a's branch is stale, although a reported the change Complete", async () => {
    const since = watchB.events.length;
    await repo.push({ 'images/worker.yaml': workerImage(IMAGE_V3) }, 'images: worker v3');
    await eventually('a on v3', async () => converged(a.cp.adminKubeConfig(), IMAGE_V3, WORKERS), {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const revision = await eventually('a reports v3 Complete', async () => {
      const r = await report(repo, 'a');
      return r.phase === 'Complete' && r.revision;
    });
    await stopMemberDrydock(a);
    const soakEnd = (await firstComplete(repo, 'a', revision)) + SOAK_MS;
    const held = `fleet: stage first is beyond its tolerance of 0 for NodeImage/worker revision ${revision} (unreachable: a); every later stage is held`;
    await eventually('b held by a stale a', async () => (await report(repo, 'b')).waitingFor === held, {
      timeoutMs: 60_000,
    });
    // Past the end of the soak, and some of b's rounds after it: b still has not started.
    await eventually('the soak is over', async () => Date.now() > soakEnd + 1_000, { timeoutMs: 60_000 });
    assert.ok(b.drydock);
    await afterRounds(b.drydock, 3);
    assert.equal((await report(repo, 'b')).waitingFor, held);
    // A person's `drydock plan --cluster b` (no pull request) shows the same gate, read the same way.
    const planned = await drydockCli(
      [
        'plan',
        '--repo',
        repo.url,
        '--cluster',
        'b',
        '--kubeconfig',
        b.cp.kubeconfigPath,
        '--provider',
        'sim',
        '--cloud-endpoint',
        b.sim.url,
      ],
      { DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password },
    );
    assert.ok(planned.includes(held), planned);
    watchB.assertWhole();
    assert.equal(firstAction(watchB.events.slice(since), IMAGE_V3), undefined, 'b acted on v3');
  });

  it('holds b while the change failed in a', async () => {
    const since = watchB.events.length;
    // Every boot on a's cloud from now on never joins: the replacement times out and a fails.
    await new SimHttpProvider(a.sim.url).setFaults({ bootFailureRate: 1 });
    await repo.push({ 'images/worker.yaml': workerImage(IMAGE_V4) }, 'images: worker v4');
    await startMemberDrydock(a);
    const revision = await eventually(
      'a reports v4 failed',
      async () => {
        const r = await report(repo, 'a');
        return (r.phase === 'Failed' || r.phase === 'Halted') && r.revision;
      },
      { timeoutMs: 120_000 },
    );
    const held = `fleet: stage first is beyond its tolerance of 0 for NodeImage/worker revision ${revision} (failed in a); every later stage is held`;
    await eventually('b held by the failure in a', async () => (await report(repo, 'b')).waitingFor === held, {
      timeoutMs: 60_000,
    });
    assert.ok(b.drydock);
    await afterRounds(b.drydock, 3);
    assert.equal((await report(repo, 'b')).waitingFor, held);
    watchB.assertWhole();
    assert.equal(firstAction(watchB.events.slice(since), IMAGE_V4), undefined, 'b acted on v4');
  });
});
