/**
 * The status branch's spec files read back: what status-docs.ts wrote from a SpecStatus comes
 * back as that SpecStatus (with the report's source commit), and a file that is not one says
 * which field is wrong.
 */
import { strict as assert } from 'node:assert';
import { plan } from '../../src/plan/index.js';
import type { SpecStatus } from '../../src/plan/types.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { readSpecStatus, readSpecStatuses } from '../../src/report/status-read.js';
import type { StatusReport } from '../../src/report/types.js';
import { buildStatus } from '../../src/service/status.js';
import { reportFromSnapshot } from '../../src/service/source-adapter.js';
import { bottlerocketRecordKey } from '../../src/protocol/keys.js';
import { at, cloudGroup, desired, node, nodeImage, observed, scalingGroup, workers } from '../plan/fixtures.js';
import { V1, V2 } from '../plan/helpers.js';
import { specStatus } from '../support/spec-status.js';

const SHA = 'abcdef0123456789abcdef0123456789abcdef01';

/** Every spec of the report as read back from its files, in the report's order. */
function roundTrip(report: StatusReport): unknown[] {
  const read = readSpecStatuses(renderStatusDocs(report));
  return report.specs.map((s) => {
    const r = [...read.values()].find(
      (x) => x.ok && x.status.spec.name === s.spec.name && x.status.spec.kind === s.spec.kind,
    );
    return r?.ok === true ? r.status : r;
  });
}

const full: SpecStatus = specStatus('NodeImage', 'worker', {
  revision: 'rev-7',
  phase: 'Waiting',
  progress: { done: 1, total: 3 },
  strategy: 'inPlace',
  resolvedImage: '1.21.0',
  verification: 'verified by the OS: after its reboot each node must report osImage /^Bottlerocket OS 1\\.21\\.0( |$)/',
  failures: 1,
  failureBudget: '1 of 2 failures allowed: the rollout halts at the 2nd failed node',
  paused: 'paused by Alice <alice@example.com> since commit abcdef0 (spec.paused, 2026-03-02T09:00:00.000Z)',
  metricHalt: {
    breach: 'alert NodeDown firing since 2026-03-02T09:58:00.000Z',
    since: '2026-03-02T09:58:00.000Z',
    resumeSeen: SHA,
  },
  conditions: [{ type: 'Progressing', status: 'False', reason: 'Approval', message: 'waits: for a file' }],
  nodes: [
    {
      node: 'w-0',
      phase: 'Done',
      since: '2026-03-02T10:00:00.000Z',
      image: 'os:v2',
      job: 'kube-system/j0',
      attempts: 1,
    },
    { node: 'w-1', phase: 'Failed', lastError: 'exit 1', jobMessage: 'disk full', message: 'job failed:\n  exit 1' },
    { node: 'w-2', phase: 'Outdated', instance: 'i-2', eta: '2026-03-02T11:00:00.000Z' },
  ],
  pending: [
    { groupId: 'g', instanceId: 'i-9', providerID: 'sim://i-9', goal: 'Join', deadline: '2026-03-02T10:30:00.000Z' },
  ],
  waitingFor: 'approval needed (after the canary wave): merge approvals/worker-after-canary.yaml',
  lastError: 'w-1: exit 1',
  approvals: [
    {
      stage: 'start',
      name: 'worker-start',
      file: 'approvals/worker-start.yaml',
      approvedBy: { name: 'Ada', email: 'ada@example.org', commit: SHA, at: '2026-03-01T09:00:00.000Z' },
    },
  ],
  approvalWanted: {
    stage: 'afterCanary',
    path: 'approvals/worker-after-canary.yaml',
    target: { kind: 'NodeImage', name: 'worker', revision: 'rev-7', image: 'os:v2' },
  },
});

const maintenance: SpecStatus = specStatus('NodeMaintenance', 'node-7', {
  phase: 'Running',
  progress: { done: 2, total: 3 },
  maintenance: {
    nodeName: 'node-7',
    reason: 'disk swap',
    totalPods: 5,
    evictionPods: 3,
    pendingPods: [
      { pod: 'default/web-1', pdb: 'default/web' },
      { pod: 'default/solo', blockedBy: 'no controller' },
    ],
    drainProgress: 66,
    lastUpdate: '2026-03-02T10:00:00.000Z',
  },
});

