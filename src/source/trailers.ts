/**
 * The status commit's message: `status: <summary> (source <short sha>)` and the trailers that
 * make the status branch the record drydock restarts from (Drydock-Source: the commit in force).
 */

import { shortCommit } from '../commit.js';

/** The branch the status reports are committed to unless told otherwise. */
export const DEFAULT_STATUS_BRANCH = 'drydock/status';

export const SOURCE_TRAILER = 'Drydock-Source';
export const CLUSTER_TRAILER = 'Drydock-Cluster';

export function statusMessage(summary: string, cluster: string, sourceCommit: string | undefined): string {
  const subject = `status: ${summary.replace(/\s+/g, ' ').trim()} (source ${shortCommit(sourceCommit, 'none')})`;
  const trailers = [
    ...(sourceCommit ? [`${SOURCE_TRAILER}: ${sourceCommit}`] : []),
    `${CLUSTER_TRAILER}: ${cluster.replace(/\s+/g, ' ')}`,
  ];
  return `${subject}\n\n${trailers.join('\n')}\n`;
}

/** The trailers of a commit message (the last paragraph's `Key: value` lines). */
export function parseTrailers(message: string): Map<string, string> {
  const out = new Map<string, string>();
  const paragraphs = message.trimEnd().split(/\n\s*\n/);
  const last = paragraphs.length > 1 ? paragraphs[paragraphs.length - 1] : undefined;
  if (last === undefined) return out;
  for (const line of last.split('\n')) {
    const m = /^([A-Za-z][A-Za-z0-9-]*):\s*(.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], m[2].trim());
  }
  return out;
}
