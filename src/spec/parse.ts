/**
 * YAML text → documents that remember where every node came from. Multi-document files are
 * split, each document is converted to plain data under bounds (nesting depth, alias
 * expansion, number of documents), and any instance path can be mapped back to line:column.
 */
import { Composer, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, Parser, type Document, type Node } from 'yaml';
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

/**
 * Deepest bracket nesting of flow collections, found without parsing: the YAML parser recurses
 * per level, so a file of a million '[' must be refused before it is handed over. Quotes and
 * comments are skipped; a line that starts a new block entry at column 0 resets the count
 * (flow content must be indented), so stray brackets in block scalars do not add up.
 */
function flowDepthExceeds(text: string, max: number): number | undefined {
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
      if (quote === undefined && c !== ' ' && c !== '\t' && c !== '[' && c !== '{' && c !== ']' && c !== '}' && c !== ',' && c !== '#') {
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

/**
 * Walks the document's nodes without recursion: rejects nesting deeper than maxDepth and
 * duplicate keys (checked here with a Set rather than by yaml's uniqueKeys, whose pairwise
 * comparison is quadratic in the size of a mapping).
 */
function checkStructure(doc: Document, file: string, lc: LineCounter, maxDepth: number): CodedSpecError[] {
  const errors: CodedSpecError[] = [];
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth > maxDepth) {
      errors.push(
        specError('too-deep', position(file, lc, nodeStart(node)), `nesting is deeper than ${maxDepth} levels`, 'flatten the document; no drydock spec needs this depth'),
      );
      return errors;
    }
    if (isMap(node)) {
      const seen = new Map<string, number | undefined>();
      for (const pair of node.items) {
        const key = pair.key;
        if (!isScalar(key)) {
          errors.push(specError('yaml-syntax', position(file, lc, nodeStart(key as Node)), 'mapping keys must be plain scalars', 'write the key as a plain string'));
          continue;
        }
        const name = String(key.value);
        if (seen.has(name)) {
          const first = position(file, lc, seen.get(name));
          errors.push(
            specError('duplicate-key', position(file, lc, nodeStart(key)), `duplicate key ${JSON.stringify(name)}`, `remove one of the two; the first is at line ${first.line}, column ${first.column}`),
          );
        } else {
          seen.set(name, nodeStart(key));
        }
        stack.push({ node: pair.value, depth: depth + 1 });
      }
    } else {
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
    }
  }
  return errors;
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

function firstAlias(doc: Document): number | undefined {
  const stack: unknown[] = [doc.contents];
  let first: number | undefined;
  while (stack.length > 0) {
    const node = stack.pop();
    const at = isAlias(node) ? nodeStart(node) : undefined;
    if (at !== undefined && (first === undefined || at < first)) first = at;
    if (isMap(node)) for (const p of node.items) stack.push(p.value, p.key);
    else if (isSeq(node)) stack.push(...node.items);
  }
  return first;
}

function locator(doc: Document, file: string, lc: LineCounter): ParsedDocument['locate'] {
  return (path, key = false) => {
    let node: unknown = doc.contents;
    let offset = nodeStart(node as Node);
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isAlias(node)) node = node.resolve(doc);
      let next: unknown;
      let keyOffset: number | undefined;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (pair) {
          next = pair.value;
          keyOffset = nodeStart(pair.key as Node);
        }
      } else if (isSeq(node) && typeof seg === 'number') {
        next = node.items[seg];
      } else if (isSeq(node) && typeof seg === 'string' && /^\d+$/.test(seg)) {
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

export function parseSpecText(file: string, text: string, limits: ParseLimits): ParsedFile {
  const lc = new LineCounter();
  const deep = flowDepthExceeds(text, limits.maxDepth);
  if (deep !== undefined) {
    lc.addNewLine(0);
    for (let i = 0; i < deep; i++) if (text[i] === '\n') lc.addNewLine(i + 1);
    return {
      documents: [],
      errors: [specError('too-deep', position(file, lc, deep), `nesting is deeper than ${limits.maxDepth} levels`, 'flatten the document; no drydock spec needs this depth')],
    };
  }
  const documents: ParsedDocument[] = [];
  const errors: CodedSpecError[] = [];
  const parser = new Parser(lc.addNewLine);
  const composer = new Composer({ uniqueKeys: false, strict: true, prettyErrors: false, version: '1.2' });
  let index = -1;
  for (const doc of composer.compose(parser.parse(text))) {
    index++;
    if (index >= limits.maxDocuments) {
      errors.push(
        specError('too-many-documents', position(file, lc, nodeStart(doc.contents as Node)), `file has more than ${limits.maxDocuments} YAML documents`, 'split it into several files'),
      );
      break;
    }
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const exhausted = e.code === 'RESOURCE_EXHAUSTION';
        errors.push(
          specError(
            exhausted ? 'too-deep' : 'yaml-syntax',
            position(file, lc, e.pos[0]),
            exhausted ? 'document is nested too deeply to parse' : `YAML syntax: ${e.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '')}`,
            exhausted ? 'flatten the document' : 'fix the YAML syntax; indentation must use spaces, and every flow collection must be closed',
          ),
        );
        if (exhausted) break;
      }
      continue;
    }
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue; // empty document
    const start = position(file, lc, nodeStart(doc.contents));
    const structural = checkStructure(doc, file, lc, limits.maxDepth);
    if (structural.length > 0) {
      errors.push(...structural);
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
    } catch (err) {
      if (err instanceof ReferenceError) {
        errors.push(
          specError('alias-limit', position(file, lc, firstAlias(doc)), `aliases expand to more than ${limits.maxAliasCount} nodes`, 'write the values out instead of nesting aliases'),
        );
        continue;
      }
      errors.push(specError('yaml-syntax', start, 'document cannot be converted to data', 'simplify the document'));
      continue;
    }
    if (dataDepthExceeds(value, limits.maxDepth)) {
      errors.push(specError('too-deep', start, `nesting (after expanding aliases) is deeper than ${limits.maxDepth} levels`, 'write the values out instead of nesting aliases'));
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      errors.push(
        specError('not-an-object', start, `document is a ${Array.isArray(value) ? 'list' : 'scalar'}, not a mapping`, 'each YAML document must be one object with apiVersion, kind, metadata and spec; separate documents with ---'),
      );
      continue;
    }
    documents.push({ file, index, value: value as Record<string, unknown>, start, locate: locator(doc, file, lc) });
  }
  return { documents, errors };
}
