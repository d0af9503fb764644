/**
 * `drydock plan --base --head` as data: the spec diff and what the head does on a cluster,
 * per kind of change, with the real planner over a described cluster. Expected numbers are
 * worked out by hand from the fixtures (soaks and waves as the policy says; with nothing
 * observed, the default per node: a replacement 210 s, boot and join 150 and drain 60; an
 * in-place update 240 s, drain 60, Job 60 and reboot 120; minReadySeconds 0).
 */
import { strict as assert } from 'node:assert';
import { parse } from 'yaml';
import type { ObservedState } from '../../src/observe/types.js';
import type { PrReport } from '../../src/report/pr-report.js';
import type { NodeTiming } from '../../src/plan/index.js';
import { changeSentence, prHasFindings } from '../../src/report/pr-render.js';
import type { LoadResult } from '../../src/spec/model.js';
import {
  approval,
  cloudGroup,
  desired,
  instance,
  maintenanceWindow,
  node,
  observed,
  scalingGroup,
} from '../plan/fixtures.js';
import { cluster, edgeCluster, edgeState, invalid, ok, report, state, worker, V1, V2 } from './pr-fixtures.js';

const sentences = (r: PrReport) => r.changes.map((c) => changeSentence(c, r.liveSkipped !== undefined));

interface Case {
  readonly name: string;
  readonly base: LoadResult;
  readonly head: LoadResult;
  readonly live?: ObservedState;
  /** The nodes drydock saw done, as drydock plan reads them off the status branch. */
  readonly observedNodes?: readonly NodeTiming[];
  readonly check: (r: PrReport) => void;
}