describe('status files read back', () => {
  it('every field of a SpecStatus comes back as written, with the source commit', () => {
    const report: StatusReport = { cluster: 'c', sourceCommit: SHA, specs: [full, maintenance] };
    assert.deepEqual(roundTrip(report), [
      { ...full, sourceCommit: SHA },
      { ...maintenance, sourceCommit: SHA },
    ]);
  });

  it('rows kept in node files come back under the spec', () => {
    const nodes = Array.from({ length: 250 }, (_, i) => ({
      node: `n-${String(i).padStart(3, '0')}`,
      phase: 'Outdated' as const,
    }));
    const big = specStatus('NodeImage', 'big', { progress: { done: 0, total: 250 }, nodes });
    assert.deepEqual(roundTrip({ cluster: 'c', specs: [big] }), [big]);
  });

  it("the planner's status, through the service's report, comes back as the report holds it", () => {
    const w = workers(2, V1);
    const world = observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
    const want = desired({
      scalingGroups: [scalingGroup('workers', 'workers')],
      nodeImages: [nodeImage('workers', V2, { approval: { required: 'start' } })],
    });
    const report = reportFromSnapshot(
      buildStatus({ cluster: 'prod', sourceCommit: SHA, plan: plan(want, world, at(0)) }),
      'fleet',
    );
    const image = report.specs.find((s) => s.spec.kind === 'NodeImage');
    assert.equal(
      image?.approvalWanted?.path,
      'fleet/approvals/workers-start.yaml',
      'a wait for an approval is covered',
    );
    assert.deepEqual(
      roundTrip(report),
      report.specs.map((s) => ({ ...s, sourceCommit: SHA })),
    );
  });

  it("a Bottlerocket NodeImage's file names the version latest resolved to and how its nodes are verified", () => {
    const image = {
      ...nodeImage('br', 'latest', { concurrency: 2 }, 'b1'),
      strategy: 'inPlace' as const,
      inPlace: { updater: 'bottlerocket' as const },
    };
    const on = (name: string, version: string, annotations: Record<string, string> = {}) => ({
      ...node(name, `sim://g/${name}`, { annotations, readySince: -3600 }),
      bootID: `boot-${name}`,
      osImage: `Bottlerocket OS ${version} (aws-k8s-1.30)`,
    });
    // The first node's Job found 1.21.0 and recorded it; the second node is still on 1.19.2.
    const nodes = [on('w-0', '1.21.0', { [bottlerocketRecordKey('br')]: 'b1 1.21.0' }), on('w-1', '1.19.2')];
    const report = reportFromSnapshot(
      buildStatus({
        cluster: 'prod',
        sourceCommit: SHA,
        plan: plan(desired({ nodeImages: [image] }), observed({ nodes }), at(0), { jobNamespace: 'drydock-system' }),
      }),
      'fleet',
    );
    const [back] = roundTrip(report) as SpecStatus[];
    assert.equal(back?.resolvedImage, '1.21.0');
    assert.match(back?.verification ?? '', /^verified by the OS: .*Bottlerocket OS 1\\\.21\\\.0/);
    assert.deepEqual(
      roundTrip(report),
      report.specs.map((s) => ({ ...s, sourceCommit: SHA })),
    );
  });

  const broken: Array<[string, string, string]> = [
    ['a phase the plan does not have', 'phase: Waiting', 'phase: Rolling'],
    ['a node row without its node', '  - node: w-0\n', '  - nod: w-0\n'],
    ['a strategy the plan does not have', 'strategy: inPlace', 'strategy: surge'],
    [
      'an approval wait for a kind that takes none',
      '    kind: NodeImage\n    name: worker\n    revision',
      '    kind: ScalingGroup\n    name: worker\n    revision',
    ],
  ];
  for (const [name, from, to] of broken) {
    it(`says which field is wrong: ${name}`, () => {
      const docs = new Map(renderStatusDocs({ cluster: 'c', specs: [full] }));
      const file = 'status/NodeImage/worker.yaml';
      const text = docs.get(file) ?? '';
      assert.ok(text.includes(from), `${from} in\n${text}`);
      docs.set(file, text.replace(from, to));
      const read = readSpecStatus(docs, file);
      assert.equal(read?.ok, false);
      assert.ok(read !== undefined && !read.ok);
      assert.match(read.why, /^(phase|nodes\[0\]\.node|strategy|approvalWanted\.target\.kind) is /);
    });
  }

  it('a file that is not there is undefined, not an error', () => {
    assert.equal(readSpecStatus(new Map(), 'status/NodeImage/x.yaml'), undefined);
  });
});
