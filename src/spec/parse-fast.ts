/**
 * The fast path: plain YAML read by js-yaml, which is about seven times faster than the `yaml`
 * library's lexer, parser and composer (a 1 MiB spec: 0.15 s against 1.1 s of CPU). It only
 * answers for files it can vouch for reading exactly as the full path would; for anything else
 * it answers `undefined` and the caller parses with `yaml`, which finds and places every
 * mistake. Vouched for: no tag, anchor or alias, no tab, backslash, byte order mark, directive,
 * document end marker or explicit key; no duplicate, empty or non-scalar key; no control
 * character in a value; nesting within the limit; and no error from js-yaml. Plain scalars are
 * resolved by the `yaml` library's own core-schema tags, so `0x1f`, `1_000` or `.NaN` mean the
 * same on both paths. Positions come from js-yaml's open/close events: each node is a frame
 * that remembers where it opened, and a path is located by walking frames as the full path
 * walks the composed document. test/spec/parse-fast.test.ts holds both paths to the same data
 * and the same line:column for every node of the corpora and of generated documents.
 */
import jsyaml from 'js-yaml';
import { isScalar, LineCounter, Schema, type ScalarTag } from 'yaml';
import type { SourcePosition } from './model.js';
import { notAnObject, type ParsedDocument, type ParsedFile, type ParseLimits, type PathSegment } from './parsed.js';
import { CONTROL_IN_VALUE } from './yaml-checks.js';

/** Text the fast path leaves to `yaml`: tabs, escapes, a BOM, directives, `...`, `---x`, explicit `?` keys,
 * and a comment right after a quote or bracket (an error to `yaml`, not to js-yaml). */
const NOT_PLAIN = /[\t\\\ufeff]|^%|^\.\.\.(?:[ \n]|$)|^---(?![ \n]|$)|["'\]}]#|(?:^|[ [{,])\?(?:[ \n]|$)/m;

/** Thrown from js-yaml's listener to stop reading a file the fast path will not vouch for. */
const DECLINE = new Error('left to the full path');

/** Plain scalars resolved by the very tags `yaml` resolves them with (YAML 1.2 core schema). */
const CORE_SCALARS = new Schema({ schema: 'core', resolveKnownTags: false }).tags.filter(
  (t): t is ScalarTag & { test: RegExp } => t.default === true && 'test' in t && t.test instanceof RegExp,
);
const IMPLICIT_TAGS = CORE_SCALARS.map((_, i) => `tag:core.yaml-1.2:${i}`);
const IMPLICIT = CORE_SCALARS.map(
  (tag, i) =>
    new jsyaml.Type(IMPLICIT_TAGS[i]!, {
      kind: 'scalar',
      resolve: (text: string) => tag.test.test(text),
      construct: (text: string) => {
        const value = tag.resolve(
          text,
          () => {
            throw DECLINE;
          },
          { intAsBigInt: false },
        );
        return isScalar(value) ? value.value : value;
      },
    }),
);
const SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: IMPLICIT });

/** One node as js-yaml composed it: where it opened, what it is, and its children in order. */
interface Frame {
  readonly open: number;
  kind: string | null;
  result: unknown;
  children: Frame[] | undefined;
  /** A mapping's keys → index of the key's frame in `children`, built on first lookup. */
  keys?: Map<string, number>;
}

/** js-yaml's state, with the two fields its types leave out. */
type EventState = jsyaml.State & { tag: string | null; anchor: string | null };

/** A mapping's children are key, value, key, value: one frame each, keys plain scalars. */
function pairsHold(frame: Frame): boolean {
  const children = frame.children ?? [];
  // Trying one more key after the last pair of a block mapping leaves an empty frame behind.
  const last = children[children.length - 1];
  if (children.length % 2 === 1 && last?.kind === null && last.result === null) children.pop();
  if (children.length !== 2 * Object.keys(frame.result as object).length) return false;
  for (let i = 0; i < children.length; i += 2) {
    const key = children[i]!;
    // A null key is '' in yaml's data and 'null' in js-yaml's; __proto__ is set differently.
    if (key.kind !== 'scalar' || key.result === null || typeof key.result === 'object') return false;
    if (key.result === '__proto__') return false;
  }
  return true;
}

/**
 * The frame to keep for a node that just closed, or DECLINE. A node that turned out to be the
 * content of the frame that opened it (js-yaml tries a block mapping key, then keeps it as the
 * value) is one node: the inner frame stands for both.
 */
