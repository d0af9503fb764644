/**
 * YAML text → documents that remember where every node came from. What no parser may be handed
 * is refused first (control characters, flow nesting that would recurse too deep); then the
 * fast path reads the file with js-yaml, and any file it cannot vouch for reading exactly as
 * the `yaml` library would (tags, anchors, escapes, tabs, directives, duplicate keys, syntax
 * errors, ...) goes the full path through `yaml`, which reports every mistake where it is.
 */
import { specError, type CodedSpecError } from './errors.js';
import type { SourcePosition } from './model.js';
import { parseFast } from './parse-fast.js';
import { parseWithYaml } from './parse-yaml.js';
import type { ParsedFile, ParseLimits } from './parsed.js';
import { codePoint } from './yaml-checks.js';

export type { ParsedDocument, ParsedFile, ParseLimits, PathSegment } from './parsed.js';

/** Line and column of `offset`, counted from the start (used once per refused file). */
function positionOf(file: string, text: string, offset: number): SourcePosition {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { file, line, column: offset - lineStart + 1 };
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
  return specError(
    'control-character',
    positionOf(file, text, m.index),
    `file holds the control character ${codePoint(m[0])}, which YAML does not allow`,
    'remove it; if the value needs it, drydock does not accept it either',
  );
}

/**
 * The text a parser may be handed (line breaks as LF), or the finding that refuses the file
 * before any parser sees it.
 */
export function prepareText(file: string, raw: string, limits: ParseLimits): string | ParsedFile {
  // YAML 1.2 counts CR and CRLF as line breaks; the parsers only split on LF, so a file saved
  // with CR-only endings would be one long line. Normalised first, positions stay the user's.
  const text = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  const control = nonPrintable(file, text);
  if (control) return { documents: [], errors: [control] };
  const deep = flowDepthExceeds(text, limits.maxDepth);
  if (deep === undefined) return text;
  return {
    documents: [],
    errors: [
      specError(
        'too-deep',
        positionOf(file, text, deep),
        `nesting is deeper than ${limits.maxDepth} levels`,
        'flatten the document; no drydock spec needs this depth',
      ),
    ],
  };
}

export function parseSpecText(file: string, raw: string, limits: ParseLimits): ParsedFile {
  const text = prepareText(file, raw, limits);
  if (typeof text !== 'string') return text;
  return parseFast(file, text, limits) ?? parseWithYaml(file, text, limits);
}
