import { strict as assert } from 'node:assert';
import { parseDuration } from '../src/duration.js';

describe('the duration grammar (flags and specs)', () => {
  const table: Array<[string, number | undefined]> = [
    ['30s', 30_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1h2m3s', 3_723_000],
    ['500ms', 500],
    ['1.5s', 1_500],
    ['90', 90_000],
    ['5 m', 300_000],
    [' 2m ', 120_000],
    ['0s', 0],
    ['', undefined],
    ['m', undefined],
    ['30m1h', undefined],
    ['1d', undefined],
    ['-5m', undefined],
    ['ten minutes', undefined],
  ];
  for (const [text, ms] of table)
    it(`${JSON.stringify(text)} → ${String(ms)}`, () => assert.equal(parseDuration(text), ms));

  it('specs always name the unit', () => {
    assert.equal(parseDuration('90', { unitRequired: true }), undefined);
    assert.equal(parseDuration('90s', { unitRequired: true }), 90_000);
  });
});
