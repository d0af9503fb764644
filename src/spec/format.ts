/**
 * SpecError → text people and tools read: compiler-style lines (editors and CI link them),
 * JSON, and GitHub Actions workflow annotations. The status branch's errors.yaml reuses these.
 */
import type { SpecError } from './model.js';

export type ErrorFormat = 'text' | 'json' | 'github';

export interface FormatOptions {
  /** Prefix for file paths, e.g. the directory validated, so paths resolve from the caller's cwd. */
  readonly root?: string;
  /** 'warning' for findings that do not make a commit invalid, 'notice' for news (default 'error'). */
  readonly severity?: 'error' | 'warning' | 'notice';
}

function filePath(e: SpecError, opts: FormatOptions): string {
  if (opts.root === undefined || opts.root === '' || opts.root === '.') return e.file;
  return `${opts.root.replace(/\/+$/, '')}/${e.file}`;
}

/** `path:line:column: error: message` and an indented `hint: …` line. */
export function formatErrorText(e: SpecError, opts: FormatOptions = {}): string {
  const head = `${filePath(e, opts)}:${e.line}:${e.column}: ${opts.severity ?? 'error'}: ${e.message} [${e.code}]`;
  return e.hint ? `${head}\n  hint: ${e.hint}` : head;
}

export function formatErrorsText(errors: readonly SpecError[], opts: FormatOptions = {}): string {
  return errors.map((e) => formatErrorText(e, opts)).join('\n');
}

/** One object per error, paths prefixed like the text format. */
export function errorsToJson(errors: readonly SpecError[], opts: FormatOptions = {}): SpecError[] {
  return errors.map((e) => ({
    file: filePath(e, opts),
    line: e.line,
    column: e.column,
    code: e.code,
    message: e.message,
    hint: e.hint,
  }));
}

// GitHub's workflow-command escaping: data escapes % CR LF; property values also : and ,.
function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `::error file=…,line=…,col=…,title=…::message` (hint on a second line of the message). */
export function formatErrorGithub(e: SpecError, opts: FormatOptions = {}): string {
  const props = `file=${escapeProperty(filePath(e, opts))},line=${e.line},col=${e.column},title=${escapeProperty(`drydock: ${e.code}`)}`;
  return `::${opts.severity ?? 'error'} ${props}::${escapeData(e.hint ? `${e.message}\nhint: ${e.hint}` : e.message)}`;
}

export function formatErrorsGithub(errors: readonly SpecError[], opts: FormatOptions = {}): string {
  return errors.map((e) => formatErrorGithub(e, opts)).join('\n');
}
