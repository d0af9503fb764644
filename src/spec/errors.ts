/**
 * The loader's findings and failures. Findings (invalid specs) are plain SpecError records
 * collected in full and returned; failures of the source itself (the directory does not exist)
 * are thrown as SpecSourceError. Callers decide by `code`, never by message text.
 */
import type { SourcePosition, SpecError } from './model.js';
import { CodedError } from '../errors.js';

/** Stable codes of SpecError findings. */
export type SpecErrorCode =
  /** A limit on files, entries, directory depth or total size was hit. */
  | 'source-limit'
  /** A file or directory could not be read. */
  | 'read-failed'
  | 'file-too-large'
  | 'binary-file'
  | 'not-utf8'
  /** A symlink where a spec file would be; drydock never follows symlinks. */
  | 'symlink'
  | 'yaml-syntax'
  | 'duplicate-key'
  /** A tag outside YAML 1.2's core schema (!Ref, !!python/object, !!binary, ...). */
  | 'unknown-tag'
  /** An alias whose anchor is not defined before it. */
  | 'undefined-alias'
  /** A control character (ESC, DEL, ...) in the text or, through an escape, in a value. */
  | 'control-character'
  /** Too many alias expansions (a "billion laughs" document). */
  | 'alias-limit'
  /** Nesting deeper than the limit. */
  | 'too-deep'
  | 'too-many-documents'
  /** A document that is not a mapping. */
  | 'not-an-object'
  /** A document without apiVersion or kind. */
  | 'missing-kind'
  | 'unknown-kind'
  /** A kind drydock understands but does not read from Git (e.g. PendingNode). */
  | 'refused-kind'
  | 'schema'
  /** A value that passes the schema but is not valid: a duration, cron, time zone, percentage, ... */
  | 'invalid-value'
  | 'invalid-group-id'
  | 'ambiguous-provider'
  | 'duplicate-name'
  | 'duplicate-group'
  | 'duplicate-maintenance'
  | 'dangling-reference'
  /** A setting in drydock.yaml that cannot be honoured (a path that does not exist, ...). */
  | 'config'
  /** Warning: a path drydock.yaml lists that a commit emptied (Git keeps no empty folders). */
  | 'path-emptied'
  | 'too-many-errors';

export interface CodedSpecError extends SpecError {
  readonly code: SpecErrorCode;
}

export function specError(code: SpecErrorCode, at: SourcePosition, message: string, hint: string): CodedSpecError {
  return { file: at.file, line: at.line, column: at.column, message, hint, code };
}

/** The start of a file, for findings about a file as a whole. */
export function fileStart(file: string): SourcePosition {
  return { file, line: 1, column: 1 };
}

export type SpecSourceErrorCode = 'NotFound' | 'NotADirectory' | 'ReadFailed';

/** The spec source itself failed: the directory or commit tree cannot be read at all. */
export class SpecSourceError extends CodedError<SpecSourceErrorCode, { readonly path: string }> {
  override readonly name = 'SpecSourceError';
}

/** Orders findings by file, line, column, then code, so output is stable. */
export function compareErrors(a: SpecError, b: SpecError): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  if (a.line !== b.line) return a.line - b.line;
  if (a.column !== b.column) return a.column - b.column;
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}
