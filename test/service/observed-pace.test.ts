/**
 * The service's forecast times: the status branch's history read once at start (through the
 * service's own sources), then the statuses the service publishes, give the planner the nodes
 * seen done, and the status it publishes next has the ETA of their median. Expected times are
 * worked out by hand: a node from its first in-flight row to the status where it is gone.
 */
import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import { describePace, MAX_OBSERVATIONS } from '../../src/plan/pace.js';
import { plan } from '../../src/plan/index.js';
import type { NodeRow, Plan, SpecStatus } from '../../src/plan/types.js';
import { createMetrics } from '../../src/service/metrics.js';
import { ObservedPace } from '../../src/service/observed-pace.js';
import { createServiceSources } from '../../src/service/sources.js';
import { StatusPublisher } from '../../src/service/status-publisher.js';
import { buildStatus } from '../../src/service/status.js';
import { GitSource, StatusWriter } from '../../src/source/index.js';
import { tempDir, TEST_USER } from '../support/git-server.js';
import { specStatus } from '../support/spec-status.js';
import { at, cloudGroup, desired, iso, nodeImage, observed, scalingGroup, workers } from '../plan/fixtures.js';
import { V1, V2 } from '../plan/helpers.js';
import { createFixture, type Fixture } from '../source/fixture.js';

const row = (node: string, phase: NodeRow['phase'], since?: number): NodeRow => ({
  node,
  phase,
  ...(since !== undefined ? { since: iso(since) } : {}),
});
const workersStatus = (nodes: NodeRow[]): SpecStatus[] => [specStatus('NodeImage', 'workers', { nodes })];

const EMPTY_PLAN: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };

/** A publisher as the service makes it, on a clock the test moves; a standby (it writes nothing). */
function publisherWith(pace: ObservedPace) {
  let now = at(0);
  const publisher = new StatusPublisher({
    logger: pino({ level: 'silent' }),
    metrics: createMetrics({ defaultMetrics: false }),
    intervalMs: 2_000,
    clock: () => now.getTime(),
    mayWrite: () => false,
    requestRound: () => undefined,
    pace,
  });
  const publish = async (seconds: number, specs: readonly SpecStatus[]): Promise<void> => {
    now = at(seconds);
    await publisher.publish(buildStatus({ cluster: 'prod-eu', plan: { ...EMPTY_PLAN, specs } }));
  };
  return { publisher, publish };
}

describe('service forecast: the nodes seen done, from the status history and the published statuses', function () {
  this.timeout(30_000);
  let fx: Fixture;
  let cache: { dir: string; remove: () => void };
  beforeEach(async () => {
    fx = await createFixture();
    cache = tempDir();
    await fx.commit({ 'drydock.yaml': 'cluster: prod-eu\n' }, 1);
    // An earlier run: old-a taken at 5 s, drained, gone at 70 s (65 s).
    const source = new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 });
    let now = at(0);
    const writer = new StatusWriter({ source, cluster: 'prod-eu', now: () => now, retryDelayMs: 5 });
    const rounds: Array<[number, NodeRow[]]> = [
      [10, [row('old-a', 'Pending', 5), row('old-b', 'Pending')]],
      [40, [row('old-a', 'Draining', 38), row('old-b', 'Pending')]],
      [70, [row('old-b', 'Pending')]],
    ];
    for (const [seconds, nodes] of rounds) {
      now = at(seconds);
      await writer.write({ cluster: 'prod-eu', sourceCommit: 'a'.repeat(40), specs: workersStatus(nodes) });
    }
  });
  afterEach(async () => {
    await fx.close();
    cache.remove();
  });

  it('the published ETA uses the median of the history and of what the service saw since', async () => {
    const { statusHistory } = await createServiceSources(
      {
        repo: fx.url,
        branch: 'main',
        path: '.',
        cacheDir: cache.dir,
        gitUsername: TEST_USER.username,
        gitPassword: TEST_USER.password,
        env: {},
      },
      pino({ level: 'silent' }),
    );
    const pace = new ObservedPace();
    pace.seed(await (statusHistory ?? assert.fail('a Git source reads its status history'))());
    assert.deepEqual(
      pace.timings().map((t) => [t.node, t.seconds]),
      [['old-a', 65]],
    );

    // This run: old-b taken at 100 s, gone at 185 s (85 s).
    const { publish } = publisherWith(pace);
    await publish(100, workersStatus([row('old-b', 'Draining', 100)]));
    await publish(150, workersStatus([row('old-b', 'Draining', 100)]));
    await publish(185, workersStatus([]));
    assert.deepEqual(
      pace.timings().map((t) => [t.node, t.seconds]),
      [
        ['old-a', 65],
        ['old-b', 85],
      ],
    );

    // Five nodes, two at a time: three waves of the median, (65 + 85) / 2 = 75 s, from 200 s.
    const w = workers(5, V1);
    const next = plan(
      desired({
        scalingGroups: [scalingGroup('workers', 'workers')],
        nodeImages: [nodeImage('workers', V2, { maxSurge: 2, maxUnavailable: 2 })],
      }),
      observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] }),
      at(200),
      { observedNodes: pace.timings() },
    );
    const published = buildStatus({ cluster: 'prod-eu', plan: next });
    const spec = published.specs.find((s) => s.spec.name === 'workers') ?? assert.fail('no workers status');
    assert.equal(spec.eta, iso(200 + 3 * 75));
    assert.deepEqual(next.forecast.paces?.map(describePace), ['1m 15s per node, from 2 observed nodes of this spec']);
  });
});

describe('service forecast: what it keeps', () => {
  it('the newest nodes of each spec, as many as a median is taken of', async () => {
    const pace = new ObservedPace();
    const { publish } = publisherWith(pace);
    const n = MAX_OBSERVATIONS + 5;
    for (let i = 0; i < n; i++) {
      await publish(10 * i, workersStatus([row(`n-${i}`, 'Updating', 10 * i)]));
      await publish(10 * i + 7, workersStatus([row(`n-${i}`, 'Done')]));
    }
    const kept = pace.timings();
    assert.equal(kept.length, MAX_OBSERVATIONS);
    assert.deepEqual(kept[0]?.node, 'n-5');
    assert.ok(kept.every((t) => t.seconds === 7));
  });
});
