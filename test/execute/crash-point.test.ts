import assert from 'node:assert/strict';
import { crashLine, crashPoint, parseCrashAfter } from '../../src/execute/crash-point.js';
import { OptionError, parseClockOffset } from '../../src/service/options.js';

describe('execute/crash-point: the reliability suite hooks', () => {
  it('kills at exactly the Nth mutating call, naming it, and never without N', () => {
    const kills: string[] = [];
    const point = crashPoint(3, (call, what) => kills.push(`${call} ${what}`));
    point('cordon a');
    point('evict b');
    assert.deepEqual(kills, []);
    point('annotateNode c');
    assert.deepEqual(kills, ['3 annotateNode c']);
    const never = crashPoint(undefined, () => assert.fail('no crash point set'));
    for (let i = 0; i < 100; i++) never('cordon a');
  });

  it('reads N as a positive integer, and says what is wrong otherwise', () => {
    assert.equal(parseCrashAfter(undefined), undefined);
    assert.equal(parseCrashAfter(''), undefined);
    assert.equal(parseCrashAfter('7'), 7);
    for (const bad of ['0', '-1', '1.5', 'x', '07']) {
      assert.throws(() => parseCrashAfter(bad), /DRYDOCK_TEST_CRASH_AFTER must be a positive integer.*got "/);
    }
    assert.equal(crashLine(4, 'surge workers +2'), 'drydock: crash point after mutating call 4: surge workers +2\n');
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
