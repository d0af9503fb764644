/**
 * YAML text → documents that remember where every node came from. Multi-document files are
 * split, each document is converted to plain data under bounds (nesting depth, alias
 * expansion, number of documents), and any instance path can be mapped back to line:column.
 */
import {
  Composer,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import { specError, type CodedSpecError } from './errors.js';
import type { SourcePosition } from './model.js';
import { checkDocument, codePoint, type WalkResult } from './yaml-checks.js';

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

/**
 * Deepest bracket nesting of flow collections, found without parsing: the YAML parser recurses
 * per level, so a file of a million '[' must be refused before it is handed over. Quotes and
 * comments are skipped; a line that starts a new block entry at column 0 resets the count
 * (flow content must be indented), so stray brackets in block scalars do not add up.
 */
function flowDepthExceeds(text: string, max: number): number | undefined {
  // Most files hold few flow collections, many none: no bracket, nothing to count.
  if (!text.includes('[') && !text.includes('{')) return undefined;
  let depth = 0;
  let quote: '"' | "'" | undefined;
  let lineStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      lineStart = true;
      continue;
    }
    if (lineStart) {
      lineStart = false;
      if (
        quote === undefined &&
        c !== ' ' &&
        c !== '\t' &&
        c !== '[' &&
        c !== '{' &&
        c !== ']' &&
        c !== '}' &&
        c !== ',' &&
        c !== '#'
      ) {
        depth = 0;
      }
    }
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '#' && (i === 0 || text[i - 1] === ' ' || text[i - 1] === '\t' || text[i - 1] === '\n')) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl - 1;
      continue;
    }
    if ((c === '"' || c === "'") && depth > 0) quote = c;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth > max) return i;
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
  return undefined;
}

function nodeStart(node: { range?: readonly number[] | null } | null | undefined): number | undefined {
  return node?.range?.[0];
}

function position(file: string, lc: LineCounter, offset: number | undefined): SourcePosition {
  if (offset === undefined) return { file, line: 1, column: 1 };
  const { line, col } = lc.linePos(offset);
  return { file, line, column: col };
}

/** Depth of plain data, iteratively; alias expansion can make data deeper than its source. */
function dataDepthExceeds(value: unknown, max: number): boolean {
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 1 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push({ v: child, d: d + 1 });
  }
  return false;
}

/**
 * Maps paths to positions in time linear in the path's length: each mapping's keys are indexed
 * by the structure walk (which needs them for duplicate keys anyway), and aliases resolve
 * through the walk's table. (Searching
 * a mapping per lookup made a file of many errors quadratic: one error per key of a large mapping.)
 */
function locator(doc: Document, file: string, lc: LineCounter, checked: WalkResult): ParsedDocument['locate'] {
  const { aliases, keys } = checked;
  const pairOf = (map: YAMLMap, key: string): Pair | undefined => keys.get(map)?.get(key);
  return (path, key = false) => {
    let node: unknown = doc.contents;
    let offset = nodeStart(node as Node);
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isAlias(node)) node = aliases.get(node);
      let next: unknown;
      let keyOffset: number | undefined;
      if (isMap(node)) {
        const pair = pairOf(node, String(seg));
        if (pair) {
          next = pair.value;
          keyOffset = nodeStart(pair.key as Node);
        }
      } else if (isSeq(node) && (typeof seg === 'number' || /^\d+$/.test(seg ?? ''))) {
        next = node.items[Number(seg)];
      }
      if (next === undefined && keyOffset === undefined) break;
      const last = i === path.length - 1;
      offset = last && key && keyOffset !== undefined ? keyOffset : (nodeStart(next as Node) ?? keyOffset ?? offset);
      node = next;
    }
    return position(file, lc, offset);
  };
}

/**
 * Characters YAML 1.2 does not allow in a stream (c-printable): C0 controls other than tab and
 * line breaks, DEL, C1 controls other than NEL, and U+FFFE/U+FFFF. Refused before parsing so
 * that no value, message or log line drydock writes later can carry a terminal escape.
 */
// eslint-disable-next-line no-control-regex -- the characters YAML 1.2 forbids in a stream: this finds them
const NON_PRINTABLE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]/;

function nonPrintable(file: string, text: string): CodedSpecError | undefined {
  const m = NON_PRINTABLE.exec(text);
  if (!m) return undefined;
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < m.index; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return specError(
    'control-character',
    { file, line, column: m.index - lineStart + 1 },
    `file holds the control character ${codePoint(m[0])}, which YAML does not allow`,
    'remove it; if the value needs it, drydock does not accept it either',
  );
}

