/**
 * Writes a set of files as a Git tree straight into the object database (no working tree, no
 * index), and reads one back. Equal file sets give equal tree ids, which is how the status
 * writer knows nothing changed.
 */
import fs from 'node:fs';
import git, { type TreeEntry } from 'isomorphic-git';

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

/**
 * The blobs of each object database's last writeFilesTree (text → id). isomorphic-git's
 * writeBlob hashes and deflates a blob even when it is stored already; with a spec's node rows
 * spread over many files, most of them unchanged, that was most of a status write's Git work.
 */
const lastBlobs = new Map<string, Map<string, string>>();

async function writeDir(
  gitdir: string,
  node: DirNode,
  blobs: { before: Map<string, string> | undefined; now: Map<string, string> },
): Promise<string> {
  const entries: TreeEntry[] = [];
  for (const [name, content] of node.files) {
    let oid = blobs.before?.get(content) ?? blobs.now.get(content);
    oid ??= await git.writeBlob({ fs, gitdir, blob: Buffer.from(content, 'utf8') });
    blobs.now.set(content, oid);
    entries.push({ mode: '100644', path: name, oid, type: 'blob' });
  }
  for (const [name, child] of node.dirs) {
    entries.push({ mode: '040000', path: name, oid: await writeDir(gitdir, child, blobs), type: 'tree' });
  }
  // writeTree sorts entries the way Git does.
  return git.writeTree({ fs, gitdir, tree: entries });
}

/** Writes `files` (path → UTF-8 text) as a tree; resolves to its id. */
export async function writeFilesTree(gitdir: string, files: ReadonlyMap<string, string>): Promise<string> {
  const root: DirNode = { files: new Map(), dirs: new Map() };
  for (const [p, content] of files) insert(root, p, content);
  const blobs = { before: lastBlobs.get(gitdir), now: new Map<string, string>() };
  const tree = await writeDir(gitdir, root, blobs);
  lastBlobs.set(gitdir, blobs.now);
  return tree;
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
