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
import type { StatusNodeRow } from './types.js';

/** The most rows a spec's own file holds; above it, rows go to files of about this many. */
export const ROWS_PER_FILE = 100;

const byNode = (a: StatusNodeRow, b: StatusNodeRow): number => compareStrings(a.node, b.node);

/** A row and its text as an item of `nodes:`. */
interface RenderedRow {
  readonly row: StatusNodeRow;
  readonly text: string;
}

/** One spec's rows as last rendered: each row by node, and each file's text. */
interface RenderedSpec {
  readonly rows: Map<string, RenderedRow>;
  readonly files: readonly string[];
  /** No two rows named the same node, so `rows` held every row. */
  readonly distinct: boolean;
}

/**
 * Each spec's rows as last rendered, by cluster and spec file, so a status write where one row
 * changed renders and sorts one file's rows, not the fleet's: at 5,000 rows the YAML library
 * took seconds per document, and re-sorting and re-joining every file was most of what was
 * left. An unchanged file keeps its very string, which the tree writer then finds at once.
 * Replaced whole on every render of that spec, so it holds one render's rows.
 */
const rendered = new Map<string, RenderedSpec>();

/** The same text the document's own stringify gives an item of a sequence under a key. */
function renderRow(row: StatusNodeRow): string {
  return stringify([row], { lineWidth: 0, sortMapEntries: false }).replace(/^(?=.)/gm, '  ');
}

/** Same keys in the same order (the text follows key order) with the same values. */
function sameRow(a: StatusNodeRow, b: StatusNodeRow): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as keyof StatusNodeRow;
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

/**
 * The text of each of `count` files the rows go to (a row's file by the hash of its node),
 * rendering again only the files whose rows changed since the last render under `key`.
 */
function renderFiles(key: string, rows: readonly StatusNodeRow[], count: number): string[] {
  const before = rendered.get(key);
  const now = new Map<string, RenderedRow>();
  const files: RenderedRow[][] = Array.from({ length: count }, () => []);
  const changed = new Set<number>();
  const fileOf = (node: string): number => (count === 1 ? 0 : hash(node) % count);
  for (const row of rows) {
    const i = fileOf(row.node);
    const was = before?.rows.get(row.node);
    const r = was !== undefined && sameRow(was.row, row) ? was : { row, text: renderRow(row) };
    if (r !== was) changed.add(i);
    now.set(row.node, r);
    files[i]?.push(r);
  }
  const distinct = now.size === rows.length;
  // A file's rows are the same as last time when none changed and none left it; another file
  // count moves rows between files, and a repeated node name hides rows from the record.
  const same = before !== undefined && before.distinct && distinct && before.files.length === count;
  if (same) for (const node of before.rows.keys()) if (!now.has(node)) changed.add(fileOf(node));
  const texts = files.map((f, i) => (same && !changed.has(i) ? (before.files[i] ?? joinRows(f)) : joinRows(f)));
  rendered.set(key, { rows: now, files: texts, distinct });
  return texts;
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
export function renderRows(key: string, rows: readonly StatusNodeRow[]): string {
  return renderFiles(key, rows, 1)[0] ?? 'nodes: []\n';
}

/**
 * The node files of one spec: name (relative to `dir`, the spec's file without `.yaml`) → text.
 * Empty when the rows fit in the spec's own file. `key` as for renderRows.
 */
export function renderNodeFiles(key: string, rows: readonly StatusNodeRow[]): Map<string, string> {
  const names = nodeFileNames(rows.length);
  if (names.length === 0) return new Map();
  const texts = renderFiles(key, rows, names.length);
  return new Map(names.map((name, i) => [name, texts[i] ?? 'nodes: []\n']));
}

/**
 * Every spec document of a status branch's files (path → text), parsed, with the rows of its
 * node files put back under `nodes` (sorted by node) in place of `nodeFiles`: what readers see
 * is one document per spec whichever way its rows were stored.
 */
export function readSpecDocs(files: ReadonlyMap<string, string>): Map<string, Record<string, unknown>> {
  const docs = new Map<string, Record<string, unknown>>();
  for (const [p, text] of [...files].sort(([a], [b]) => compareStrings(a, b))) {
    // status/<Kind>/<name>.yaml; node files lie one level deeper
    if (!/^status\/[^/]+\/[^/]+\.yaml$/.test(p)) continue;
    const doc = parse(text) as Record<string, unknown>;
    const names = doc.nodeFiles;
    if (Array.isArray(names)) {
      const dir = p.slice(0, -'.yaml'.length);
      const rows: StatusNodeRow[] = [];
      for (const name of names) {
        const part = files.get(`${dir}/${String(name)}`);
        if (part === undefined) continue;
        const parsed = parse(part) as { nodes?: StatusNodeRow[] } | null;
        rows.push(...(parsed?.nodes ?? []));
      }
      const { nodeFiles: _, ...rest } = doc;
      docs.set(p, { ...rest, nodes: rows.sort(byNode) });
    } else docs.set(p, doc);
  }
  return docs;
}
