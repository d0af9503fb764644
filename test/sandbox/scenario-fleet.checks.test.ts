import { strict as assert } from 'node:assert';
import { parseAllDocuments } from 'yaml';
import { FLEET_SHAPE, fleetSeedFiles, memberLayout } from '../../src/sandbox/fleet-world.js';
import { stateLayout } from '../../src/sandbox/layout.js';
import {
  fleetProblems,
  fleetSummaryLines,
  soakEnd,
  type ClusterSample,
  type FleetObservation,
} from '../../src/sandbox/scenario-fleet.js';
import type { NodeView } from '../../src/sandbox/view.js';
import { loadFleetViews } from '../../src/spec/fleet-load.js';
import { memorySource } from '../spec/support.js';

const COMMIT = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b';
const REV = '8016b19446ca0b68';
const NEW = 'registry.example/node-os:v1.0.1';
const COMPLETE_AT = Date.parse('2026-11-27T07:39:14Z');
const UNTIL = '2026-11-27T07:39:24.000Z';
const WAITED = `fleet: waits for cluster a (stage first) to report NodeImage/worker revision ${REV} Complete`;
const SOAKED = `fleet: stage first soaks NodeImage/worker revision ${REV} until ${UNTIL}`;

function node(name: string, extra: Partial<NodeView> = {}): NodeView {
  return { name, group: 'workers', ready: true, unschedulable: false, image: NEW, ...extra };
}
function cluster(extra: Partial<ClusterSample> = {}): ClusterSample {
  return {
    nodes: [node('workers-i-0003'), node('workers-i-0004')],
    statusSource: '1a2b3c4',
    report: { phase: 'Complete', revision: REV },
    ...extra,
  };
}
const good: FleetObservation = {
  commit: COMMIT,
  image: NEW,
  revision: REV,
  secondWaits: [WAITED, SOAKED, '1 node(s) queued'],
  secondFirstAction: Date.parse(UNTIL) + 1200,
  first: cluster(),
  second: cluster(),
  history: {
    firstCompleteAt: COMPLETE_AT,
    secondBeforeSoakEnd: [
      { phase: 'Waiting', done: 0, total: 2 },
      { phase: 'Waiting', done: 0, total: 2 },
    ],
  },
};

