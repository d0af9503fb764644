import assert from 'node:assert/strict';
import {
  crashLine,
  crashPoints,
  crashSettings,
  parseCrashAfter,
  parseCrashKinds,
  type CrashSettings,
} from '../../src/execute/crash-point.js';
import { callKind } from '../../src/execute/describe.js';
import type { Action } from '../../src/plan/types.js';
import { ANNOTATIONS, bottlerocketRecordKey } from '../../src/protocol/keys.js';
import { OptionError, parseClockOffset } from '../../src/service/options.js';
import { readCrashLine } from '../e2e/reliability/crash-loop.js';

describe('execute/crash-point: the reliability suite hooks', () => {
  it('kills at exactly the Nth mutating call, naming it, and never without N', () => {
    const kills: string[] = [];
    const point = crashPoints({ after: 3 }, (when, call, kind, what) => kills.push(`${when} ${call} ${kind} ${what}`));
    point.before('cordon', 'cordon a');
    point.done('cordon', 'cordon a');
    point.done('evict', 'evict b');
    assert.deepEqual(kills, []);
    point.done('annotateNode:Pending', 'annotateNode c');
    assert.deepEqual(kills, ['after 3 annotateNode:Pending annotateNode c']);
    const never = crashPoints({}, () => assert.fail('no crash point set'));
    for (let i = 0; i < 100; i++) {
      never.before('cordon', 'cordon a');
      never.done('cordon', 'cordon a');
    }
  });

  /** The calls of a short node sequence, run through crash points with `s`: where each kill lands. */
  function killsOver(s: CrashSettings, calls: readonly string[]): string[] {
    const kills: string[] = [];
    const point = crashPoints(s, (when, call, kind) => kills.push(`${when} ${call} ${kind}`));
    for (const kind of calls) {
      point.before(kind, kind);
      point.done(kind, kind);
    }
    return kills;
  }

  it('kills after (or before) the first call of each kind not yet killed at, and only of the kinds named in only', () => {
    const calls = ['annotateNode:Pending', 'surge', 'annotateNode:Pending', 'copyLabels', 'scaleDeployment:restore'];
    assert.deepEqual(killsOver({ kinds: { after: ['annotateNode:Pending'] } }, calls), [
      'after 2 surge',
      'after 4 copyLabels',
      'after 5 scaleDeployment:restore',
    ]);
    assert.deepEqual(killsOver({ kinds: { before: ['annotateNode:Pending', 'surge'] } }, calls), [
      'before 4 copyLabels',
      'before 5 scaleDeployment:restore',
    ]);
    assert.deepEqual(killsOver({ kinds: { after: [], only: ['copyLabels', 'scaleDeployment'] } }, calls), [
      'after 4 copyLabels',
      'after 5 scaleDeployment:restore',
    ]);
    // A count and kinds together: whichever comes first.
    assert.deepEqual(killsOver({ after: 1, kinds: { after: [], only: ['copyLabels'] } }, calls).slice(0, 1), [
      'after 1 annotateNode:Pending',
    ]);
  });

  it('names each step of a node sequence as its own kind of call', () => {
    const spec = { kind: 'NodeImage', name: 'worker' } as const;
    const base = { spec, reason: 'test' };
    const annotate = (annotations: Record<string, string | null>): Action => ({
      kind: 'annotateNode',
      ...base,
      node: 'n',
      annotations,
    });
    const kinds = [
      annotate({ [ANNOTATIONS.phase]: 'Pending', [ANNOTATIONS.phaseSince]: 't' }),
      annotate({ [ANNOTATIONS.replacedBy]: 'i-2', [ANNOTATIONS.phaseSince]: 't' }),
      annotate({ [ANNOTATIONS.phase]: null, [ANNOTATIONS.operation]: null }),
      { kind: 'scaleDeployment', ...base, namespace: 'kube-system', name: 'ca', replicas: 0, rememberPrevious: 2 },
      { kind: 'scaleDeployment', ...base, namespace: 'kube-system', name: 'ca', replicas: 2 },
      { kind: 'surge', ...base, groupId: 'workers', count: 1 },
      annotate({ [ANNOTATIONS.phase]: 'Rebooting', [bottlerocketRecordKey('br')]: 'b1 1.20.3' }),
      annotate({ [ANNOTATIONS.phase]: 'Rebooting' }),
      {
        kind: 'createRebootPod',
        ...base,
        node: 'n',
        namespace: 'ns',
        bootID: 'b',
        taints: [],
        method: 'bottlerocketApi',
      },
      { kind: 'createRebootPod', ...base, node: 'n', namespace: 'ns', bootID: 'b', taints: [] },
      { kind: 'labelNode', ...base, node: 'n', labels: { 'mutexrule.example/r.ns': '' } },
      { kind: 'labelNode', ...base, node: 'n', labels: { 'mutexrule.example/r.ns': null } },
      { kind: 'patchPool', ...base, pool: 'worker', paused: true },
      { kind: 'patchPool', ...base, pool: 'worker', paused: false },
      { kind: 'patchPool', ...base, pool: 'canary', nodeSelector: {} },
    ].map((a) => callKind(a as Action));
    assert.deepEqual(kinds, [
      'annotateNode:Pending',
      'annotateNode:replaced-by',
      'annotateNode:released',
      'scaleDeployment:pause',
      'scaleDeployment:restore',
      'surge',
      'annotateNode:Rebooting:resolved',
      'annotateNode:Rebooting',
      'createRebootPod:bottlerocketApi',
      'createRebootPod',
      'labelNode:set',
      'labelNode:remove',
      'patchPool:pause',
      'patchPool:unpause',
      'patchPool:nodeSelector',
    ]);
  });

  it('reads the kinds as JSON, and says what is wrong otherwise', () => {
    assert.equal(parseCrashKinds(undefined), undefined);
    assert.deepEqual(parseCrashKinds('{"after":["surge"],"only":["surge"]}'), { after: ['surge'], only: ['surge'] });
    assert.deepEqual(crashSettings({ DRYDOCK_TEST_CRASH_AFTER: '2', DRYDOCK_TEST_CRASH_KINDS: '{"before":[]}' }), {
      after: 2,
      kinds: { before: [] },
    });
    for (const [bad, why] of [
      ['after', 'not JSON'],
      ['[]', 'not an object'],
      ['{"aftr":[]}', 'unknown key "aftr"'],
      ['{"after":"surge"}', '"after" is not a list of kinds'],
    ])
      assert.throws(() => parseCrashKinds(bad), new RegExp(`DRYDOCK_TEST_CRASH_KINDS must be JSON .*\\(${why}\\)`));
  });

  it('reads N as a positive integer, and says what is wrong otherwise', () => {
    assert.equal(parseCrashAfter(undefined), undefined);
    assert.equal(parseCrashAfter(''), undefined);
    assert.equal(parseCrashAfter('7'), 7);
    for (const bad of ['0', '-1', '1.5', 'x', '07']) {
      assert.throws(() => parseCrashAfter(bad), /DRYDOCK_TEST_CRASH_AFTER must be a positive integer.*got "/);
    }
    assert.equal(
      crashLine('after', 4, 'surge', 'surge workers +2'),
      'drydock: crash point after mutating call 4 (surge): surge workers +2\n',
    );
    assert.equal(
      crashLine('before', 5, 'copyLabels', 'copyLabels a -> b'),
      'drydock: crash point before call 5 (copyLabels): copyLabels a -> b\n',
    );
  });

  it('names the calls made beside the one killed after, and the suite reads them back', () => {
    const kills: string[] = [];
    const point = crashPoints({ kinds: { after: [] } }, (when, call, kind, _what, beside) =>
      kills.push(crashLine(when, call, kind, 'a step', beside).trimEnd()),
    );
    point.before('annotateNode:Rebooting', 'a');
    point.before('createRebootPod', 'b');
    point.done('createRebootPod', 'b', ['annotateNode:Rebooting']);
    assert.deepEqual(kills, [
      'drydock: crash point after mutating call 1 (createRebootPod; beside annotateNode:Rebooting): a step',
    ]);
    assert.deepEqual(readCrashLine(kills[0] ?? ''), {
      when: 'after',
      call: 1,
      kind: 'createRebootPod',
      beside: ['annotateNode:Rebooting'],
      what: 'a step',
    });
    assert.deepEqual(readCrashLine(crashLine('before', 5, 'copyLabels', 'copyLabels a -> b').trimEnd()), {
      when: 'before',
      call: 5,
      kind: 'copyLabels',
      beside: [],
      what: 'copyLabels a -> b',
    });
    assert.equal(readCrashLine('drydock: started'), undefined);
  });

  it('reads a signed clock offset, 0 when unset', () => {
    assert.equal(parseClockOffset(undefined), 0);
    assert.equal(parseClockOffset('2h'), 7_200_000);
    assert.equal(parseClockOffset('-30m'), -1_800_000);
    assert.throws(
      () => parseClockOffset('soon'),
      (e: unknown) => e instanceof OptionError && /DRYDOCK_TEST_CLOCK_OFFSET "soon"/.test(e.message),
    );
  });
});
