/**
 * One walk over a composed YAML document, in document order, for everything that must be
 * refused before the document is turned into data: nesting deeper than the limit, duplicate
 * and non-scalar keys, tags outside YAML 1.2's core schema (`!Ref`, `!!python/object`,
 * `!!binary` would otherwise load as something else or be dropped with a warning), control
 * characters that escapes put into values, and aliases whose anchor is not defined before them.
 * It also records which node each alias stands for, so locating a path through an alias does
 * not search the document again.
 */
import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { specError, type CodedSpecError } from './errors.js';
import type { SourcePosition } from './model.js';

/** Tags of YAML 1.2's core schema: the only ones a spec may name explicitly. */
const CORE_TAGS = new Set([
  'tag:yaml.org,2002:str',
  'tag:yaml.org,2002:int',
  'tag:yaml.org,2002:float',
  'tag:yaml.org,2002:bool',
  'tag:yaml.org,2002:null',
  'tag:yaml.org,2002:map',
  'tag:yaml.org,2002:seq',
]);

/** C0 and C1 controls and DEL; tab and line feed are text. */
// eslint-disable-next-line no-control-regex -- control characters written through escapes are refused: this finds them
export const CONTROL_IN_VALUE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

export interface WalkResult {
  readonly errors: CodedSpecError[];
  /** The node each defined alias stands for. */
  readonly aliases: ReadonlyMap<Alias, Node>;
  /** Each mapping's pairs by key (the first of duplicates), built once here for locating paths later. */
  readonly keys: ReadonlyMap<YAMLMap, ReadonlyMap<string, Pair>>;
}

export type Locate = (offset: number | undefined) => SourcePosition;

export function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function nodeStart(node: unknown): number | undefined {
  return (node as { range?: readonly number[] | null } | null | undefined)?.range?.[0];
}

/**
 * Where the tag of the node starting at `start` is written: the last "!" token before it. The
 * node's own range starts at its content, which for a block mapping is the line after the tag.
 */
function tagStart(text: string, start: number | undefined): number | undefined {
  if (start === undefined) return undefined;
  const before = text.slice(Math.max(0, start - 1024), start);
  const m = /(?:^|[\s,[{:-])(!)[^\s]*[^!]*$/.exec(before);
  return m ? start - before.length + m.index + m[0].indexOf('!') : start;
}

function shortTag(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? `!!${tag.slice('tag:yaml.org,2002:'.length)}` : tag;
}

function checkScalar(node: Node, at: Locate, errors: CodedSpecError[]): void {
  if (!isScalar(node) || typeof node.value !== 'string') return;
  const bad = CONTROL_IN_VALUE.exec(node.value);
  if (bad) {
    errors.push(
      specError(
        'control-character',
        at(nodeStart(node)),
        `value holds the control character ${codePoint(bad[0])}`,
        'remove it (an escape such as "\\e" or "\\x1b" writes one); drydock refuses control characters so that nothing it prints can carry a terminal escape',
      ),
    );
  }
}

function checkMapKeys(node: YAMLMap, at: Locate, errors: CodedSpecError[]): Map<string, Pair> {
  const seen = new Map<string, Pair>();
  for (const pair of node.items) {
    const key = pair.key;
    if (!isScalar(key)) {
      errors.push(
        specError(
          'yaml-syntax',
          at(nodeStart(key)),
          'mapping keys must be plain scalars',
          'write the key as a plain string',
        ),
      );
      continue;
    }
    const name = String(key.value);
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      const first = at(nodeStart(earlier.key));
      errors.push(
        specError(
          'duplicate-key',
          at(nodeStart(key)),
          `duplicate key ${JSON.stringify(name)}`,
          `remove one of the two; the first is at line ${first.line}, column ${first.column}`,
        ),
      );
    } else {
      seen.set(name, pair);
    }
  }
  return seen;
}

/**
 * Walks without recursion. Duplicate keys are found with a Set per mapping rather than by
 * yaml's uniqueKeys, whose pairwise comparison is quadratic in the size of a mapping.
 */
export function checkDocument(doc: Document, text: string, at: Locate, maxDepth: number): WalkResult {
  const errors: CodedSpecError[] = [];
  const anchors = new Map<string, Node>();
  const aliases = new Map<Alias, Node>();
  const keys = new Map<YAMLMap, Map<string, Pair>>();
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) {
        errors.push(
          specError(
            'undefined-alias',
            at(nodeStart(node)),
            `alias *${node.source} has no anchor &${node.source} before it`,
            `define &${node.source} on an earlier value, or write the value out`,
          ),
        );
      } else aliases.set(node, target);
      continue;
    }
    const n = node as Node;
    if (n.anchor) anchors.set(n.anchor, n);
    if (n.tag !== undefined && !CORE_TAGS.has(n.tag)) {
      errors.push(
        specError(
          'unknown-tag',
          at(tagStart(text, nodeStart(n))),
          `unknown tag ${shortTag(n.tag)}`,
          'drydock reads plain YAML 1.2 data: remove the tag (tags such as !Ref or !!python/... belong to other tools and would load as something else)',
        ),
      );
    }
    checkScalar(n, at, errors);
    if (!isMap(n) && !isSeq(n)) continue;
    if (depth > maxDepth) {
      errors.push(
        specError(
          'too-deep',
          at(nodeStart(n)),
          `nesting is deeper than ${maxDepth} levels`,
          'flatten the document; no drydock spec needs this depth',
        ),
      );
      return { errors, aliases, keys };
    }
    // Children pushed last-first so that they are visited in document order (anchors before aliases).
    if (isMap(n)) {
      keys.set(n, checkMapKeys(n, at, errors));
      for (let i = n.items.length - 1; i >= 0; i--) {
        const pair = n.items[i]!;
        stack.push({ node: pair.value, depth: depth + 1 });
        if (isScalar(pair.key)) stack.push({ node: pair.key, depth: depth + 1 });
      }
    } else {
      for (let i = n.items.length - 1; i >= 0; i--) stack.push({ node: n.items[i], depth: depth + 1 });
    }
  }
  return { errors, aliases, keys };
}
