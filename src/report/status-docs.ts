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
import { plural } from '../words.js';
import type { MaintenanceReport, SpecRef, SpecStatus } from '../plan/types.js';
import { wantedApprovalFile, type ApprovalFile } from './approval-file.js';
import { cell } from './markdown.js';
import { nodeFileNames, renderNodeFiles, renderRows } from './status-nodes.js';
import type { StatusDocs, StatusReport } from './types.js';

const SETTLED: ReadonlySet<string> = new Set(['Complete', 'Succeeded', 'Ended']);

const short = (sha: string | undefined): string => shortCommit(sha, 'none');

const nameOf = (s: SpecStatus): string => `${s.spec.kind}/${s.spec.name}`;

function byKindName(a: SpecStatus, b: SpecStatus): number {
  if (a.spec.kind !== b.spec.kind) return a.spec.kind < b.spec.kind ? -1 : 1;
  return a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0;
}

/** A Markdown table cell: one line, pipes escaped. */

/** A file name for a spec name: path separators and dot-segments cannot escape status/<Kind>/. */
export function safeName(name: string): string {
  const s = name.replace(/[/\\\0]/g, '_');
  return s === '' || s === '.' || s === '..' ? `_${s}` : s;
}

export function specDocPath(spec: SpecRef): string {
  return `status/${safeName(spec.kind)}/${safeName(spec.name)}.yaml`;
}

/** Whose last render of node rows a spec's render may reuse (status-nodes.ts): one per cluster and spec. */
function rowsKey(report: StatusReport, spec: SpecRef): string {
  return `${report.cluster}\0${specDocPath(spec)}`;
}

/** Where a spec's node files go when its rows are too many for its own file. */
function specNodesDir(spec: SpecRef): string {
  return `status/${safeName(spec.kind)}/${safeName(spec.name)}`;
}

/** One line for the commit message: the most interesting spec, or the refusal. */
export function summarize(report: StatusReport): string {
  const specs = [...report.specs].sort(byKindName);
  const parts: string[] = [];
  if (report.errors && report.errors.length > 0) {
    parts.push(`commit ${short(report.newestCommit)} refused (${plural(report.errors.length, 'error')})`);
  }
  // A spec this build does not act on never changes: it is no news, and no headline.
  const acted = specs.filter((s) => s.phase !== 'NotSupported');
  // A drained maintenance holds its node until its file leaves Git: settled, like an ended one.
  const active = acted.filter((s) => !SETTLED.has(s.phase));
  const first = active[0];
  if (first) {
    parts.push(
      `${nameOf(first)} ${first.progress.done}/${first.progress.total} ${first.phase.toLowerCase()}${active.length > 1 ? ` (+${active.length - 1} more)` : ''}`,
    );
  } else if (parts.length === 0) {
    parts.push(
      specs.length === 0
        ? 'no specs'
        : acted.length === 0
          ? 'no spec acted on'
          : `${plural(acted.length, 'spec')} complete`,
    );
  }
  return parts.join('; ');
}

/**
 * What only a person can move, one line each, most urgent first: a refused commit, halted
 * rollouts (the wait says how to resume), approvals waited for (with the command that writes
 * the file), failed nodes.
 */
export function needsAPerson(report: StatusReport): string[] {
  const specs = [...report.specs].sort(byKindName);
  const out: string[] = [];
  if (report.errors && report.errors.length > 0)
    out.push(
      `Commit \`${short(report.newestCommit)}\` was refused (${plural(report.errors.length, 'error')}, below): fix ${report.errors.length === 1 ? 'it' : 'them'} in a new commit; until then \`${short(report.sourceCommit)}\` stays in force.`,
    );
  for (const s of specs) {
    const name = `**${cell(nameOf(s))}**`;
    const wanted = s.approvalWanted;
    if (s.phase === 'Halted')
      out.push(`${name} is halted: ${cell(s.waitingFor ?? s.lastError ?? 'see its status file')}`);
    else if (wanted !== undefined)
      out.push(
        `${name} waits for an approval: ${cell(s.waitingFor ?? '')}; \`drydock approve ${nameOf(s)} --stage ${wanted.stage}\` writes the file.` +
          fileToMerge(wantedApprovalFile(wanted)),
      );
  }
  for (const s of specs) {
    for (const n of s.nodes)
      if (n.phase === 'Failed')
        out.push(
          `Node \`${n.node}\` failed (${cell(nameOf(s))})${n.message ? `: ${cell(n.message)}` : ''}; look at it, then remove its drydock.dev/ annotations to retry.`,
        );
  }
  return out;
}

/**
 * The exact approval file, as a list item's continuation: its path, then its content in a
 * fenced block indented under the item (Markdown keeps it inside the item that way).
 */
function fileToMerge(file: ApprovalFile): string {
  const fence = file.content.includes('```') ? '~~~~' : '```';
  const body = file.content.replace(/\n$/, '').split('\n');
  return [
    `\n\n  Merge \`${file.path}\` with exactly this content:\n`,
    `  ${fence}yaml`,
    ...body.map((l) => `  ${l}`),
    `  ${fence}`,
  ].join('\n');
}

