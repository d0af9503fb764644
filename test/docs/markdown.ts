/** Small Markdown pieces the reference pages share: tables, code spans, cell escaping. */
import { format, resolveConfig } from 'prettier';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: three levels above dist/test/docs/. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A generated page: where it goes, relative to the root, and its text. */
export interface Page {
  readonly file: string;
  readonly text: string;
}

/** The note every generated page opens with, naming its source and how to regenerate it. */
export function generatedNote(source: string): string {
  return `<!-- Generated from ${source} by test/docs/generate.ts: edit the source, then run npm run docs. -->`;
}

/** Text made safe for a table cell: one line, pipes escaped. */
export function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** A code span that holds any text, backticks included. */
export function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => ' --- ').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** Formats a page as `npm run format` would, so the files on disk are stable under prettier. */
export async function formatted(file: string, markdown: string): Promise<Page> {
  const options = (await resolveConfig(path.join(ROOT, file))) ?? {};
  return { file, text: await format(markdown, { ...options, parser: 'markdown' }) };
}

/** Code-point order, independent of the locale. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
