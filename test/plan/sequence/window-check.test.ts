/**
 * The sequence tests' own window check (window-check.ts), which judges window breaches without
 * the planner's window code: right at instants worked out by hand around each zone's DST change,
 * and in agreement with the planner's isWindowOpen over the days the mixed runs cover.
 */
import { strict as assert } from 'node:assert';
import { isWindowOpen } from '../../../src/plan/index.js';
import type { MaintenanceWindow } from '../../../src/spec/model.js';
import { STARTS, WINDOWS } from './scenarios.js';
import { windowOpenAt } from './window-check.js';

function named(name: string): MaintenanceWindow {
  const w = WINDOWS.find((x) => x.name === name);
  if (w === undefined) throw new Error(`no window ${name}`);
  return w;
}

/** [window, UTC instant, open?], each worked out from the zone's offset at that instant. */
const BY_HAND: readonly (readonly [string, string, boolean])[] = [
  ['ny-odd-hours', '2026-03-02T10:00:00Z', true], // 05:00 EST
  ['ny-odd-hours', '2026-03-02T10:39:59Z', true],
  ['ny-odd-hours', '2026-03-02T10:40:00Z', false], // 40 minutes long
  ['ny-odd-hours', '2026-03-08T06:00:00Z', true], // 01:00 EST
  ['ny-odd-hours', '2026-03-08T07:00:00Z', true], // 03:00 EDT, the first minute after the change
  ['ny-odd-hours', '2026-03-08T08:00:00Z', false], // 04:00 EDT (03:00 had EST stayed)
  ['ny-odd-hours', '2026-03-08T09:00:00Z', true], // 05:00 EDT
  ['berlin-odd-hours', '2026-03-29T00:00:00Z', true], // 01:00 CET
  ['berlin-odd-hours', '2026-03-29T01:00:00Z', true], // 03:00 CEST
  ['berlin-odd-hours', '2026-03-29T02:00:00Z', false], // 04:00 CEST
  ['berlin-odd-hours', '2026-03-29T03:29:00Z', true], // 05:29 CEST
  ['berlin-odd-hours', '2026-03-29T03:30:00Z', false],
  ['kolkata-halves', '2026-03-02T10:20:00Z', true], // 15:50 IST
  ['kolkata-halves', '2026-03-02T10:35:00Z', false], // 16:05 IST
  ['kolkata-halves', '2026-03-02T10:50:00Z', true], // 16:20 IST
  ['sydney-quarters', '2026-03-02T10:00:00Z', true], // 21:00 AEDT
  ['sydney-quarters', '2026-03-02T10:10:00Z', false], // ten minutes long
];

describe('plan/sequence: the window check the sequence tests judge breaches by', () => {
  for (const [name, instant, open] of BY_HAND)
    it(`${name} is ${open ? 'open' : 'closed'} at ${instant}`, () => {
      assert.equal(windowOpenAt(named(name), Date.parse(instant)), open);
    });

  it("agrees with the planner's isWindowOpen over the mixed runs' days, DST changes included", () => {
    const disagree: string[] = [];
    for (const start of STARTS)
      for (const w of WINDOWS)
        for (let t = Date.parse(start); t < Date.parse(start) + 24 * 3600_000; t += 11 * 60_000)
          if (windowOpenAt(w, t) !== isWindowOpen(w, new Date(t)))
            disagree.push(`${w.name} at ${new Date(t).toISOString()}`);
    assert.deepEqual(disagree, []);
  });
});