/** A wait's gist for a one-line message: its words up to the first colon or semicolon. */
function gist(waitingFor: string): string {
  return (waitingFor.split(/[:;]/)[0] ?? waitingFor).trim();
}

/** What a NodeImage's progress counts: nodes replaced, or updated in place (and rebooted). */
function progressWord(s: SpecStatus): string {
  if (s.spec.kind !== 'NodeImage') return '';
  return s.strategy === 'inPlace' ? ' updated' : ' replaced';
}

/** What changed in one spec between two reports, in a few words; undefined when nothing did. */
function specChange(s: SpecStatus, was: SpecStatus | undefined): string | undefined {
  const name = nameOf(s);
  // First seen already settled (a maintenance reported once its file is gone): its phase is the news, "new" would contradict it.
  if (was === undefined)
    return SETTLED.has(s.phase) ? `${name} ${s.phase.toLowerCase()}` : `${name} new (${s.phase.toLowerCase()})`;
  const parts: string[] = [];
  const moved = s.progress.done !== was.progress.done || s.progress.total !== was.progress.total;
  if (moved) parts.push(`${s.progress.done}/${s.progress.total}${progressWord(s)}`);
  if (s.phase !== was.phase) parts.push(s.phase.toLowerCase());
  if (s.waitingFor !== was.waitingFor) {
    if (s.waitingFor !== undefined) parts.push(`waiting: ${gist(s.waitingFor)}`);
    else if (was.waitingFor !== undefined) parts.push(`${gist(was.waitingFor)} ended`);
  }
  return parts.length === 0 ? undefined : `${name} ${parts.join(', ')}`;
}

/**
 * The status commit's subject: what changed since the previous report ("NodeImage/worker 6/12
 * replaced; ..."), or, with none to compare with (the first write after a start), summarize().
 */
export function summarizeChange(report: StatusReport, previous: StatusReport | undefined, maxLength = 150): string {
  if (previous === undefined) return summarize(report);
  const before = new Map(previous.specs.map((s) => [nameOf(s), s] as const));
  const now = new Set(report.specs.map(nameOf));
  const parts: string[] = [];
  if (report.newestCommit !== previous.newestCommit && report.errors && report.errors.length > 0)
    parts.push(summarize({ ...report, specs: [] }));
  if (report.sourceCommit !== previous.sourceCommit) parts.push(`applied ${short(report.sourceCommit)}`);
  for (const s of [...report.specs].sort(byKindName)) {
    if (s.phase === 'NotSupported') continue;
    const change = specChange(s, before.get(nameOf(s)));
    if (change !== undefined) parts.push(change);
  }
  for (const [k, s] of before) if (!now.has(k) && s.phase !== 'NotSupported') parts.push(`${k} removed`);
  if (parts.length === 0) return summarize(report);
  let line = parts[0] ?? '';
  let shown = 1;
  while (shown < parts.length && `${line}; ${parts[shown]}`.length <= maxLength) line = `${line}; ${parts[shown++]}`;
  return shown < parts.length ? `${line} (+${parts.length - shown} more)` : line;
}

/**
 * The README's ETA: to the minute in UTC (the report has no clock to say "in 12 min"); a dash
 * when a person must act first, nothing when no node is left.
 */
function etaCell(s: SpecStatus): string {
  if (s.eta !== undefined) return `${s.eta.slice(0, 16).replace('T', ' ')} UTC`;
  return s.progress.done < s.progress.total && (s.phase === 'Halted' || s.approvalWanted !== undefined) ? '—' : '';
}