const cases: Case[] = [
  {
    name: 'image change: nodes, groups, waves canary first, ETA (canary 3.5 min + soak 10 + two waves of 2: 20.5)',
    base: ok(state(V1)),
    head: ok(state(V2)),
    live: cluster(),
    check: (r) => {
      assert.deepEqual(sentences(r), [
        'NodeImage worker: image img:v1 → img:v2; 5 nodes in 2 groups will be replaced in 3 waves, canary first; ETA 21 min (3m 30s per node, default, no observations)',
      ]);
      assert.deepEqual(r.approvals, []);
      assert.equal(prHasFindings(r), false);
    },
  },
  {
    name: 'image change with nodes of the last rollout observed: their median per node (canary 1 + soak 10 + 2 waves: 13 min)',
    base: ok(state(V1)),
    head: ok(state(V2)),
    live: cluster(),
    observedNodes: [50, 70, 60].map((seconds, i) => ({
      spec: { kind: 'NodeImage', name: 'worker' },
      kind: 'replace',
      node: `n-old-${i}`,
      doneAt: '2026-03-01T10:00:00.000Z',
      seconds,
    })),
    check: (r) =>
      assert.deepEqual(sentences(r), [
        'NodeImage worker: image img:v1 → img:v2; 5 nodes in 2 groups will be replaced in 3 waves, canary first; ETA 13 min (1m per node, from 3 observed nodes of this spec)',
      ]),
  },
  {
    name: 'image change without cluster access: the diff, and the live part said skipped',
    base: ok(state(V1)),
    head: ok(state(V2)),
    check: (r) => {
      assert.deepEqual(sentences(r), ['NodeImage worker: image img:v1 → img:v2 (nodes affected: live part skipped)']);
      assert.equal(r.liveSkipped, 'no cluster access');
    },
  },
  {
    name: 'a PDB allowing 0 disruptions on the canary node blocks it now, and there is no ETA',
    base: ok(state(V1)),
    head: ok(state(V2)),
    live: cluster(0),
    check: (r) => {
      const waits = r.changes[0]?.impact?.waits ?? [];
      assert.deepEqual(
        waits.filter((w) => w.code === 'pdb').map((w) => [w.node, w.reason]),
        [['n-blue-i0', 'PDB apps/web allows 0 disruptions now (pod apps/web-0 on n-blue-i0 would be evicted)']],
      );
      assert.match(sentences(r)[0] ?? '', /no ETA while blocked$/);
      assert.equal(prHasFindings(r), true);
    },
  },
  {
    name: 'a closed window is a wait that names the next opening',
    base: ok(state(V1)),
    head: ok(
      state(
        V2,
        { window: 'nightly' },
        {
          maintenanceWindows: [
            maintenanceWindow('nightly', 'Europe/Berlin', [{ cron: '0 22 * * *', durationSeconds: 7200 }]),
          ],
        },
      ),
    ),
    live: cluster(),
    check: (r) => {
      const windowWaits = (r.changes.find((c) => c.kind === 'NodeImage')?.impact?.waits ?? []).filter(
        (w) => w.code === 'window',
      );
      assert.deepEqual(
        windowWaits.map((w) => [w.reason, w.until]),
        [
          [
            'waiting for window nightly, opens 2026-03-02 22:00 Europe/Berlin (2026-03-02 21:00 UTC)',
            '2026-03-02T21:00:00.000Z',
          ],
        ],
      );
    },
  },
  {
    name: 'approval required at start: the file to merge, with the exact image',
    base: ok(state(V1)),
    head: ok(state(V2, { approval: { required: 'start' } })),
    live: cluster(),
    check: (r) => {
      assert.equal(r.approvals.length, 1);
      const a = r.approvals[0]!;
      assert.equal(a.path, 'approvals/worker-start.yaml');
      assert.deepEqual(parse(a.content), {
        apiVersion: 'drydock.dev/v1alpha1',
        kind: 'Approval',
        metadata: { name: 'worker-start' },
        spec: { target: { kind: 'NodeImage', name: 'worker' }, image: V2, stage: 'start' },
      });
      assert.match(sentences(r)[0] ?? '', /ETA 21 min once approved \(3m 30s per node, default, no observations\)$/);
    },
  },
  {
    name: 'an approval merged with the head for its image: none more needed',
    base: ok(state(V1)),
    head: ok(
      state(
        V2,
        { approval: { required: 'afterCanary' } },
        { approvals: [approval('worker-after-canary', 'worker', V2, 'afterCanary')] },
      ),
    ),
    check: (r) => {
      assert.deepEqual(r.approvals, []);
      assert.deepEqual(
        r.changes.map((c) => [c.kind, c.name, c.change]),
        [
          ['Approval', 'worker-after-canary', 'added'],
          ['NodeImage', 'worker', 'changed'],
        ],
      );
    },
  },
  {
    name: 'an approval of the old image does not count for the new one',
    base: ok(
      state(
        V1,
        { approval: { required: 'afterCanary' } },
        { approvals: [approval('worker-after-canary', 'worker', V1, 'afterCanary')] },
      ),
    ),
    head: ok(
      state(
        V2,
        { approval: { required: 'afterCanary' } },
        { approvals: [approval('worker-after-canary', 'worker', V1, 'afterCanary')] },
      ),
    ),
    check: (r) =>
      assert.deepEqual(
        r.approvals.map((a) => [a.path, a.stage]),
        [['approvals/worker-after-canary.yaml', 'afterCanary']],
      ),
  },
  {
    name: 'rollout-policy edit: each field in words, and no node needs replacing',
    base: ok(state(V2)),
    head: ok(state(V2, { maxSurge: 3, canary: { nodes: 2, soakSeconds: 600 } })),
    live: observed({
      nodes: [node('n-blue-i0', instance('blue', 'blue-i0', V2).providerID)],
      cloudGroups: [cloudGroup('blue', V2, [instance('blue', 'blue-i0', V2)]), cloudGroup('green', V2, [])],
    }),
    check: (r) =>
      assert.deepEqual(sentences(r), [
        'NodeImage worker: rollout.canary.nodes 1 → 2; rollout.maxSurge 2 → 3; no node needs replacing',
      ]),
  },
  {
    name: 'an inPlace image change: the nodes are updated in place and rebooted, not replaced, and in no group',
    base: ok(edgeState(V1)),
    head: ok(edgeState(V2)),
    live: edgeCluster(),
    check: (r) =>
      assert.deepEqual(sentences(r), [
        'NodeImage edge: image img:v1 → img:v2; 3 nodes will be updated in place and rebooted in 2 waves, canary first; ETA 18 min (4m per node, default, no observations)',
      ]),
  },
  {
    name: 'an inPlace policy edit with every node on the image: no node needs updating',
    base: ok(edgeState(V2)),
    head: ok(edgeState(V2, { maxSurge: 3 })),
    live: edgeCluster(V2),
    check: (r) => assert.deepEqual(sentences(r), ['NodeImage edge: rollout.maxSurge 2 → 3; no node needs updating']),
  },
  {
    name: 'new specs and removed specs',
    base: ok(
      desired({
        scalingGroups: [scalingGroup('blue', 'worker')],
        nodeImages: [worker(V1)],
        approvals: [approval('old', 'worker', V1, 'start')],
      }),
    ),
    head: ok(state(V1)),
    check: (r) => assert.deepEqual(sentences(r), ['Approval old: removed', 'ScalingGroup green: new']),
  },
  {
    name: 'no change: nothing listed, no findings',
    base: ok(state(V1)),
    head: ok(state(V1)),
    live: cluster(),
    check: (r) => {
      assert.deepEqual(r.changes, []);
      assert.equal(prHasFindings(r), false);
    },
  },
  {
    name: 'an invalid head: its errors, no comparison, findings',
    base: ok(state(V1)),
    head: invalid([
      {
        file: 'images/worker.yaml',
        line: 7,
        column: 3,
        code: 'schema',
        message: 'spec.image must be a string',
        hint: 'write the image reference',
      },
    ]),
    check: (r) => {
      assert.deepEqual(
        r.errors.map((e) => `${e.file}:${e.line}`),
        ['images/worker.yaml:7'],
      );
      assert.deepEqual(r.changes, []);
      assert.equal(prHasFindings(r), true);
    },
  },
  {
    name: 'an invalid base: every head spec is new',
    base: invalid([{ file: 'x.yaml', line: 1, column: 1, code: 'yaml-syntax', message: 'bad', hint: 'fix' }]),
    head: ok(state(V1)),
    check: (r) => {
      assert.equal(r.baseInvalid, true);
      assert.deepEqual(
        r.changes.map((c) => c.change),
        ['added', 'added', 'added'],
      );
    },
  },
];

describe('plan --base --head: what a pull request changes', () => {
  for (const c of cases)
    it(c.name, () =>
      c.check(report(c.base, c.head, c.live, c.observedNodes ? { observedNodes: c.observedNodes } : undefined)),
    );
});
