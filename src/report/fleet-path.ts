/**
 * A pull request in a fleet repository: for each shared spec it changes, the stages the change
 * will move through and the earliest each can start (plan/fleet.ts stagePath), as text or as
 * Markdown for the pull request's comment.
 */
import type { StagePass } from '../plan/fleet.js';
import type { SpecRef } from '../plan/types.js';
import type { DesiredState, Spec } from '../spec/model.js';

export interface FleetChangePath {
  readonly spec: SpecRef;
  readonly revision: string;
  readonly stages: readonly StagePass[];
}

/** A spec file of a cluster's own folder: its changes are that cluster's alone. */
const OWN_FILE = /^clusters\/[^/]+\//;

/** The ordered kinds a head changes against its base, in files every cluster shares. */
export function sharedChanges(base: DesiredState | undefined, head: DesiredState): Spec[] {
  const ordered = (d: DesiredState): Spec[] => [
    ...d.nodeImages,
    ...d.nodeOps.filter((o) => o.generatedBy === undefined),
    ...d.nodeOpUpgrades,
  ];
  const before = new Map((base ? ordered(base) : []).map((s) => [`${s.kind}/${s.name}`, s.revision]));
  return ordered(head).filter((s) => !OWN_FILE.test(s.source.file) && before.get(`${s.kind}/${s.name}`) !== s.revision);
}

const when = (ms: number, from: number): string =>
  ms === from ? 'at the merge' : `no earlier than ${new Date(ms).toISOString()}`;

function stageLine(p: StagePass, from: number): string {
  const soak = p.soakMs > 0 ? `; then soaks ${Math.round(p.soakMs / 60_000)}m` : '';
  const approval = p.approvalPath !== undefined ? `; then waits for ${p.approvalPath}` : '';
  return `${p.stage} (${p.clusters.join(', ')}): starts ${when(p.earliest, from)}${soak}${approval}`;
}

/** The section, or '' when the pull request changes no shared spec. */
export function renderFleetPaths(paths: readonly FleetChangePath[], from: number, format: 'text' | 'markdown'): string {
  if (paths.length === 0) return '';
  const out: string[] = [format === 'markdown' ? '\n### Fleet stages\n' : '\nFleet stages:'];
  for (const c of paths) {
    const what = `${c.spec.kind}/${c.spec.name} revision ${c.revision}`;
    out.push(format === 'markdown' ? `**${what}** moves through ${c.stages.length} stage(s):\n` : `  ${what}:`);
    c.stages.forEach((p, i) =>
      out.push(format === 'markdown' ? `${i + 1}. ${stageLine(p, from)}` : `    ${i + 1}. ${stageLine(p, from)}`),
    );
    if (format === 'markdown') out.push('');
  }
  return `${out.join('\n')}\n`;
}
