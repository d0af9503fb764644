import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { CloudError } from '../../src/cloud/provider.js';
import { classifyError, DEFAULT_RETRY_AFTER_SECONDS, QUOTA_RETRY_SECONDS } from '../../src/execute/classify.js';

function api(code: number, headers: Record<string, string> = {}, message = 'server says no'): ApiException<string> {
  return new ApiException(code, 'x', JSON.stringify({ kind: 'Status', message }), headers);
}

function sysErr(code: string): Error {
  return Object.assign(new Error(`connect ${code}`), { code });
}

describe('classifyError', () => {
  const table: { name: string; err: unknown; kind: string; code: string; retry?: number }[] = [
    {
      name: 'eviction refused by a PDB (429)',
      err: api(429),
      kind: 'waiting',
      code: 'TooManyRequests',
      retry: DEFAULT_RETRY_AFTER_SECONDS,
    },
    {
      name: '429 with Retry-After',
      err: api(429, { 'retry-after': '12' }),
      kind: 'waiting',
      code: 'TooManyRequests',
      retry: 12,
    },
    { name: 'forbidden', err: api(403), kind: 'stalled', code: 'Forbidden' },
    { name: 'unauthorized', err: api(401), kind: 'stalled', code: 'Unauthorized' },
    { name: 'invalid', err: api(422), kind: 'stalled', code: 'Invalid' },
    { name: 'bad request', err: api(400), kind: 'stalled', code: 'Invalid' },
    { name: 'conflict', err: api(409), kind: 'transient', code: 'Conflict' },
    { name: 'not found', err: api(404), kind: 'transient', code: 'NotFound' },
    { name: 'server error', err: api(500), kind: 'transient', code: 'HTTP500' },
    { name: 'unavailable', err: api(503), kind: 'transient', code: 'HTTP503' },
    {
      name: 'watch error with statusCode',
      err: Object.assign(new Error('Gone'), { statusCode: 410 }),
      kind: 'transient',
      code: 'HTTP410',
    },
    {
      name: 'cloud throttled',
      err: new CloudError('Throttled', 'slow down', { retryAfterSeconds: 7 }),
      kind: 'waiting',
      code: 'CloudThrottled',
      retry: 7,
    },
    {
      name: 'cloud throttled without delay',
      err: new CloudError('Throttled', 'slow down'),
      kind: 'waiting',
      code: 'CloudThrottled',
      retry: DEFAULT_RETRY_AFTER_SECONDS,
    },
    {
      name: 'cloud quota',
      err: new CloudError('QuotaExceeded', 'full'),
      kind: 'waiting',
      code: 'CloudQuotaExceeded',
      retry: QUOTA_RETRY_SECONDS,
    },
    { name: 'cloud transient', err: new CloudError('Transient', 'blip'), kind: 'transient', code: 'CloudTransient' },
    { name: 'cloud not found', err: new CloudError('NotFound', 'no group'), kind: 'stalled', code: 'CloudNotFound' },
    { name: 'cloud permanent', err: new CloudError('Permanent', 'bad image'), kind: 'stalled', code: 'CloudPermanent' },
    { name: 'connection refused', err: sysErr('ECONNREFUSED'), kind: 'transient', code: 'Network' },
    { name: 'connection reset', err: sysErr('ECONNRESET'), kind: 'transient', code: 'Network' },
    { name: 'anything else', err: new Error('boom'), kind: 'transient', code: 'Unknown' },
    { name: 'a thrown string', err: 'boom', kind: 'transient', code: 'Unknown' },
  ];
  for (const row of table) {
    it(`${row.name} → ${row.kind} (${row.code})`, () => {
      const out = classifyError(row.err, 'evict default/web-1');
      assert.equal(out.kind, row.kind);
      assert.equal(out.code, row.code);
      assert.ok(out.reason.startsWith('evict default/web-1: '), out.reason);
      if (row.retry !== undefined) {
        assert.equal(out.kind, 'waiting');
        if (out.kind === 'waiting') assert.equal(out.retryAfterSeconds, row.retry);
      }
    });
  }

  it('uses the API server status message, never headers or request details', () => {
    const out = classifyError(api(403, { authorization: 'Bearer sekret' }, 'nodes "a" is forbidden'), 'cordon a');
    assert.equal(out.reason, 'cordon a: nodes "a" is forbidden');
    assert.ok(!out.reason.includes('sekret'));
  });

  it('decides by status code even when the message says otherwise', () => {
    const out = classifyError(api(500, {}, 'Too Many Requests'), 'evict x');
    assert.equal(out.kind, 'transient');
  });
});
