/**
 * A Bottlerocket NodeImage (strategy inPlace, inPlace.updater bottlerocket) as tables: the update
 * Job's termination message decides each node, `latest` is resolved by the first node and pins
 * every later one, and a node is verified by the osImage it reports after its reboot.
 */
import assert from 'node:assert/strict';
import { plan } from '../../../src/plan/index.js';
import type { Action, Plan, SpecStatus } from '../../../src/plan/types.js';
import type { ObservedJob, ObservedNode } from '../../../src/observe/types.js';
import { ANNOTATIONS, bottlerocketRecordKey } from '../../../src/protocol/keys.js';
import type { NodeImage } from '../../../src/spec/model.js';
import { at, desired, iso, node, nodeImage, observed, pod } from '../fixtures.js';
import { nodeSteps } from '../helpers.js';

const NS = 'drydock-system';
const REV = 'b1';
const LOCK = `NodeImage/br@${REV}`;
const jobName = (n: string): string => `nodeimage-br-${n}-${REV}`;
const os = (v: string): string => `Bottlerocket OS ${v} (aws-k8s-1.30)`;

function bottlerocket(image: string, o: { concurrency?: number; stopOnFailure?: boolean } = {}): NodeImage {
  return {
    ...nodeImage('br', image, { concurrency: o.concurrency ?? 3, stopOnFailure: o.stopOnFailure ?? false }, REV),
    strategy: 'inPlace',
    inPlace: { updater: 'bottlerocket' },
  };
}

function n(
  name: string,
  o: { version?: string; osImage?: string; phase?: string; bootID?: string; extra?: Record<string, string> } = {},
): ObservedNode {
  const held: Record<string, string> =
    o.phase === undefined
      ? {}
      : { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: o.phase, [ANNOTATIONS.phaseSince]: iso(-10) };
  const base = node(name, `sim://g/${name}`, { annotations: { ...held, ...o.extra }, readySince: -3600 });
  return { ...base, bootID: o.bootID ?? 'b-1', osImage: o.osImage ?? os(o.version ?? '1.19.2') };
}

function job(node: string, state: 'running' | 'succeeded' | 'failed', message?: string): ObservedJob {
  return {
    namespace: NS,
    name: jobName(node),
    labels: {},
    succeeded: state === 'succeeded',
    failed: state === 'failed',
    attempts: 1,
    ...(message !== undefined ? { message } : {}),
  };
}

function run(
  image: NodeImage,
  nodes: ObservedNode[],
  o: { jobs?: ObservedJob[]; pods?: ReturnType<typeof pod>[] } = {},
): Plan {
  return plan(desired({ nodeImages: [image] }), observed({ nodes, jobs: o.jobs ?? [], pods: o.pods ?? [] }), at(0), {
    jobNamespace: NS,
    rebootTimeoutSeconds: 600,
  });
}

const annotations = (p: Plan, node: string): Record<string, string | null> =>
  p.actions.find((a): a is Extract<Action, { kind: 'annotateNode' }> => a.kind === 'annotateNode' && a.node === node)
    ?.annotations ?? {};
const started = (p: Plan): string[] =>
  p.actions
    .filter(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending',
    )
    .map((a) => a.node);
const updateJobs = (p: Plan): Extract<Action, { kind: 'createBottlerocketUpdateJob' }>[] =>
  p.actions.filter(
    (a): a is Extract<Action, { kind: 'createBottlerocketUpdateJob' }> => a.kind === 'createBottlerocketUpdateJob',
  );
const status = (p: Plan): SpecStatus | undefined => p.specs.find((s) => s.spec.kind === 'NodeImage');

