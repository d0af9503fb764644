/**
 * Lays a PrReport out: plain text for a terminal, one Markdown comment for the pull request
 * (it starts with a fixed marker, so a CI step finds its earlier comment and updates it), and
 * GitHub workflow annotations on the changed files followed by the text. Everything shown is
 * read off the report.
 */
import { shortCommit } from '../commit.js';
import { plural } from '../words.js';
import { formatErrorGithub, formatErrorText } from '../spec/format.js';
import type { SpecError } from '../spec/model.js';
import type { Wait } from '../plan/types.js';
import { BLOCKING_WAITS } from './plan-render.js';
import type { ChangeReport, Impact, PrReport } from './pr-report.js';

export type PrFormat = 'text' | 'markdown' | 'github' | 'json';

/** The first line of every drydock plan comment: CI looks for it to update instead of adding. */
export const PR_COMMENT_MARKER = '<!-- drydock-plan -->';

/** What happens to the nodes: a replace rollout swaps them for new instances; inPlace updates and reboots them. */
function impactWords(i: Impact): string {
  const inPlace = i.strategy === 'inPlace';
  if (i.nodes === 0) return inPlace ? 'no node needs updating' : 'no node needs replacing';
  const waves = i.waves > 0 ? ` in ${plural(i.waves, 'wave')}${i.canaryFirst ? ', canary first' : ''}` : '';
  const eta =
    i.etaMinutes === undefined
      ? '; no ETA while blocked'
      : `; ETA ${i.etaMinutes} min${i.etaAfterApproval ? ' once approved' : ''}${i.pace !== undefined ? ` (${i.pace})` : ''}`;
  // In-place nodes are picked by a node selector, not by cloud groups: no group count to give.
  const what = inPlace
    ? `${plural(i.nodes, 'node')} will be updated in place and rebooted`
    : `${plural(i.nodes, 'node')} in ${plural(i.groups, 'group')} will be replaced`;
  return `${what}${waves}${eta}`;
}

/** "image v1 → v2; 12 nodes in 2 groups will be replaced in 5 waves, canary first; ETA 41 min". */
function changeWords(c: ChangeReport, liveSkipped: boolean): string {
  const what =
    c.change === 'added'
      ? 'new'
      : c.change === 'removed'
        ? 'removed'
        : c.details.length > 0
          ? c.details.join('; ')
          : 'changed';
  const live = c.impact
    ? `; ${impactWords(c.impact)}`
    : c.kind === 'NodeImage' && c.change !== 'removed' && liveSkipped
      ? ' (nodes affected: live part skipped)'
      : '';
  return `${what}${live}`;
}

/** "NodeImage worker: image v1 → v2; 12 nodes in 2 groups will be replaced in 5 waves, canary first; ETA 41 min". */
export function changeSentence(c: ChangeReport, liveSkipped: boolean): string {
  return `${c.kind} ${c.name}: ${changeWords(c, liveSkipped)}`;
}

function isBlocking(w: Wait): boolean {
  return (BLOCKING_WAITS as readonly string[]).includes(w.code);
}

/** Every wait of the changed specs, blocking ones first. */
function waitsOf(r: PrReport): Wait[] {
  const all = r.changes.flatMap((c) => c.impact?.waits ?? []);
  return [...all.filter(isBlocking), ...all.filter((w) => !isBlocking(w))];
}

function waitLine(w: Wait): string {
  return `[${w.code}] ${w.spec.kind}/${w.spec.name}${w.node ? ` ${w.node}` : ''}: ${w.reason}${w.until ? ` (until ${w.until})` : ''}`;
}

function headline(r: PrReport): string {
  return `drydock plan for cluster ${r.cluster}: ${r.head.ref} (${shortCommit(r.head.commit, 'unknown')}) against ${r.base.ref} (${shortCommit(r.base.commit, 'unknown')}) at ${r.at}`;
}

export function renderPrText(r: PrReport): string {
  const out: string[] = [headline(r)];
  if (r.errors.length > 0) {
    out.push('', `The head is invalid (${plural(r.errors.length, 'error')}); nothing of it would be applied:`);
    for (const e of r.errors) out.push(formatErrorText(e));
  }
  if (r.warnings.length > 0) {
    out.push('', `Warnings in the head (${plural(r.warnings.length, 'warning')}; they refuse nothing):`);
    for (const e of r.warnings) out.push(formatErrorText(e, { severity: 'warning' }));
  }
  if (r.baseInvalid) out.push('', `The base ${r.base.ref} does not load: every spec of the head shows as new.`);
  out.push('', 'Changes:');
  if (r.changes.length === 0)
    out.push(r.errors.length > 0 ? '  (not compared: the head is invalid)' : '  none: the specs are the same');
  for (const c of r.changes) out.push(`  ${changeSentence(c, r.liveSkipped !== undefined)}`);
  if (r.approvals.length > 0) {
    out.push('', 'Approvals needed (merge each file to let the rollout go on):');
    for (const a of r.approvals)
      out.push(
        `  ${a.path} (${a.kind}/${a.name}, stage ${a.stage}):`,
        ...a.content
          .trimEnd()
          .split('\n')
          .map((l) => `    ${l}`),
      );
  }
  const waits = waitsOf(r);
  if (waits.length > 0) {
    out.push('', 'Would wait now:');
    for (const w of waits) out.push(`  ${waitLine(w)}`);
  }
  if (r.liveSkipped !== undefined) out.push('', `Live part skipped: ${r.liveSkipped}`);
  return `${out.join('\n')}\n`;
}

