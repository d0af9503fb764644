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

/**
 * Each file's node rows as last rendered (row JSON → YAML), so a status write where one row
 * changed renders one row, not the fleet: at 5,000 rows the YAML library took seconds per
 * document. Replaced whole on every render of that file, so it holds one render's rows.
 */
const renderedRows = new Map<string, Map<string, string>>();

/** `nodes:` and the rows sorted by node: the same text the whole document's stringify gives. */
export function renderRows(key: string, rows: readonly StatusNodeRow[]): string {
  if (rows.length === 0) return 'nodes: []\n';
  const before = renderedRows.get(key);
  const now = new Map<string, string>();
  const parts = ['nodes:\n'];
  for (const row of [...rows].sort(byNode)) {
    const json = JSON.stringify(row);
    let text = before?.get(json) ?? now.get(json);
    // The same text the document's own stringify gives an item of a sequence under a key.
    text ??= stringify([row], { lineWidth: 0, sortMapEntries: false }).replace(/^(?=.)/gm, '  ');
    now.set(json, text);
    parts.push(text);
  }
  renderedRows.set(key, now);
  return parts.join('');
}

/** FNV-1a, 32 bits: stable across runs and versions, unlike anything keyed on memory. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
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
 * The node files of one spec: name (relative to `dir`, the spec's file without `.yaml`) → text.
 * Empty when the rows fit in the spec's own file.
 */
export function renderNodeFiles(dir: string, rows: readonly StatusNodeRow[]): Map<string, string> {
  const names = nodeFileNames(rows.length);
  const buckets: StatusNodeRow[][] = names.map(() => []);
  for (const row of rows) buckets[hash(row.node) % names.length]?.push(row);
  return new Map(names.map((name, i) => [name, renderRows(`${dir}/${name}`, buckets[i] ?? [])]));
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