describe('plan: Bottlerocket NodeImage (inPlace, updater bottlerocket)', () => {
  it('pinned: stages the version through the update Job, records the bootID, reboots through the API', () => {
    const image = bottlerocket('v1.20.3');
    assert.deepEqual(started(run(image, [n('w-0'), n('w-1')])), ['w-0', 'w-1']);
    const updating = run(image, [n('w-0', { phase: 'Updating' })]);
    assert.deepEqual(
      updateJobs(updating).map((a) => [a.node, a.version, a.operation.revision]),
      [['w-0', '1.20.3', REV]],
    );
    const staged = run(image, [n('w-0', { phase: 'Updating' })], {
      jobs: [job('w-0', 'succeeded', 'staged 1.20.3 (was 1.19.2)')],
    });
    const rec = annotations(staged, 'w-0');
    assert.equal(rec[ANNOTATIONS.phase], 'Rebooting');
    assert.equal(rec[ANNOTATIONS.bootID], 'b-1');
    assert.equal(rec[ANNOTATIONS.jobMessage], 'staged 1.20.3 (was 1.19.2)');
    assert.equal(rec[bottlerocketRecordKey('br')], undefined, 'a pinned version is not resolved');
    // The reboot pod in the same round, after the phase that records the bootID.
    assert.deepEqual(
      nodeSteps(staged).actions.map((a) => a.kind),
      ['annotateNode', 'createRebootPod'],
    );
    const now = staged.actions[1];
    assert.equal(now?.kind === 'createRebootPod' ? `${now.bootID} ${now.method}` : '', 'b-1 bottlerocketApi');
    // Found Rebooting without its pod (a restart after the phase): the pod comes then.
    const rebooting = n('w-0', { phase: 'Rebooting', extra: { [ANNOTATIONS.bootID]: 'b-1' } });
    const reboot = run(image, [rebooting]).actions.find((a) => a.kind === 'createRebootPod');
    assert.equal(reboot?.kind === 'createRebootPod' ? reboot.method : undefined, 'bottlerocketApi');
    const back = n('w-0', {
      phase: 'Rebooting',
      version: '1.20.3',
      bootID: 'b-2',
      extra: { [ANNOTATIONS.bootID]: 'b-1' },
    });
    const verified = run(image, [back]);
    assert.equal(annotations(verified, 'w-0')[ANNOTATIONS.phase], 'Verifying');
    assert.equal(status(verified)?.resolvedImage, '1.20.3');
    assert.match(status(verified)?.verification ?? '', /Bottlerocket OS 1\\\.20\\\.3/);
  });

  it('latest: only the first node runs unpinned; its version is recorded with its outcome and pins every later node', () => {
    const image = bottlerocket('latest');
    const first = run(image, [n('w-0'), n('w-1'), n('w-2')]);
    assert.deepEqual(started(first), ['w-0']);
    assert.equal(status(first)?.resolvedImage, undefined);
    const resolving = run(image, [n('w-0', { phase: 'Updating' }), n('w-1'), n('w-2')], {
      jobs: [job('w-0', 'running')],
    });
    assert.deepEqual(started(resolving), []);
    assert.ok(resolving.waits.some((w) => w.code === 'concurrency' && /resolves latest/.test(w.reason)));
    const unpinned = run(image, [n('w-0', { phase: 'Updating' })]);
    assert.deepEqual(
      updateJobs(unpinned).map((a) => a.version),
      ['latest'],
    );
    const staged = run(image, [n('w-0', { phase: 'Updating' }), n('w-1'), n('w-2')], {
      jobs: [job('w-0', 'succeeded', 'staged 1.21.0 (was 1.19.2)')],
    });
    const rec = annotations(staged, 'w-0');
    assert.equal(rec[ANNOTATIONS.phase], 'Rebooting');
    assert.equal(rec[bottlerocketRecordKey('br')], `${REV} 1.21.0`);
    // A newer release published since (1.21.1) changes nothing: the later nodes are pinned.
    const resolved = { [ANNOTATIONS.bootID]: 'b-1', [bottlerocketRecordKey('br')]: `${REV} 1.21.0` };
    const later = run(image, [
      n('w-0', { phase: 'Rebooting', extra: resolved }),
      n('w-1', { phase: 'Updating' }),
      n('w-2', { phase: 'Updating' }),
    ]);
    assert.deepEqual(
      updateJobs(later).map((a) => `${a.node} ${a.version}`),
      ['w-1 1.21.0', 'w-2 1.21.0'],
    );
    assert.equal(status(later)?.resolvedImage, '1.21.0');
    const stale = { [bottlerocketRecordKey('br')]: 'older-revision 1.20.0' };
    assert.deepEqual(
      updateJobs(run(image, [n('w-0', { phase: 'Updating', extra: stale })])).map((a) => a.version),
      ['latest'],
      'a version resolved under another revision does not pin this one',
    );
  });

  it('a node whose Job says "already at X" is done without a reboot; a fleet on the target does nothing', () => {
    const current = run(bottlerocket('latest'), [n('w-0', { phase: 'Updating' }), n('w-1')], {
      jobs: [job('w-0', 'succeeded', 'already at 1.19.2')],
    });
    const rec = annotations(current, 'w-0');
    assert.equal(rec[ANNOTATIONS.phase], 'Verifying');
    assert.equal(rec[ANNOTATIONS.bootID], undefined);
    assert.equal(rec[bottlerocketRecordKey('br')], `${REV} 1.19.2`);
    assert.ok(!current.actions.some((a) => a.kind === 'createRebootPod'));
    const fleet = run(bottlerocket('1.20.3'), [n('w-0', { version: '1.20.3' }), n('w-1', { version: '1.20.3' })]);
    assert.deepEqual(fleet.actions, []);
    assert.equal(status(fleet)?.phase, 'Complete');
    const resolvedFleet = run(bottlerocket('latest'), [
      n('w-0', { version: '1.21.0', extra: { [bottlerocketRecordKey('br')]: `${REV} 1.21.0` } }),
      n('w-1', { version: '1.21.0' }),
    ]);
    assert.deepEqual(resolvedFleet.actions, []);
    assert.equal(status(resolvedFleet)?.phase, 'Complete');
  });

  const failures: readonly [string, string][] = [
    ['no update available', 'refresh-updates failed: no update to 1.20.3: chosen_update null (available: 1.19.2)'],
    [
      'not the chosen version',
      'refresh-updates failed: chosen_update 1.21.0 is not the target 1.20.3 (available: 1.21.0)',
    ],
    ['prepare failed', 'prepare-update failed: Failed (exit_status 1): Failed to write image to staging partition'],
    ['activate refused', 'activate-update failed: HTTP 409: Update action not allowed according to update state'],
    ['lock held', 'prepare-update failed: the update lock stayed held for 1200s: HTTP 423: Update lock held'],
  ];
  for (const [what, message] of failures) {
    it(`an API failure (${what}) is a Failed node with the API's own words`, () => {
      const p = run(bottlerocket('1.20.3'), [n('w-0', { phase: 'Updating' })], {
        jobs: [job('w-0', 'failed', message)],
      });
      const rec = annotations(p, 'w-0');
      assert.equal(rec[ANNOTATIONS.phase], 'Failed');
      assert.equal(rec[ANNOTATIONS.jobMessage], message);
      const row = status(p)?.nodes.find((r) => r.node === 'w-0');
      assert.ok(row?.lastError?.endsWith(message), row?.lastError);
      assert.equal(row?.jobMessage, message);
    });
  }

  it('a succeeded Job that staged another version, or says nothing readable, fails the node', () => {
    const other = run(bottlerocket('1.20.3'), [n('w-0', { phase: 'Updating' })], {
      jobs: [job('w-0', 'succeeded', 'staged 1.21.0 (was 1.19.2)')],
    });
    assert.match(
      String(annotations(other, 'w-0')[ANNOTATIONS.reason]),
      /put 1\.21\.0 on the node, not the target 1\.20\.3/,
    );
    const silent = run(bottlerocket('1.20.3'), [n('w-0', { phase: 'Updating' })], { jobs: [job('w-0', 'succeeded')] });
    assert.equal(annotations(silent, 'w-0')[ANNOTATIONS.phase], 'Failed');
  });

  it('a node that came back on the old version is Failed with both versions named, and stopOnFailure halts', () => {
    const image = bottlerocket('1.20.3', { stopOnFailure: true, concurrency: 1 });
    const back = n('w-0', { phase: 'Rebooting', bootID: 'b-2', extra: { [ANNOTATIONS.bootID]: 'b-1' } });
    const p = run(image, [back, n('w-1')], { pods: [pod(NS, 'reboot-w-0-b-1', 'w-0')] });
    const rec = annotations(p, 'w-0');
    assert.equal(rec[ANNOTATIONS.phase], 'Failed');
    assert.match(String(rec[ANNOTATIONS.reason]), /came back on Bottlerocket 1\.19\.2, not the target 1\.20\.3/);
    assert.deepEqual(started(p), []);
    assert.ok(p.waits.some((w) => w.code === 'halted'));
    assert.equal(status(p)?.phase, 'Halted');
  });
});

