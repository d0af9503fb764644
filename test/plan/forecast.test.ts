import { strict as assert } from 'node:assert';
import { plan } from '../../src/plan/index.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import {
  approval,
  at,
  cloudGroup,
  config,
  desired,
  iso,
  maintenanceWindow,
  nodeImage,
  observed,
  pod,
  scalingGroup,
  workers,
} from './fixtures.js';
import { V1, V2, bare } from './helpers.js';

const sg = scalingGroup('workers', 'workers');
const world = (n: number) => {
  const w = workers(n, V1);
  return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
};
const waves = (rollout: Partial<RolloutPolicy>, n: number, now: Date, parts: Parameters<typeof desired>[0] = {}) =>
  plan(desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, rollout)], ...parts }), world(n), now, {
    perNodeSeconds: 100,
  });

describe('plan: forecast', () => {
  it('waves of the parallelism, each perNodeSeconds long, and the ETA at the end of the last', () => {
    const p = waves({ maxSurge: 2 }, 5, at(0));
    assert.deepEqual(
      p.forecast.waves.map((w) => [w.label, w.nodes, w.start, w.end]),
      [
        ['wave 1', ['worker-0', 'worker-1'], iso(0), iso(100)],
        ['wave 2', ['worker-2', 'worker-3'], iso(100), iso(200)],
        ['wave 3', ['worker-4'], iso(200), iso(300)],
      ],
    );
    assert.equal(p.forecast.eta, iso(300));
  });

  it('already shows the waves in the round that sets the group image', () => {
    const w = workers(5, V1);
    const before = observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V1, w.instances)] });
    const p = plan(
      desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, { maxSurge: 2 })] }),
      before,
      at(0),
      { perNodeSeconds: 100 },
    );
    assert.deepEqual(
      bare(p).map((a) => a.kind),
      ['setGroupImage'],
    );
    assert.deepEqual(p.forecast, waves({ maxSurge: 2 }, 5, at(0)).forecast);
    assert.deepEqual(
      p.forecast.waves.map((x) => x.nodes),
      [['worker-0', 'worker-1'], ['worker-2', 'worker-3'], ['worker-4']],
    );
  });

  it('the canary wave goes alone and the soak follows it', () => {
    const p = waves({ maxSurge: 2, canary: { nodes: 1, soakSeconds: 60 } }, 3, at(0));
    assert.deepEqual(
      p.forecast.waves.map((w) => [w.label, w.nodes, w.start, w.end]),
      [
        ['canary', ['worker-0'], iso(0), iso(100)],
        ['wave 2', ['worker-1', 'worker-2'], iso(160), iso(260)],
      ],
    );
  });

  it('parallelism is the least of concurrency, the group limits and the cluster budget', () => {
    const p = waves({ maxSurge: 5, concurrency: 4 }, 6, at(0), { config: config(3) });
    assert.deepEqual(
      p.forecast.waves.map((w) => w.nodes.length),
      [3, 3],
    );
  });

  it('waves start only inside the maintenance window', () => {
    // 22:00-24:00 Berlin (21:00-23:00Z in March); one-hour waves.
    const nightly = maintenanceWindow('nightly', 'Europe/Berlin', [{ cron: '0 22 * * *', durationSeconds: 7200 }]);
    const p = plan(
      desired({
        scalingGroups: [sg],
        nodeImages: [nodeImage('workers', V2, { window: 'nightly' })],
        maintenanceWindows: [nightly],
      }),
      world(3),
      new Date('2026-03-02T12:00:00Z'),
      { perNodeSeconds: 3600 },
    );
    assert.deepEqual(
      p.forecast.waves.map((w) => [w.start, w.end]),
      [
        ['2026-03-02T21:00:00.000Z', '2026-03-02T22:00:00.000Z'],
        ['2026-03-02T22:00:00.000Z', '2026-03-02T23:00:00.000Z'],
        ['2026-03-03T21:00:00.000Z', '2026-03-03T22:00:00.000Z'],
      ],
    );
    assert.equal(p.forecast.eta, '2026-03-03T22:00:00.000Z');
  });

  it('no ETA while waiting for a person', () => {
    const p = waves({ approval: { required: 'start' } }, 2, at(0));
    assert.equal(p.forecast.eta, undefined);
    assert.equal(p.forecast.waves.length, 2);
    const approved = waves({ approval: { required: 'start' } }, 2, at(0), {
      approvals: [approval('go', 'workers', V2, 'start')],
    });
    assert.equal(approved.forecast.eta, iso(200));
  });

  it("status rows carry the ETA: each node its wave's end, the spec its last wave's", () => {
    // One node at a time, 100 s each; the canary (worker-0) 0-100 s, its soak to 160 s, then
    // worker-1 160-260, worker-2 260-360, worker-3 360-460.
    const p = waves({ maxSurge: 1, concurrency: 1, canary: { nodes: 1, soakSeconds: 60 } }, 4, at(0));
    const status = p.specs.find((x) => x.spec.name === 'workers');
    assert.equal(status?.eta, iso(460));
    assert.deepEqual(
      status?.nodes.map((r) => [r.node, r.eta]),
      [
        ['worker-0', iso(100)],
        ['worker-1', iso(260)],
        ['worker-2', iso(360)],
        ['worker-3', iso(460)],
      ],
    );
  });

  it('no ETA on the status while an approval is missing, nor once nothing is left', () => {
    const waiting = waves({ approval: { required: 'start' } }, 2, at(0)).specs[0];
    assert.equal(waiting?.eta, undefined);
    assert.deepEqual(
      waiting?.nodes.map((r) => r.eta),
      [undefined, undefined],
    );
    const w = workers(2, V2);
    const done = plan(
      desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }),
      observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] }),
      at(0),
    ).specs[0];
    assert.equal(done?.eta, undefined);
  });

  it('a complete rollout forecasts nothing and is due now', () => {
    const w = workers(2, V2);
    const p = plan(
      desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }),
      observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] }),
      at(0),
    );
    assert.deepEqual(p.forecast, { waves: [], eta: iso(0) });
    const status = p.specs[0];
    assert.equal(status?.phase, 'Complete');
    assert.deepEqual(status?.progress, { done: 2, total: 2 });
    assert.deepEqual(
      status?.conditions.map((c) => [c.type, c.status]),
      [
        ['Ready', 'True'],
        ['Progressing', 'False'],
        ['Stalled', 'False'],
      ],
    );
  });
});