function settle(frame: Frame, state: EventState, text: string): Frame {
  if (state.anchor !== null || (state.tag !== null && state.tag !== '?' && !IMPLICIT_TAGS.includes(state.tag)))
    throw DECLINE;
  frame.kind = state.kind ?? null;
  frame.result = state.result;
  if (frame.kind !== null) {
    // yaml holds a quoted scalar or flow collection that spans lines to indentation rules js-yaml does not.
    const start = contentStart(text, frame);
    const c = text.charCodeAt(start);
    const spans = (c === 0x22 || c === 0x27 || c === 0x5b || c === 0x7b) && text.indexOf('\n', start) < state.position;
    if (spans && text.indexOf('\n', start) >= 0) throw DECLINE;
  }
  const only = frame.children?.length === 1 ? frame.children[0] : undefined;
  if (frame.kind === 'scalar') {
    if (typeof frame.result === 'string' && CONTROL_IN_VALUE.test(frame.result)) throw DECLINE;
    frame.children = undefined;
  } else if (only !== undefined && only.result === frame.result && frame.result !== null) {
    return only;
  } else if (frame.kind === 'mapping') {
    if (!pairsHold(frame)) throw DECLINE;
  } else if (frame.kind === 'sequence') {
    // A block sequence's empty entry and a flow sequence's `a: b` entry leave no frame of their own.
    if ((frame.children?.length ?? 0) !== (frame.result as unknown[]).length) throw DECLINE;
  } else if (frame.children !== undefined || frame.result !== null) {
    throw DECLINE;
  }
  return frame;
}

/** The root frame of each document, or undefined when js-yaml refuses or a frame is declined. */
function readFrames(text: string, maxDepth: number): Frame[] | undefined {
  const stack: Frame[] = [];
  const roots: Frame[] = [];
  try {
    jsyaml.loadAll(text, undefined, {
      schema: SCHEMA,
      listener: (event, state) => {
        if (event === 'open') {
          // Frames nest at least as deep as collections do, so within the limit here is within it there.
          if (stack.length >= maxDepth) throw DECLINE;
          stack.push({ open: state.position, kind: null, result: null, children: undefined });
          return;
        }
        const frame = settle(stack.pop()!, state as EventState, text);
        const parent = stack[stack.length - 1];
        if (parent === undefined) roots.push(frame);
        else (parent.children ??= []).push(frame);
      },
    });
  } catch {
    return undefined;
  }
  return roots;
}

/** Where a node's content starts: past the blanks, line breaks and comments before it. */
function contentStart(text: string, frame: Frame): number {
  let i = frame.open;
  // An empty value sits where js-yaml looked for it, past the blanks after its key's colon, as in yaml.
  if (frame.kind === null) {
    while (text.charCodeAt(i) === 0x20) i++;
    return i;
  }
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a) i++;
    else if (c === 0x23) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return text.length;
      i = nl + 1;
    } else return i;
  }
}

function keyIndex(frame: Frame): Map<string, number> {
  if (frame.keys) return frame.keys;
  const keys = new Map<string, number>();
  const children = frame.children ?? [];
  for (let i = 0; i < children.length; i += 2) keys.set(String(children[i]!.result), i);
  frame.keys = keys;
  return keys;
}

/** The full path's locator, step for step, over frames instead of composed nodes. */
function locator(text: string, root: Frame, at: (offset: number) => SourcePosition): ParsedDocument['locate'] {
  return (path: readonly PathSegment[], key = false) => {
    let frame: Frame | undefined = root;
    let offset = contentStart(text, root);
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      let next: Frame | undefined;
      let keyOffset: number | undefined;
      if (frame?.kind === 'mapping') {
        const k = keyIndex(frame).get(String(seg));
        if (k !== undefined) {
          next = frame.children![k + 1];
          keyOffset = contentStart(text, frame.children![k]!);
        }
      } else if (frame?.kind === 'sequence' && (typeof seg === 'number' || /^\d+$/.test(seg))) {
        next = frame.children?.[Number(seg)];
      }
      if (next === undefined && keyOffset === undefined) break;
      const last = i === path.length - 1;
      offset =
        last && key && keyOffset !== undefined
          ? keyOffset
          : next !== undefined
            ? contentStart(text, next)
            : (keyOffset ?? offset);
      frame = next;
    }
    return at(offset);
  };
}

/** The fast path's reading of `text`, or undefined to send the file the full path. */
export function parseFast(file: string, text: string, limits: ParseLimits): ParsedFile | undefined {
  if (NOT_PLAIN.test(text)) return undefined;
  // js-yaml ends the text with a line break if it has none, which a kept (|+) block scalar would show.
  if (!text.endsWith('\n') && (text.includes('|') || text.includes('>'))) return undefined;
  const roots = readFrames(text, limits.maxDepth);
  if (roots === undefined || roots.length > limits.maxDocuments) return undefined;
  const lc = new LineCounter();
  lc.addNewLine(0);
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lc.addNewLine(i + 1);
  const at = (offset: number): SourcePosition => {
    const { line, col } = lc.linePos(offset);
    return { file, line, column: col };
  };
  const documents: ParsedDocument[] = [];
  const errors = [];
  for (const [index, root] of roots.entries()) {
    if (root.result === null) continue; // an empty document
    const start = at(contentStart(text, root));
    const value = root.result;
    if (root.kind !== 'mapping') errors.push(notAnObject(value, start));
    else
      documents.push({
        file,
        index,
        value: value as Record<string, unknown>,
        start,
        locate: locator(text, root, at),
      });
  }
  return { documents, errors };
}
