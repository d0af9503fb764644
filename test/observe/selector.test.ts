import assert from 'node:assert/strict';
import { matchesSelector, selectorString } from '../../src/observe/selector.js';
import type { LabelSelector } from '../../src/spec/model.js';

describe('matchesSelector', () => {
  const labels = { app: 'web', tier: 'front' };
  const table: { name: string; selector: LabelSelector | undefined; want: boolean }[] = [
    { name: 'absent selector matches nothing', selector: undefined, want: false },
    { name: 'empty selector matches everything', selector: {}, want: true },
    { name: 'matchLabels equal', selector: { matchLabels: { app: 'web' } }, want: true },
    { name: 'matchLabels differ', selector: { matchLabels: { app: 'db' } }, want: false },
    { name: 'matchLabels key missing', selector: { matchLabels: { zone: 'a' } }, want: false },
    {
      name: 'In hit',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] },
      want: true,
    },
    {
      name: 'In miss',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] },
      want: false,
    },
    {
      name: 'In on missing key',
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      want: false,
    },
    {
      name: 'NotIn hit',
      selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] },
      want: false,
    },
    {
      name: 'NotIn on missing key',
      selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] },
      want: true,
    },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, want: true },
    { name: 'Exists missing', selector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, want: false },
    { name: 'DoesNotExist', selector: { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, want: true },
    {
      name: 'DoesNotExist present',
      selector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      want: false,
    },
    {
      name: 'labels and expressions together must all hold',
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] },
      want: false,
    },
  ];
  for (const row of table) {
    it(row.name, () => assert.equal(matchesSelector(row.selector, labels), row.want));
  }
});

describe('selectorString', () => {
  it('writes the API query form, sorted', () => {
    assert.equal(
      selectorString({
        matchLabels: { z: '1', a: '2' },
        matchExpressions: [
          { key: 'k', operator: 'In', values: ['y', 'x'] },
          { key: 'n', operator: 'NotIn', values: ['q'] },
          { key: 'e', operator: 'Exists' },
          { key: 'd', operator: 'DoesNotExist' },
        ],
      }),
      'a=2,z=1,k in (x,y),n notin (q),e,!d',
    );
  });
});
