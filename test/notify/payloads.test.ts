/** The message bodies, per receiver type, and the signature a webhook receiver checks. */
import { strict as assert } from 'node:assert';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { payloadFor, statusLink } from '../../src/notify/payloads.js';
import { signBody } from '../../src/notify/delivery.js';
import type { NotifyEvent } from '../../src/notify/events.js';

const EVENT: NotifyEvent = {
  id: '0123456789abcdef01234567',
  type: 'nodeFailed',
  cluster: 'prod',
  spec: { kind: 'NodeImage', name: 'workers' },
  revision: 'rev1',
  node: 'node-3',
  summary: 'NodeImage/workers: node node-3 failed',
  detail: 'drain timed out',
  sourceCommit: 'abc123',
};
const WITH_URL = statusLink('https://git.example/org/fleet/commit/{commit}', 'drydock/status', 'f00d');
const BARE = statusLink(undefined, 'drydock/status', 'f00d');

describe('notifications: payloads', () => {
  it('the link is the web address when configured, else the commit and branch', () => {
    assert.deepEqual(WITH_URL, {
      branch: 'drydock/status',
      commit: 'f00d',
      url: 'https://git.example/org/fleet/commit/f00d',
    });
    assert.deepEqual(BARE, { branch: 'drydock/status', commit: 'f00d' });
  });

  it('Slack: text (the notification fallback) and blocks with the status link', () => {
    assert.deepEqual(payloadFor('slack', EVENT, WITH_URL), {
      text: '[prod] NodeImage/workers: node node-3 failed (https://git.example/org/fleet/commit/f00d)',
      blocks: [
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: '*[prod] NodeImage/workers: node node-3 failed*\ndrain timed out\nrevision rev1',
          },
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: '<https://git.example/org/fleet/commit/f00d|status>' }] },
      ],
    });
    const bare = payloadFor('slack', EVENT, BARE) as { text: string };
    assert.equal(bare.text, '[prod] NodeImage/workers: node node-3 failed (status commit f00d on drydock/status)');
  });

  it('Teams: a Workflows message whose attachment is an Adaptive Card', () => {
    const p = payloadFor('teams', EVENT, WITH_URL) as {
      type: string;
      attachments: { contentType: string; content: Record<string, unknown> }[];
    };
    assert.equal(p.type, 'message');
    assert.equal(p.attachments.length, 1);
    assert.equal(p.attachments[0]?.contentType, 'application/vnd.microsoft.card.adaptive');
    assert.deepEqual(p.attachments[0]?.content, {
      $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
      type: 'AdaptiveCard',
      version: '1.4',
      body: [
        { type: 'TextBlock', text: '[prod] NodeImage/workers: node node-3 failed', weight: 'Bolder', wrap: true },
        { type: 'TextBlock', text: 'drain timed out', wrap: true },
        {
          type: 'FactSet',
          facts: [
            { title: 'Spec', value: 'NodeImage/workers' },
            { title: 'Revision', value: 'rev1' },
            { title: 'Node', value: 'node-3' },
            { title: 'Status', value: 'https://git.example/org/fleet/commit/f00d' },
          ],
        },
      ],
      actions: [{ type: 'Action.OpenUrl', title: 'Status', url: 'https://git.example/org/fleet/commit/f00d' }],
    });
  });

  it('webhook: the event as data', () => {
    assert.deepEqual(payloadFor('webhook', EVENT, BARE), {
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'NotificationEvent',
      id: '0123456789abcdef01234567',
      event: 'nodeFailed',
      cluster: 'prod',
      spec: { kind: 'NodeImage', name: 'workers' },
      revision: 'rev1',
      node: 'node-3',
      summary: 'NodeImage/workers: node node-3 failed',
      detail: 'drain timed out',
      sourceCommit: 'abc123',
      status: { branch: 'drydock/status', commit: 'f00d' },
    });
  });

  it('the signature is HMAC-SHA256 of the exact body, as a receiver recomputes it', () => {
    const body = JSON.stringify(payloadFor('webhook', EVENT, BARE));
    const header = signBody(body, 'k3y-of-the-receiver');
    // The receiver's side, written from the guide, not from the code under test.
    const expected = Buffer.from(
      'sha256=' + createHmac('sha256', 'k3y-of-the-receiver').update(body, 'utf8').digest('hex'),
    );
    assert.ok(timingSafeEqual(Buffer.from(header), expected));
    assert.notEqual(signBody(body + ' ', 'k3y-of-the-receiver'), header, 'a changed body fails');
    assert.notEqual(signBody(body, 'another key'), header, 'another key fails');
  });
});
