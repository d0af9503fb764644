/**
 * The full path: YAML text → documents through the `yaml` library (lexer, parser, composer),
 * which reads every construct YAML 1.2 allows and reports each mistake where it is. Each
 * document is converted to plain data under bounds (nesting depth, alias expansion) and any
 * instance path can be mapped back to line:column.
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
import { notAnObject, type ParsedDocument, type ParsedFile, type ParseLimits } from './parsed.js';
import { checkDocument, type WalkResult } from './yaml-checks.js';

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
    return [notAnObject(value, start)];
  }
  return {
    file,
    index,
    value: value as Record<string, unknown>,
    start,
    locate: locator(doc, file, lc, checked),
  };
}

/** Parses text already checked for control characters and flow depth, line breaks normalised to LF. */
export function parseWithYaml(file: string, text: string, limits: ParseLimits): ParsedFile {
  const lc = new LineCounter();
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
