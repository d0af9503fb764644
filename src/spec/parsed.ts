/**
 * What parsing a spec file yields, whichever parser read it: documents as plain data, each able
 * to map an instance path back to line:column, or the findings that refuse the file.
 */
import { specError, type CodedSpecError } from './errors.js';
import type { SourcePosition } from './model.js';

export interface ParseLimits {
  /** Deepest nesting of mappings and sequences. */
  readonly maxDepth: number;
  readonly maxDocuments: number;
  /** Bound on alias expansion when converting to data (yaml's maxAliasCount). */
  readonly maxAliasCount: number;
}

export type PathSegment = string | number;

export interface ParsedDocument {
  readonly file: string;
  /** 0-based index of the document in its file. */
  readonly index: number;
  /** The document as plain data; always a mapping. */
  readonly value: Readonly<Record<string, unknown>>;
  /** Where the document's content starts. */
  readonly start: SourcePosition;
  /**
   * Where the node at `path` is; with `key`, where its key is (for "unknown field" errors).
   * A path that does not exist maps to its deepest existing ancestor.
   */
  locate(path: readonly PathSegment[], key?: boolean): SourcePosition;
}

export interface ParsedFile {
  readonly documents: readonly ParsedDocument[];
  readonly errors: readonly CodedSpecError[];
}

/** A document whose data is a list or a scalar: every spec is one mapping. */
export function notAnObject(value: unknown, start: SourcePosition): CodedSpecError {
  return specError(
    'not-an-object',
    start,
    `document is a ${Array.isArray(value) ? 'list' : 'scalar'}, not a mapping`,
    'each YAML document must be one object with apiVersion, kind, metadata and spec; separate documents with ---',
  );
}
