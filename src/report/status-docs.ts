/**
 * Lays a StatusReport out as the status branch's files (DESIGN.md, the status branch):
 *   README.md                    one table: every spec, phase, progress, what it waits for
 *   status/<Kind>/<name>.yaml    everything known about one spec
 *   errors.yaml                  why the newest commit was refused (only while it is)
 * Output depends on the report alone (no clock), so equal reports give equal trees and the
 * writer commits only real changes.
 */
import { stringify } from 'yaml';
import { shortCommit } from '../commit.js';
import { cell } from './markdown.js';
import type { SpecReport, StatusDocs, StatusReport } from './types.js';

const SETTLED: ReadonlySet<string> = new Set(['Complete', 'Succeeded', 'Ended']);

const short = (sha: string | undefined): string => shortCommit(sha, 'none');

function byKindName(a: SpecReport, b: SpecReport): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A Markdown table cell: one line, pipes escaped. */


/** A file name for a spec name: path separators and dot-segments cannot escape status/<Kind>/. */
export function safeName(name: string): string {
  const s = name.replace(/[/\\\0]/g, '_');
  return s === '' || s === '.' || s === '..' ? `_${s}` : s;
}

export function specDocPath(spec: Pick<SpecReport, 'kind' | 'name'>): string {
  return `status/${safeName(spec.kind)}/${safeName(spec.name)}.yaml`;
}

/** One line for the commit message: the most interesting spec, or the refusal. */
export function summarize(report: StatusReport): string {
  const specs = [...report.specs].sort(byKindName);
  const parts: string[] = [];
  if (report.errors && report.errors.length > 0) {
    parts.push(`commit ${short(report.newestCommit)} refused (${report.errors.length} error${report.errors.length === 1 ? '' : 's'})`);
  }
  // A spec this build does not act on never changes: it is no news, and no headline.
  const acted = specs.filter((s) => s.phase !== 'NotSupported');
  // A drained maintenance holds its node until its file leaves Git: settled, like an ended one.
  const active = acted.filter((s) => !SETTLED.has(s.phase));
  const first = active[0];
  if (first) {
    parts.push(`${first.kind}/${first.name} ${first.progress.done}/${first.progress.total} ${first.phase.toLowerCase()}${active.length > 1 ? ` (+${active.length - 1} more)` : ''}`);
  } else if (parts.length === 0) {
    parts.push(specs.length === 0 ? 'no specs' : acted.length === 0 ? 'no spec acted on' : `${acted.length} spec${acted.length === 1 ? '' : 's'} complete`);
  }
  return parts.join('; ');
}

export function renderReadme(report: StatusReport): string {
  const lines: string[] = [`# drydock status: ${report.cluster}`, ''];
  lines.push(`Source commit in force: ${report.sourceCommit ? `\`${report.sourceCommit}\`` : 'none yet (no valid commit)'}`);
  if (report.newestCommit && report.newestCommit !== report.sourceCommit) {
    lines.push('', `Newest commit \`${report.newestCommit}\` is not applied${report.errors && report.errors.length > 0 ? ': see errors.yaml' : ''}.`);
  }
  lines.push('', '| Spec | Phase | Progress | Waiting for | Source |', '| --- | --- | --- | --- | --- |');
  for (const s of [...report.specs].sort(byKindName)) {
    const link = `[${cell(`${s.kind}/${s.name}`)}](${encodeURI(specDocPath(s))})`;
    const waiting = s.waitingFor ?? (s.lastError ? `error: ${s.lastError}` : '');
    lines.push(`| ${link} | ${cell(s.phase)} | ${s.progress.done}/${s.progress.total} | ${cell(waiting)} | ${short(report.sourceCommit)} |`);
  }
  if (report.specs.length === 0) lines.push('| (no specs) | | | | |');
  if (report.errors && report.errors.length > 0) {
    lines.push('', `## Errors in ${short(report.newestCommit)}`, '');
    for (const e of report.errors) lines.push(`- \`${e.file}:${e.line}:${e.column}\`: ${cell(e.message)} (${cell(e.hint)})`);
  }
  if (report.notes && report.notes.length > 0) {
    lines.push('', '## Notes', '');
    for (const n of report.notes) lines.push(`- ${cell(n)}`);
  }
  return `${lines.join('\n')}\n`;
}

export function renderSpecDoc(report: StatusReport, spec: SpecReport): string {
  const doc: Record<string, unknown> = {
    kind: spec.kind,
    name: spec.name,
    ...(spec.revision !== undefined ? { revision: spec.revision } : {}),
    sourceCommit: report.sourceCommit ?? null,
    phase: spec.phase,
    progress: spec.progress,
    ...(spec.waitingFor !== undefined ? { waitingFor: spec.waitingFor } : {}),
    ...(spec.lastError !== undefined ? { lastError: spec.lastError } : {}),
    ...(spec.counts ? { counts: spec.counts } : {}),
    ...(spec.maintenance ?? {}),
    conditions: spec.conditions,
    nodes: [...spec.nodes].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)),
    ...(spec.approvals ? { approvals: spec.approvals } : {}),
    ...(spec.extra ? { extra: spec.extra } : {}),
  };
  return stringify(doc, { lineWidth: 0, sortMapEntries: false });
}

export function renderErrors(report: StatusReport): string | undefined {
  if (!report.errors || report.errors.length === 0) return undefined;
  return stringify(
    {
      commit: report.newestCommit ?? null,
      inForce: report.sourceCommit ?? null,
      errors: report.errors.map((e) => ({ file: e.file, line: e.line, column: e.column, code: e.code, message: e.message, hint: e.hint })),
    },
    { lineWidth: 0 },
  );
}

/** Every file of the status branch for this report. */
export function renderStatusDocs(report: StatusReport): StatusDocs {
  const docs = new Map<string, string>();
  docs.set('README.md', renderReadme(report));
  const errors = renderErrors(report);
  if (errors !== undefined) docs.set('errors.yaml', errors);
  for (const spec of report.specs) docs.set(specDocPath(spec), renderSpecDoc(report, spec));
  return docs;
}
