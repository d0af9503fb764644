import { strict as assert } from 'node:assert';
import { createPoller, durationToCron, parseDuration } from '../../src/source/index.js';

describe('poll interval → cron expression', () => {
  const good: Array<[string, string]> = [
    ['1s', '* * * * * *'],
    ['30s', '*/30 * * * * *'],
    ['15', '*/15 * * * * *'],
    ['1m', '0 * * * * *'],
    ['60s', '0 * * * * *'],
    ['5m', '0 */5 * * * *'],
    ['1h', '0 0 * * * *'],
    ['6h', '0 0 */6 * * *'],
    ['24h', '0 0 0 * * *'],
  ];
  for (const [text, cron] of good) it(`${text} → ${cron}`, () => assert.equal(durationToCron(text), cron));

  const bad: Array<[string, RegExp]> = [
    ['90s', /does not divide a minute evenly; use one of 1m, 2m/],
    ['7s', /does not divide a minute evenly; use one of 1s, 2s, 3s, 4s, 5s, 6s, 10s/],
    ['7m', /does not divide an hour evenly/],
    ['5h', /does not divide a day evenly/],
    ['0s', /is not a duration/],
    ['soon', /is not a duration/],
    ['1d', /is not a duration/],
  ];
  for (const [text, message] of bad) {
    it(`${text} is refused`, () => assert.throws(() => durationToCron(text), { code: 'invalid-option', message }));
  }

  it('parses durations to seconds', () => {
    assert.deepEqual(['45s', '2m', '1h', '10'].map(parseDuration), [45, 120, 3600, 10]);
  });

  it('ticks on the schedule and stops', async function () {
    this.timeout(5000);
    let ticks = 0;
    const poller = createPoller({ interval: '1s', tick: () => void (ticks += 1) });
    assert.equal(poller.expression, '* * * * * *');
    await new Promise((r) => setTimeout(r, 2300));
    await poller.stop();
    const seen = ticks;
    assert.ok(seen >= 1 && seen <= 3, `ticks: ${seen}`);
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(ticks, seen);
  });
});