export function renderReadme(report: StatusReport): string {
  const lines: string[] = [`# drydock status: ${report.cluster}`, ''];
  const attention = needsAPerson(report);
  lines.push(attention.length === 0 ? 'Nothing needs a person now.' : '## Needs a person', '');
  if (attention.length > 0) lines.push(...attention.map((a) => `- ${a}`), '');
  lines.push(
    `Source commit in force: ${report.sourceCommit ? `\`${report.sourceCommit}\`` : 'none yet (no valid commit)'}`,
  );
  if (report.newestCommit && report.newestCommit !== report.sourceCommit) {
    lines.push(
      '',
      `Newest commit \`${report.newestCommit}\` is not applied${report.errors && report.errors.length > 0 ? ': see errors.yaml' : ''}.`,
    );
  }
  lines.push('', '| Spec | Phase | Progress | ETA | Waiting for | Source |', '| --- | --- | --- | --- | --- | --- |');
  for (const s of [...report.specs].sort(byKindName)) {
    const link = `[${cell(nameOf(s))}](${encodeURI(specDocPath(s.spec))})`;
    const waiting = s.waitingFor ?? (s.lastError ? `error: ${s.lastError}` : '');
    lines.push(
      `| ${link} | ${cell(s.phase)} | ${s.progress.done}/${s.progress.total} | ${etaCell(s)} | ${cell(waiting)} | ${short(report.sourceCommit)} |`,
    );
  }
  if (report.specs.length === 0) lines.push('| (no specs) | | | | | |');
  if (report.budget !== undefined && report.budget.length > 0) {
    lines.push('', '## Cluster budget', '');
    for (const b of report.budget) lines.push(`- ${cell(b)}`);
  }
  if (report.errors && report.errors.length > 0) {
    lines.push('', `## Errors in ${short(report.newestCommit)}`, '');
    for (const e of report.errors)
      lines.push(`- \`${e.file}:${e.line}:${e.column}\`: ${cell(e.message)} (${cell(e.hint)})`);
  }
  if (report.notes && report.notes.length > 0) {
    lines.push('', '## Notes', '');
    for (const n of report.notes) lines.push(`- ${cell(n)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A NodeMaintenance's status in medik8s' field shapes, so tooling that reads a medik8s
 * NodeMaintenance status reads this file too: `pendingPods` are pod names, the pod count is
 * `totalpods`, and `errorOnLeaseCount` is 0 (drydock takes the node by its lock, not a lease).
 * drydock's detail sits beside them: the node, the reason, each pending pod's namespace and
 * what holds it (`pendingPodDetails`), and when the maintenance ended.
 */
function maintenanceFields(m: MaintenanceReport): Record<string, unknown> {
  return {
    drainProgress: m.drainProgress,
    ...(m.lastUpdate !== undefined ? { lastUpdate: m.lastUpdate } : {}),
    pendingPods: m.pendingPods.map((p) => p.pod.slice(p.pod.indexOf('/') + 1)),
    totalpods: m.totalPods,
    evictionPods: m.evictionPods,
    errorOnLeaseCount: 0,
    nodeName: m.nodeName,
    reason: m.reason,
    pendingPodDetails: m.pendingPods,
    ...(m.endedAt !== undefined ? { endedAt: m.endedAt } : {}),
  };
}

/**
 * One spec's file: its SpecStatus laid out for a person, fields in a fixed order (status-read.ts
 * reads it back into the same SpecStatus); the approval file it waits for is written out whole,
 * ready to merge.
 */
export function renderSpecDoc(report: StatusReport, spec: SpecStatus): string {
  const head: Record<string, unknown> = {
    kind: spec.spec.kind,
    name: spec.spec.name,
    revision: spec.revision,
    sourceCommit: report.sourceCommit ?? null,
    phase: spec.phase,
    progress: spec.progress,
    ...(spec.strategy !== undefined ? { strategy: spec.strategy } : {}),
    ...(spec.resolvedImage !== undefined ? { resolvedImage: spec.resolvedImage } : {}),
    ...(spec.verification !== undefined ? { verification: spec.verification } : {}),
    ...(spec.eta !== undefined ? { eta: spec.eta } : {}),
    ...(spec.waitingFor !== undefined ? { waitingFor: spec.waitingFor } : {}),
    ...(spec.paused !== undefined ? { paused: spec.paused } : {}),
    // Read back by a restarted drydock: the halt outlasts the breach, and the process.
    ...(spec.metricHalt !== undefined ? { metricHalt: spec.metricHalt } : {}),
    // The wait's file as a reader decides from it (stage, path, target), then as a person merges it.
    ...(spec.approvalWanted !== undefined
      ? { approvalWanted: spec.approvalWanted, approvalFile: wantedApprovalFile(spec.approvalWanted) }
      : {}),
    ...(spec.lastError !== undefined ? { lastError: spec.lastError } : {}),
    counts: {
      failures: spec.failures,
      ...(spec.failureBudget !== undefined ? { failureBudget: spec.failureBudget } : {}),
    },
    ...(spec.maintenance !== undefined ? maintenanceFields(spec.maintenance) : {}),
    conditions: spec.conditions,
  };
  const tail: Record<string, unknown> = {
    ...(spec.approvals !== undefined && spec.approvals.length > 0 ? { approvals: spec.approvals } : {}),
    ...(spec.pending.length > 0 ? { extra: { pending: spec.pending } } : {}),
  };
  const options = { lineWidth: 0, sortMapEntries: false };
  // Many rows live in node files beside this one (status-nodes.ts); this file names them.
  const files = nodeFileNames(spec.nodes.length);
  return (
    stringify(head, options) +
    (files.length > 0 ? stringify({ nodeFiles: files }, options) : renderRows(rowsKey(report, spec.spec), spec.nodes)) +
    (Object.keys(tail).length > 0 ? stringify(tail, options) : '')
  );
}

export function renderErrors(report: StatusReport): string | undefined {
  if (!report.errors || report.errors.length === 0) return undefined;
  return stringify(
    {
      commit: report.newestCommit ?? null,
      inForce: report.sourceCommit ?? null,
      errors: report.errors.map((e) => ({
        file: e.file,
        line: e.line,
        column: e.column,
        code: e.code,
        message: e.message,
        hint: e.hint,
      })),
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
  for (const spec of report.specs) {
    docs.set(specDocPath(spec.spec), renderSpecDoc(report, spec));
    const dir = specNodesDir(spec.spec);
    for (const [name, text] of renderNodeFiles(rowsKey(report, spec.spec), spec.nodes))
      docs.set(`${dir}/${name}`, text);
  }
  return docs;
}
