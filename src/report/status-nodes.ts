/**
 * A spec's node rows on the status branch. Up to ROWS_PER_FILE rows stay in the spec's own file
 * (`status/<Kind>/<name>.yaml`, under `nodes`). Above that they go to files of about a hundred
 * rows beside it (`status/<Kind>/<name>/nodes-NN.yaml`), which the spec's file names under
 * `nodeFiles`: Git stores a file as a whole blob, so with every row in one file a commit where
 * one row of 5,000 changed wrote, hashed, compressed and pushed the whole 725 KB again. A row's
 * file is chosen by a hash of its node's name, among a power of two of files, so a node keeps
 * its file while the fleet changes (until it doubles or halves) and a change touches one file.
 */
import { parse, stringify } from 'yaml';
import { compareStrings } from '../plan/order.js';
import type { NodeRow } from '../plan/types.js';

/** The most rows a spec's own file holds; above it, rows go to files of about this many. */
export const ROWS_PER_FILE = 100;

const byNode = (a: NodeRow, b: NodeRow): number => compareStrings(a.node, b.node);

/** A row, its text as an item of `nodes:`, its file, and the last render that saw it. */
interface RenderedRow {
  readonly row: NodeRow;
  readonly text: string;
  readonly file: number;
  seen: number;
}

/** One spec's rows as last rendered: each row by node, the same rows by file, and each file's text. */
interface RenderedSpec {
  readonly rows: Map<string, RenderedRow>;
  readonly files: Map<string, RenderedRow>[];
  readonly texts: string[];
  /** Counts renders: a row whose `seen` is not the current count has left. */
  render: number;
}

/**
 * Each spec's rows as last rendered, by cluster and spec file, updated in place, so a status
 * write where one row changed renders, sorts and joins one file's rows, not the fleet's, and
 * allocates nothing for the rows that did not change: at 5,000 rows the YAML library took
 * seconds per document, and rebuilding a record of every row each round was most of what was
 * left (the garbage collector's share included). An unchanged file keeps its very string,
 * which the tree writer then finds at once.
 */
const rendered = new Map<string, RenderedSpec>();

/** The same text the document's own stringify gives an item of a sequence under a key. */
function renderRow(row: NodeRow): string {
  return stringify([row], { lineWidth: 0, sortMapEntries: false }).replace(/^(?=.)/gm, '  ');
}

/** Same keys in the same order (the text follows key order) with the same values. */
function sameRow(a: NodeRow, b: NodeRow): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as keyof NodeRow;
    if (k !== kb[i] || a[k] !== b[k]) return false;
  }
  return true;
}

/** FNV-1a, 32 bits: stable across runs and versions, unlike anything keyed on memory. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** `nodes:` and the rows sorted by node: the same text the whole document's stringify gives. */
function joinRows(rows: RenderedRow[]): string {
  if (rows.length === 0) return 'nodes: []\n';
  rows.sort((a, b) => byNode(a.row, b.row));
  return ['nodes:\n', ...rows.map((r) => r.text)].join('');
}

const fileOf = (node: string, count: number): number => (count === 1 ? 0 : hash(node) % count);

/** A row as rendered before when it is the same, else rendered now. */
function renderedRow(row: NodeRow, count: number, was: RenderedRow | undefined, seen: number): RenderedRow {
  if (was !== undefined && sameRow(was.row, row)) return { ...was, file: fileOf(row.node, count), seen };
  return { row, text: renderRow(row), file: fileOf(row.node, count), seen };
}

/**
 * The files' texts with nothing kept for next time: for rows that name a node twice, which a
 * record by node cannot hold. Row texts still come from the last render where rows match.
 */
function renderUnkept(rows: readonly NodeRow[], count: number, before?: RenderedSpec): string[] {
  const files: RenderedRow[][] = Array.from({ length: count }, () => []);
  for (const row of rows) {
    const r = renderedRow(row, count, before?.rows.get(row.node), 0);
    files[r.file]?.push(r);
  }
  return files.map(joinRows);
}

/**
 * The text of each of `count` files the rows go to (a row's file by the hash of its node),
 * rendering again only the files whose rows changed since the last render under `key`.
 */