describe('sandbox fleet scenario checks', () => {
  const cases: [string, FleetObservation, string[]][] = [
    ['a rolled, b waited for its report and the soak, then rolled', good, []],
    [
      'b started before the soak ended, and its branch said so',
      {
        ...good,
        secondFirstAction: Date.parse(UNTIL) - 3000,
        history: {
          ...good.history,
          secondBeforeSoakEnd: [
            { phase: 'Waiting', done: 0, total: 2 },
            { phase: 'Progressing', done: 1, total: 2 },
          ],
        },
      },
      [
        'cluster b started 3s before the soak ended',
        `drydock/status-b reported NodeImage/worker revision ${REV} as Waiting 0/2, Progressing 1/2 before the soak ended, expected Waiting with no node done`,
      ],
    ],
    [
      'b never said it waited for a, and the soak it named was shorter than the fleet file says',
      {
        ...good,
        secondWaits: [`fleet: stage first soaks NodeImage/worker revision ${REV} until 2026-11-27T07:39:20.000Z`],
        secondFirstAction: Date.parse('2026-11-27T07:39:21Z'),
      },
      [
        `cluster b never said "${WAITED}"; it said: fleet: stage first soaks NodeImage/worker revision ${REV} until 2026-11-27T07:39:20.000Z`,
        'the soak ended at 2026-11-27T07:39:20.000Z, before 10s after cluster a reported Complete at 2026-11-27T07:39:14.000Z',
      ],
    ],
    [
      'b never named a soak: what it did after cannot be judged',
      { ...good, secondWaits: [WAITED], secondFirstAction: undefined },
      [`cluster b never named the end of stage first's soak; it said: ${WAITED}`],
    ],
    [
      'b left a node on the old image, cordoned, and its branch reports on another commit at another revision',
      {
        ...good,
        second: cluster({
          nodes: [
            node('workers-i-0003'),
            node('workers-i-0002', { image: 'registry.example/node-os:v1.0.0', unschedulable: true }),
          ],
          statusSource: '9999999',
          report: { phase: 'Progressing', revision: 'ffff000011112222' },
        }),
      },
      [
        'drydock/status-b reports on 9999999, not on the image commit 1a2b3c4',
        'NodeImage/worker is Progressing on drydock/status-b, expected Complete',
        `cluster b reports revision ffff000011112222, cluster a ${REV}`,
        'node workers-i-0002 of cluster b runs registry.example/node-os:v1.0.0',
        'node workers-i-0002 of cluster b is cordoned',
      ],
    ],
    [
      "b's branch reported the change Progressing, counting no node, before the soak ended",
      {
        ...good,
        history: {
          ...good.history,
          secondBeforeSoakEnd: [
            { phase: 'Progressing', done: 0, total: 0 },
            { phase: 'Waiting', done: 0, total: 2 },
          ],
        },
      },
      [
        `drydock/status-b reported NodeImage/worker revision ${REV} as Progressing 0/0, Waiting 0/2 before the soak ended, expected Waiting with no node done`,
      ],
    ],
    [
      "b's branch said nothing but Progressing 0/0 before the soak ended",
      { ...good, history: { ...good.history, secondBeforeSoakEnd: [{ phase: 'Progressing', done: 0, total: 0 }] } },
      [
        `drydock/status-b reported NodeImage/worker revision ${REV} as Progressing 0/0 before the soak ended, expected Waiting with no node done`,
      ],
    ],
    [
      "a's branch never said Complete",
      { ...good, history: { ...good.history, firstCompleteAt: undefined } },
      [`drydock/status-a never said NodeImage/worker revision ${REV} Complete`],
    ],
  ];
  for (const [name, observation, expected] of cases) {
    it(name, () => {
      assert.deepEqual(fleetProblems(observation, FLEET_SHAPE), expected);
    });
  }

  it('reads the end of the soak b named, and only that stage and revision', () => {
    assert.equal(soakEnd(FLEET_SHAPE, REV, [WAITED, SOAKED]), Date.parse(UNTIL));
    assert.equal(soakEnd(FLEET_SHAPE, 'ffff000011112222', [WAITED, SOAKED]), undefined);
    assert.equal(soakEnd(FLEET_SHAPE, REV, [WAITED]), undefined);
  });

  it('sums up what each cluster did and what b waited for', () => {
    const lines = fleetSummaryLines(
      {
        commit: COMMIT,
        durationMs: 30_000,
        from: 'registry.example/node-os:v1.0.0',
        to: NEW,
        revision: REV,
        soakMs: 10_000,
        nodes: { a: 2, b: 2 },
        startedAfterMs: 11_000,
        waits: [WAITED, SOAKED],
      },
      FLEET_SHAPE,
    );
    assert.deepEqual(lines, [
      `fleet complete in 30s: NodeImage/worker registry.example/node-os:v1.0.0 → ${NEW} rolled on cluster a (2 nodes), then on cluster b (2 nodes), which started 11s after a reported it Complete (soak 10s; commit 1a2b3c4, revision ${REV})`,
      `  cluster b waited: ${WAITED}`,
      `  cluster b waited: ${SOAKED}`,
    ]);
  });

  it('seeds a fleet repository drydock accepts for each cluster, with the stages and soak the checks expect', async () => {
    const files = fleetSeedFiles();
    const fleet = parseAllDocuments(files['fleet/fleet.yaml'] ?? '')[0]?.toJS() as {
      spec: { stages: { name: string; clusters: string[]; soak?: string }[] };
    };
    assert.deepEqual(
      fleet.spec.stages.map((s) => [s.name, s.clusters, s.soak]),
      [
        ['first', ['a'], '10s'],
        ['second', ['b'], undefined],
      ],
    );
    const views = await loadFleetViews(memorySource(files));
    assert.equal(views.kind, 'fleet');
    assert.deepEqual(
      views.views.map((v) => [v.cluster, v.result.ok ? v.result.files : v.result.errors]),
      ['a', 'b'].map((c) => [c, [`clusters/${c}/groups/workers.yaml`, 'drydock.yaml', 'images/worker.yaml']]),
    );
  });

  it("keeps each cluster's control plane, cloud and drydock in a folder of its own", () => {
    const layout = stateLayout('/state');
    const a = memberLayout(layout, 'a');
    assert.deepEqual(
      [a.controlPlane, a.cloud, a.drydock],
      ['/state/a/control-plane', '/state/a/cloud', '/state/a/drydock'],
    );
    assert.equal(a.logs, layout.logs);
    assert.equal(a.gitRoot, layout.gitRoot);
  });
});