describe('plan: observation problems and health', () => {
  it('a scaling group that could not be read is a cloud wait with its retry time; nothing is touched', () => {
    const o = {
      ...world(2),
      cloudGroups: [],
      problems: [
        {
          source: 'cloud/workers',
          code: 'Throttled',
          message: 'describing group workers: rate limited',
          retryAfterSeconds: 30,
        },
      ],
    };
    const p = plan(desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }), o, at(0));
    assert.deepEqual(bare(p), []);
    assert.deepEqual(p.waits, [
      {
        spec: { kind: 'NodeImage', name: 'workers' },
        code: 'cloud',
        reason: 'ScalingGroup workers: describing group workers: rate limited',
        until: iso(30),
      },
    ]);
  });

  it('a pod on the replacement that is not Ready holds the health gate, naming the pod', () => {
    const w = workers(1, V1, () => ({
      annotations: {
        'drydock.dev/operation': 'NodeImage/workers@workers-img:v2',
        'drydock.dev/phase': 'Pending',
        'drydock.dev/phase-since': iso(0),
        'drydock.dev/replaced-by': 'i-9',
      },
    }));
    const o = world(0);
    const inst = {
      id: 'i-9',
      providerID: 'sim://workers/i-9',
      image: V2,
      state: 'running' as const,
      createdAt: iso(5),
    };
    const rn = { ...w.nodes[0]!, name: 'worker-9', providerID: inst.providerID, annotations: {} };
    const p = plan(
      desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }),
      {
        ...o,
        nodes: [...w.nodes, rn],
        pods: [pod('kube-system', 'agent-9', 'worker-9', { ownerKind: 'DaemonSet', ready: false })],
        cloudGroups: [cloudGroup('workers', V2, [...w.instances, inst])],
      },
      at(100),
    );
    assert.deepEqual(bare(p), []);
    assert.equal(p.waits[0]?.reason, 'replacement worker-9 of worker-0: pod kube-system/agent-9 is not Ready yet');
  });
});