function renderFiles(key: string, rows: readonly NodeRow[], count: number): string[] {
  const before = rendered.get(key);
  // Another file count moves rows between files: start the record again, reusing row texts.
  const spec: RenderedSpec =
    before?.files.length === count
      ? before
      : {
          rows: new Map(),
          files: Array.from({ length: count }, () => new Map<string, RenderedRow>()),
          texts: [],
          render: 0,
        };
  const changed = new Set<number>(spec === before ? [] : spec.files.keys());
  const now = ++spec.render;
  for (const row of rows) {
    const was = spec.rows.get(row.node);
    if (was?.seen === now) {
      rendered.delete(key);
      return renderUnkept(rows, count, before);
    }
    if (was !== undefined && sameRow(was.row, row)) {
      was.seen = now;
      continue;
    }
    const r = renderedRow(row, count, was ?? before?.rows.get(row.node), now);
    spec.rows.set(row.node, r);
    spec.files[r.file]?.set(row.node, r);
    changed.add(r.file);
  }
  if (spec.rows.size > rows.length)
    for (const [node, r] of spec.rows)
      if (r.seen !== now) {
        spec.rows.delete(node);
        spec.files[r.file]?.delete(node);
        changed.add(r.file);
      }
  for (const i of changed) spec.texts[i] = joinRows([...(spec.files[i]?.values() ?? [])]);
  rendered.set(key, spec);
  return [...spec.texts];
}

/** How many node files `rows` rows take: 0 (they stay in the spec's file) or a power of two. */
function nodeFileCount(rows: number): number {
  if (rows <= ROWS_PER_FILE) return 0;
  let n = 2;
  while (n * ROWS_PER_FILE < rows) n *= 2;
  return n;
}

/** The names of the node files `rows` rows take (none when they fit in the spec's file). */
export function nodeFileNames(rows: number): string[] {
  const count = nodeFileCount(rows);
  const width = String(count - 1).length;
  return Array.from({ length: count }, (_, i) => `nodes-${String(i).padStart(width, '0')}.yaml`);
}

/**
 * `nodes:` and the rows sorted by node, for a spec's own file; `key` names the spec (cluster and
 * file) whose last render may be reused.
 */
export function renderRows(key: string, rows: readonly NodeRow[]): string {
  return renderFiles(key, rows, 1)[0] ?? 'nodes: []\n';
}

/**
 * The node files of one spec: name (relative to `dir`, the spec's file without `.yaml`) → text.
 * Empty when the rows fit in the spec's own file. `key` as for renderRows.
 */
export function renderNodeFiles(key: string, rows: readonly NodeRow[]): Map<string, string> {
  const names = nodeFileNames(rows.length);
  if (names.length === 0) return new Map();
  const texts = renderFiles(key, rows, names.length);
  return new Map(names.map((name, i) => [name, texts[i] ?? 'nodes: []\n']));
}

/** A spec's own file among the status branch's files: status/<Kind>/<name>.yaml (node files lie one level deeper). */
export const SPEC_DOC = /^status\/[^/]+\/[^/]+\.yaml$/;

/**
 * The spec document at `path` of a status branch's files (path → text), parsed, with the rows
 * of its node files put back under `nodes` (sorted by node) in place of `nodeFiles`: what
 * readers see is one document per spec whichever way its rows were stored. Not checked (that
 * is status-read.ts's); throws when a file is not YAML.
 */
export function readSpecDoc(files: ReadonlyMap<string, string>, path: string): unknown {
  const doc: unknown = parse(files.get(path) ?? '');
  if (typeof doc !== 'object' || doc === null || !('nodeFiles' in doc) || !Array.isArray(doc.nodeFiles)) return doc;
  const dir = path.slice(0, -'.yaml'.length);
  const rows: NodeRow[] = [];
  for (const name of doc.nodeFiles) {
    const part = files.get(`${dir}/${String(name)}`);
    if (part === undefined) continue;
    const parsed = parse(part) as { nodes?: NodeRow[] } | null;
    rows.push(...(parsed?.nodes ?? []));
  }
  const { nodeFiles: _, ...rest } = doc;
  return { ...rest, nodes: rows.sort(byNode) };
}

/** Every spec document of a status branch's files, as readSpecDoc gives it, by path. */
export function readSpecDocs(files: ReadonlyMap<string, string>): Map<string, unknown> {
  const docs = new Map<string, unknown>();
  for (const p of [...files.keys()].sort(compareStrings)) if (SPEC_DOC.test(p)) docs.set(p, readSpecDoc(files, p));
  return docs;
}
