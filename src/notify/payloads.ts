/**
 * The message bodies, one shape per receiver type. Built from the event and the status branch's
 * commit only: no receiver address or key is ever an input, so none can end up in a message.
 *
 * Teams: the Workflows webhook's message with an Adaptive Card attachment. Microsoft retired
 * the Office 365 connectors that took the legacy MessageCard, and a Workflows webhook is what a
 * Teams channel offers now; the Adaptive Card is the payload it documents.
 */
import type { NotifyEvent } from './events.js';

/** Where the status that shows the event is recorded. */
export interface StatusLink {
  readonly branch?: string;
  readonly commit?: string;
  /** The commit's web address (drydock.yaml's notifications.commitUrl). */
  readonly url?: string;
}

export function statusLink(
  commitUrl: string | undefined,
  branch: string | undefined,
  commit: string | undefined,
): StatusLink {
  return {
    ...(branch !== undefined ? { branch } : {}),
    ...(commit !== undefined ? { commit } : {}),
    ...(commitUrl !== undefined && commit !== undefined ? { url: commitUrl.split('{commit}').join(commit) } : {}),
  };
}

/** The link in words: the web address, else the commit id and branch. */
function linkText(link: StatusLink): string {
  if (link.url !== undefined) return link.url;
  if (link.commit !== undefined) return `status commit ${link.commit}${link.branch ? ` on ${link.branch}` : ''}`;
  return 'no status commit yet';
}

function heading(e: NotifyEvent): string {
  return `[${e.cluster}] ${e.summary}`;
}

export function slackPayload(e: NotifyEvent, link: StatusLink): Record<string, unknown> {
  const lines = [`*${heading(e)}*`, ...(e.detail ? [e.detail] : []), `revision ${e.revision}`];
  const status = link.url !== undefined ? `<${link.url}|status>` : linkText(link);
  return {
    text: `${heading(e)} (${linkText(link)})`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: status }] },
    ],
  };
}

export function teamsPayload(e: NotifyEvent, link: StatusLink): Record<string, unknown> {
  const facts = [
    { title: 'Spec', value: `${e.spec.kind}/${e.spec.name}` },
    { title: 'Revision', value: e.revision },
    ...(e.node !== undefined ? [{ title: 'Node', value: e.node }] : []),
    { title: 'Status', value: linkText(link) },
  ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: heading(e), weight: 'Bolder', wrap: true },
            ...(e.detail ? [{ type: 'TextBlock', text: e.detail, wrap: true }] : []),
            { type: 'FactSet', facts },
          ],
          ...(link.url !== undefined ? { actions: [{ type: 'Action.OpenUrl', title: 'Status', url: link.url }] } : {}),
        },
      },
    ],
  };
}

/** The generic webhook's body: the event as data (docs/guides/notifications.md). */
export function webhookPayload(e: NotifyEvent, link: StatusLink): Record<string, unknown> {
  return {
    apiVersion: 'drydock.dev/v1alpha1',
    kind: 'NotificationEvent',
    id: e.id,
    event: e.type,
    cluster: e.cluster,
    spec: e.spec,
    revision: e.revision,
    ...(e.node !== undefined ? { node: e.node } : {}),
    summary: e.summary,
    ...(e.detail !== undefined ? { detail: e.detail } : {}),
    ...(e.sourceCommit !== undefined ? { sourceCommit: e.sourceCommit } : {}),
    status: link,
  };
}

export function payloadFor(
  type: 'slack' | 'teams' | 'webhook',
  e: NotifyEvent,
  link: StatusLink,
): Record<string, unknown> {
  if (type === 'slack') return slackPayload(e, link);
  if (type === 'teams') return teamsPayload(e, link);
  return webhookPayload(e, link);
}
