/**
 * Writes a set of files as a Git tree straight into the object database (no working tree, no
 * index), and reads one back. Equal file sets give equal tree ids, which is how the status
 * writer knows nothing changed.
 */
import git, { type TreeEntry } from 'isomorphic-git';
import { cacheFs as fs } from './cache-fs.js';

interface DirNode {
  readonly files: Map<string, string>;
  readonly dirs: Map<string, DirNode>;
}

function insert(root: DirNode, filepath: string, content: string): void {
  const parts = filepath.split('/').filter((p) => p !== '');
  const name = parts.pop();
  if (name === undefined) return;
  let node = root;
  for (const p of parts) {
    let next = node.dirs.get(p);
    if (!next) {
      next = { files: new Map(), dirs: new Map() };
      node.dirs.set(p, next);
    }
    node = next;
  }
  node.files.set(name, content);
}

/** Object ids a tree write made or found: blob text → id, and a tree's entries → id. */
interface Written {
  readonly blobs: Map<string, string>;
  readonly trees: Map<string, string>;
}

/** A tree's entries as one key: NUL cannot occur in a path, so no two entry lists share one. */
const entriesKey = (entries: readonly TreeEntry[]): string =>
  entries.map((e) => `${e.mode}\0${e.path}\0${e.oid}\0`).join('');

/**
 * Writes file sets as trees into one object database, remembering the ids of its last write:
 * isomorphic-git's writeBlob and writeTree hash and deflate an object even when it is stored
 * already, and with a spec's node rows spread over many files, most of them unchanged between
 * two status writes, that was most of a write's Git work. One per writer, so two writers on one
 * object database (two clusters' status branches) do not evict each other's record.
 */
export class TreeWriter {
  private last: Written = { blobs: new Map(), trees: new Map() };

  constructor(private readonly gitdir: string) {}

  /** Writes `files` (path → UTF-8 text) as a tree; resolves to its id. */
  async write(files: ReadonlyMap<string, string>): Promise<string> {
    const root: DirNode = { files: new Map(), dirs: new Map() };
    for (const [p, content] of files) insert(root, p, content);
    const now: Written = { blobs: new Map(), trees: new Map() };
    const tree = await this.writeDir(root, now);
    this.last = now;
    return tree;
  }

  private async writeDir(node: DirNode, now: Written): Promise<string> {
    const { gitdir } = this;
    const entries: TreeEntry[] = [];
    for (const [name, content] of node.files) {
      let oid = this.last.blobs.get(content) ?? now.blobs.get(content);
      oid ??= await git.writeBlob({ fs, gitdir, blob: Buffer.from(content, 'utf8') });
      now.blobs.set(content, oid);
      entries.push({ mode: '100644', path: name, oid, type: 'blob' });
    }
    for (const [name, child] of node.dirs) {
      entries.push({ mode: '040000', path: name, oid: await this.writeDir(child, now), type: 'tree' });
    }
    const key = entriesKey(entries);
    // writeTree sorts entries the way Git does.
    const oid = this.last.trees.get(key) ?? now.trees.get(key) ?? (await git.writeTree({ fs, gitdir, tree: entries }));
    now.trees.set(key, oid);
    return oid;
  }
}

/** Every file of a commit's tree (path → UTF-8 text), for reading the status branch back. */
export async function readFilesTree(gitdir: string, commit: string, cache: object = {}): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir, oid, cache });
    for (const e of tree) {
      const p = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === 'tree') await walk(e.oid, p);
      else if (e.type === 'blob' && e.mode !== '120000') {
        const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid, cache });
        out.set(p, Buffer.from(blob).toString('utf8'));
      }
    }
  };
  await walk(commit, '');
  return out;
}