describe('plan: in-place updates verified by the osImage the node reports', () => {
  const generic = (osImage?: string): NodeImage => ({
    ...nodeImage('edge', 'os:v2', { concurrency: 1, stopOnFailure: true }, 'e1'),
    strategy: 'inPlace',
    ...(osImage !== undefined ? { inPlace: { updater: 'job' as const, osImage } } : {}),
  });
  const back = (osImage: string): ObservedNode => ({
    ...node('w-0', 'sim://g/w-0', {
      annotations: {
        [ANNOTATIONS.operation]: 'NodeImage/edge@e1',
        [ANNOTATIONS.phase]: 'Rebooting',
        [ANNOTATIONS.phaseSince]: iso(-10),
        [ANNOTATIONS.bootID]: 'b-1',
      },
    }),
    bootID: 'b-2',
    osImage,
  });
  const after = (image: NodeImage, osImage: string): Plan =>
    plan(desired({ nodeImages: [image] }), observed({ nodes: [back(osImage)] }), at(0), { jobNamespace: NS });

  it('a pattern: the node is verified when it matches, Failed (and halted) when it does not', () => {
    const image = generic('/^Kairos v2\\./');
    assert.equal(annotations(after(image, 'Kairos v2.1.0'), 'w-0')[ANNOTATIONS.phase], 'Verifying');
    const wrong = after(image, 'Kairos v1.9.0');
    assert.match(
      String(annotations(wrong, 'w-0')[ANNOTATIONS.reason]),
      /reports osImage "Kairos v1\.9\.0", not the expected \/\^Kairos v2\\\.\//,
    );
    assert.equal(status(wrong)?.phase, 'Halted');
  });

  it('an exact osImage, and without one the status says the update is not verified by the OS', () => {
    assert.equal(annotations(after(generic('Kairos v2'), 'Kairos v2'), 'w-0')[ANNOTATIONS.phase], 'Verifying');
    assert.equal(annotations(after(generic('Kairos v2'), 'Kairos v2.1'), 'w-0')[ANNOTATIONS.phase], 'Failed');
    const unverified = after(generic(), 'anything');
    assert.equal(annotations(unverified, 'w-0')[ANNOTATIONS.phase], 'Verifying');
    assert.match(status(unverified)?.verification ?? '', /^not verified by the OS/);
  });
});