function syntaxErrors(doc: Document, file: string, lc: LineCounter): CodedSpecError[] {
  const errors: CodedSpecError[] = [];
  for (const e of doc.errors) {
    const exhausted = e.code === 'RESOURCE_EXHAUSTION';
    errors.push(
      specError(
        exhausted ? 'too-deep' : 'yaml-syntax',
        position(file, lc, e.pos[0]),
        exhausted
          ? 'document is nested too deeply to parse'
          : `YAML syntax: ${e.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '')}`,
        exhausted
          ? 'flatten the document'
          : 'fix the YAML syntax; indentation must use spaces, and every flow collection must be closed',
      ),
    );
    if (exhausted) break;
  }
  const version = doc.directives?.yaml;
  if (errors.length === 0 && version?.explicit === true && version.version !== '1.2') {
    // A %YAML 1.1 directive switches to 1.1's schema, where yes/no/on/off are booleans and 0777 is octal.
    errors.push(
      specError(
        'yaml-syntax',
        position(file, lc, 0),
        `%YAML ${version.version} is not supported`,
        'remove the %YAML directive; drydock reads YAML 1.2',
      ),
    );
  }
  return errors;
}

/** One composed document → plain data and a locator, or the findings that refuse it. */
function toParsed(
  doc: Document,
  text: string,
  index: number,
  file: string,
  lc: LineCounter,
  limits: ParseLimits,
): ParsedDocument | CodedSpecError[] | undefined {
  const syntax = syntaxErrors(doc, file, lc);
  if (syntax.length > 0) return syntax;
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return undefined; // empty document
  const start = position(file, lc, nodeStart(doc.contents));
  const checked = checkDocument(doc, text, (offset) => position(file, lc, offset), limits.maxDepth);
  if (checked.errors.length > 0) return checked.errors;
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (err) {
    if (err instanceof ReferenceError) {
      // Undefined aliases were refused above, so this is the expansion limit.
      let first: number | undefined;
      for (const a of checked.aliases.keys()) first = Math.min(first ?? Infinity, nodeStart(a) ?? Infinity);
      return [
        specError(
          'alias-limit',
          position(file, lc, first),
          `aliases expand to more than ${limits.maxAliasCount} nodes`,
          'write the values out instead of nesting aliases',
        ),
      ];
    }
    return [specError('yaml-syntax', start, 'document cannot be converted to data', 'simplify the document')];
  }
  // Without aliases the data is exactly as deep as the source, which the walk has bounded.
  if (checked.aliases.size > 0 && dataDepthExceeds(value, limits.maxDepth)) {
    return [
      specError(
        'too-deep',
        start,
        `nesting (after expanding aliases) is deeper than ${limits.maxDepth} levels`,
        'write the values out instead of nesting aliases',
      ),
    ];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [
      specError(
        'not-an-object',
        start,
        `document is a ${Array.isArray(value) ? 'list' : 'scalar'}, not a mapping`,
        'each YAML document must be one object with apiVersion, kind, metadata and spec; separate documents with ---',
      ),
    ];
  }
  return {
    file,
    index,
    value: value as Record<string, unknown>,
    start,
    locate: locator(doc, file, lc, checked),
  };
}

export function parseSpecText(file: string, raw: string, limits: ParseLimits): ParsedFile {
  // YAML 1.2 counts CR and CRLF as line breaks; the parser only splits on LF, so a file saved
  // with CR-only endings would be one long line. Normalised first, positions stay the user's.
  const text = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  const control = nonPrintable(file, text);
  if (control) return { documents: [], errors: [control] };
  const lc = new LineCounter();
  const deep = flowDepthExceeds(text, limits.maxDepth);
  if (deep !== undefined) {
    lc.addNewLine(0);
    for (let i = 0; i < deep; i++) if (text[i] === '\n') lc.addNewLine(i + 1);
    return {
      documents: [],
      errors: [
        specError(
          'too-deep',
          position(file, lc, deep),
          `nesting is deeper than ${limits.maxDepth} levels`,
          'flatten the document; no drydock spec needs this depth',
        ),
      ],
    };
  }
  const documents: ParsedDocument[] = [];
  const errors: CodedSpecError[] = [];
  const parser = new Parser(lc.addNewLine);
  // resolveKnownTags off: !!binary, !!set, !!timestamp, ... stay unresolved, and are refused as unknown tags.
  const composer = new Composer({
    uniqueKeys: false,
    strict: true,
    prettyErrors: false,
    version: '1.2',
    resolveKnownTags: false,
  });
  let index = -1;
  for (const doc of composer.compose(parser.parse(text))) {
    index++;
    if (index >= limits.maxDocuments) {
      errors.push(
        specError(
          'too-many-documents',
          position(file, lc, nodeStart(doc.contents)),
          `file has more than ${limits.maxDocuments} YAML documents`,
          'split it into several files',
        ),
      );
      break;
    }
    const parsed = toParsed(doc, text, index, file, lc, limits);
    if (Array.isArray(parsed)) errors.push(...parsed);
    else if (parsed !== undefined) documents.push(parsed);
  }
  return { documents, errors };
}
