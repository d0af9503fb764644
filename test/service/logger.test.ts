import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/service/logger.js';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('service logger', () => {
  it('writes a fixed message with structured fields, as JSON', () => {
    const out = capture();
    createLogger('info', out.stream).info({ node: 'w-1', action: 'cordon' }, 'action applied');
    const rec = JSON.parse(out.text()) as Record<string, unknown>;
    assert.equal(rec.msg, 'action applied');
    assert.equal(rec.node, 'w-1');
    assert.equal(rec.app, 'drydock');
  });

  const secrets: [string, Record<string, unknown>][] = [
    ['token', { token: 'S1-token' }],
    ['password', { password: 'S2-password' }],
    ['a nested secret', { git: { secret: 'S3-secret' } }],
    ['a nested password', { credentials: { password: 'S4-password' } }],
    ['an Authorization header', { headers: { authorization: 'Bearer S5-bearer' } }],
    ["a request's Authorization header", { req: { headers: { authorization: 'Basic S6-basic' } } }],
    ['a webhook token header', { req: { headers: { 'x-gitlab-token': 'S7-gitlab' } } }],
    ['a webhook secret', { source: { webhookSecret: 'S8-hook' } }],
  ];
  for (const [name, fields] of secrets) {
    it(`redacts ${name}`, () => {
      const out = capture();
      createLogger('info', out.stream).info(fields, 'something happened');
      assert.ok(!/S\d-/.test(out.text()), out.text());
      assert.ok(out.text().includes('[redacted]'));
    });
  }
});
