import { strict as assert } from 'node:assert';
import { checkWindow, formatInZone, isWindowOpen, nextWindowOpening, windowClosing } from '../../src/plan/index.js';
import { maintenanceWindow } from './fixtures.js';

// Weeknights 22:00-02:00 Berlin time. Berlin is UTC+1 until 2026-03-29 02:00, UTC+2 after.
const weeknights = maintenanceWindow('weeknights', 'Europe/Berlin', [
  { cron: '0 22 * * 1-5', durationSeconds: 4 * 3600 },
]);
const d = (s: string): Date => new Date(s);

describe('plan/window', () => {
  describe('isWindowOpen', () => {
    const cases: [string, string, boolean][] = [
      ['Monday 21:59 CET, just before', '2026-03-02T20:59:00Z', false],
      ['Monday 22:00 CET, the opening minute', '2026-03-02T21:00:00Z', true],
      ['Monday 23:30 CET', '2026-03-02T22:30:00Z', true],
      ['Tuesday 01:59 CET, past midnight', '2026-03-03T00:59:00Z', true],
      ['Tuesday 02:00 CET, closed again', '2026-03-03T01:00:00Z', false],
      ['Saturday 23:00 CET, no schedule on weekends', '2026-03-07T22:00:00Z', false],
      ['Saturday 01:00 CET, Friday night window still open', '2026-03-07T00:00:00Z', true],
      ['Monday 22:30 CEST, after the DST change', '2026-03-30T20:30:00Z', true],
      ['Monday 21:30 CEST = 19:30Z, before the opening', '2026-03-30T19:30:00Z', false],
    ];
    for (const [name, instant, open] of cases) {
      it(name, () => assert.equal(isWindowOpen(weeknights, d(instant)), open));
    }
  });

  describe('nextWindowOpening', () => {
    const cases: [string, string, string][] = [
      ['Monday noon → Monday 22:00 CET', '2026-03-02T12:00:00Z', '2026-03-02T21:00:00.000Z'],
      ['already open → now', '2026-03-02T22:15:00Z', '2026-03-02T22:15:00.000Z'],
      ['Saturday noon before DST → Monday 22:00 CEST', '2026-03-28T12:00:00Z', '2026-03-30T20:00:00.000Z'],
      ['Friday noon before DST → Friday 22:00 CET', '2026-03-27T12:00:00Z', '2026-03-27T21:00:00.000Z'],
      ['Saturday noon before the autumn change → Monday 22:00 CET', '2026-10-24T12:00:00Z', '2026-10-26T21:00:00.000Z'],
    ];
    for (const [name, from, expected] of cases) {
      it(name, () => assert.equal(nextWindowOpening(weeknights, d(from))?.toISOString(), expected));
    }
  });

  describe('exclusions', () => {
    const frozen = maintenanceWindow(
      'weeknights',
      'Europe/Berlin',
      [{ cron: '0 22 * * 1-5', durationSeconds: 4 * 3600 }],
      [
        { start: '2026-03-02T20:00:00Z', end: '2026-03-02T22:00:00Z', reason: 'release party' },
        { start: '2026-03-03T00:00:00Z', end: '2026-03-04T06:00:00Z', reason: 'freeze' },
      ],
    );
    it('closes a scheduled window', () => assert.equal(isWindowOpen(frozen, d('2026-03-02T21:30:00Z')), false));
    it('reopens at the end of an exclusion inside the window', () =>
      assert.equal(nextWindowOpening(frozen, d('2026-03-02T21:30:00Z'))?.toISOString(), '2026-03-02T22:00:00.000Z'));
    it('skips a night that is excluded whole', () =>
      assert.equal(nextWindowOpening(frozen, d('2026-03-03T12:00:00Z'))?.toISOString(), '2026-03-04T21:00:00.000Z'));
    it('closes early at an exclusion that starts inside the window', () =>
      assert.equal(windowClosing(frozen, d('2026-03-02T22:30:00Z'))?.toISOString(), '2026-03-03T00:00:00.000Z'));
    it('never opens when every opening is excluded', () => {
      const never = maintenanceWindow(
        'never',
        'UTC',
        [{ cron: '0 0 1 1 *', durationSeconds: 60 }],
        [{ start: '2026-01-01T00:00:00Z', end: '2030-01-01T00:00:00Z', reason: 'forever' }],
      );
      assert.equal(nextWindowOpening(never, d('2026-06-01T00:00:00Z')), undefined);
    });
  });

  describe('windowClosing', () => {
    it('is the end of the scheduled duration', () =>
      assert.equal(windowClosing(weeknights, d('2026-03-02T22:30:00Z'))?.toISOString(), '2026-03-03T01:00:00.000Z'));
    it('is undefined when closed', () => assert.equal(windowClosing(weeknights, d('2026-03-02T12:00:00Z')), undefined));
  });

  describe('checkWindow', () => {
    const cases: [string, Parameters<typeof maintenanceWindow>, RegExp][] = [
      [
        'invalid cron names the schedule',
        ['w', 'UTC', [{ cron: '0 25 * * *', durationSeconds: 60 }]],
        /schedules\[0\] cron "0 25 \* \* \*" is invalid/,
      ],
      [
        'unknown time zone',
        ['w', 'Mars/Olympus', [{ cron: '0 22 * * *', durationSeconds: 60 }]],
        /unknown time zone "Mars\/Olympus"/,
      ],
      [
        'zero duration',
        ['w', 'UTC', [{ cron: '0 22 * * *', durationSeconds: 0 }]],
        /schedules\[0\] durationSeconds must be positive/,
      ],
      [
        'bad exclusion instant',
        ['w', 'UTC', [{ cron: '0 22 * * *', durationSeconds: 60 }], [{ start: 'soon', end: 'later', reason: 'x' }]],
        /exclusions\[0\]/,
      ],
    ];
    for (const [name, args, problem] of cases) {
      it(name, () => {
        const result = checkWindow(maintenanceWindow(...args));
        assert.equal(result.ok, false);
        assert.match(result.ok ? '' : result.problem, problem);
      });
    }
    it('accepts a valid window', () => assert.deepEqual(checkWindow(weeknights), { ok: true }));
  });

  it('formats an instant in the window zone', () => {
    assert.equal(formatInZone(d('2026-03-30T20:00:00Z'), 'Europe/Berlin'), '2026-03-30 22:00');
    assert.equal(formatInZone(d('2026-03-02T21:00:00Z'), 'America/New_York'), '2026-03-02 16:00');
  });
});