function state(r: PrReport): string {
  if (r.errors.length > 0) return '❌ head invalid';
  if (waitsOf(r).some(isBlocking) || r.approvals.length > 0) return '⛔ needs a person';
  if (r.changes.length === 0) return '✅ no spec changes';
  return r.liveSkipped !== undefined ? '📝 specs change (cluster not checked)' : '🔄 ready to roll out';
}

function markdownFindings(title: string, findings: readonly SpecError[]): string[] {
  return [
    '',
    `#### ${title}`,
    '',
    ...findings.map((e) => `- \`${e.file}:${e.line}:${e.column}\`: ${e.message} [${e.code}] — ${e.hint}`),
  ];
}

export function renderPrMarkdown(r: PrReport): string {
  const out: string[] = [PR_COMMENT_MARKER, `### drydock plan — ${state(r)}`, ''];
  out.push(
    `Cluster \`${r.cluster}\`: \`${r.head.ref}\` (\`${shortCommit(r.head.commit, 'unknown')}\`) against \`${r.base.ref}\` (\`${shortCommit(r.base.commit, 'unknown')}\`), planned at ${r.at}.`,
  );
  if (r.errors.length > 0)
    out.push(
      ...markdownFindings('Errors in the head', r.errors),
      '',
      'Nothing of this head would be applied until every error is fixed.',
    );
  if (r.warnings.length > 0) out.push(...markdownFindings('Warnings in the head', r.warnings));
  if (r.baseInvalid) out.push('', `The base \`${r.base.ref}\` does not load: every spec of the head shows as new.`);
  out.push('', '#### What changes', '');
  if (r.changes.length === 0) out.push(r.errors.length > 0 ? 'Not compared: the head is invalid.' : 'No spec changes.');
  for (const c of r.changes)
    out.push(`- **${c.kind}/${c.name}** (\`${c.file}:${c.line}\`): ${changeWords(c, r.liveSkipped !== undefined)}`);
  if (r.approvals.length > 0) {
    out.push('', '#### Approvals needed', '');
    for (const a of r.approvals) {
      out.push(
        `To let **${a.kind}/${a.name}** go on (stage \`${a.stage}\`), merge \`${a.path}\` (\`drydock approve ${a.kind}/${a.name} --stage ${a.stage}\` writes it):`,
        '',
        '```yaml',
        a.content.trimEnd(),
        '```',
        '',
      );
    }
    out.pop();
  }
  const waits = waitsOf(r);
  if (waits.length > 0) {
    out.push('', '#### Would wait now', '');
    for (const w of waits) out.push(`- ${isBlocking(w) ? '⛔' : '⏳'} ${waitLine(w)}`);
  }
  if (r.liveSkipped !== undefined) out.push('', `> Live part skipped: ${r.liveSkipped}`);
  return `${out.join('\n')}\n`;
}

/** Workflow annotations on the changed files, then the text report for the log. */
export function renderPrGithub(r: PrReport, root?: string): string {
  const opts = (severity: 'error' | 'warning' | 'notice') => ({ severity, ...(root !== undefined ? { root } : {}) });
  const lines: string[] = [
    ...r.errors.map((e) => formatErrorGithub(e, opts('error'))),
    ...r.warnings.map((e) => formatErrorGithub(e, opts('warning'))),
  ];
  const at = (file: string, line: number, code: string, message: string, hint = ''): SpecError => ({
    file,
    line,
    column: 1,
    code,
    message,
    hint,
  });
  for (const c of r.changes)
    lines.push(
      formatErrorGithub(at(c.file, c.line, 'plan', changeSentence(c, r.liveSkipped !== undefined)), opts('notice')),
    );
  for (const a of r.approvals)
    lines.push(
      formatErrorGithub(
        at(
          a.path,
          1,
          'approval',
          `${a.kind}/${a.name} needs approval (stage ${a.stage}): merge ${a.path}`,
          `drydock approve ${a.kind}/${a.name} --stage ${a.stage}`,
        ),
        opts('warning'),
      ),
    );
  for (const w of waitsOf(r).filter(isBlocking)) {
    const c = r.changes.find((x) => x.kind === w.spec.kind && x.name === w.spec.name);
    if (c) lines.push(formatErrorGithub(at(c.file, c.line, w.code, waitLine(w)), opts('warning')));
  }
  return `${lines.join('\n')}${lines.length > 0 ? '\n' : ''}${renderPrText(r)}`;
}

/** `root`: the specs directory inside the repository, so annotations land on the right files. */
export function renderPr(r: PrReport, format: PrFormat, root?: string): string {
  switch (format) {
    case 'text':
      return renderPrText(r);
    case 'markdown':
      return renderPrMarkdown(r);
    case 'github':
      return renderPrGithub(r, root);
    case 'json':
      return `${JSON.stringify(r, null, 2)}\n`;
  }
}

/** Exit 1 when the head is invalid or something only a person can end blocks it now. */
export function prHasFindings(r: PrReport): boolean {
  return r.errors.length > 0 || waitsOf(r).some(isBlocking);
}
