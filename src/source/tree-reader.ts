/**
 * A commit's tree as the loader's file source, read straight from the object database (no
 * working checkout). Paths are relative to `root` (the --path subdirectory), '/'-separated.
 * A symlink (mode 120000) is reported as one and never followed; a submodule is 'other'.
 */
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { SpecSourceError } from '../spec/errors.js';
import type { SpecDirEntry, SpecEntryKind, SpecFileSource } from '../spec/source.js';
import { errorCode } from './errors.js';
import { shortCommit } from '../commit.js';
import { dirInHistory } from './history.js';

export interface TreeEntry {
  readonly path: string;
  readonly kind: 'file' | 'symlink' | 'dir';
  readonly size: number;
}

/** The commit's tree: the loader's SpecFileSource, plus a flat listing. */
export interface TreeReader extends SpecFileSource {
  readonly commit: string;
  /** Every file, symlink and directory below the root, sorted by path. */
  list(): Promise<TreeEntry[]>;
  /** The bytes of the regular file at `file`. */
  read(file: string): Promise<Uint8Array>;
}

export interface TreeReaderOptions {
  readonly gitdir: string;
  readonly commit: string;
  /** Subdirectory of the repository that holds the specs; '' for the root. */
  readonly root?: string;
  /** isomorphic-git's object cache, shared with the source so packs are parsed once. */
  readonly cache?: object;
}

interface RawEntry {
  readonly name: string;
  readonly kind: SpecEntryKind;
  readonly oid: string;
}

function kindOfMode(mode: string): SpecEntryKind {
  if (mode === '040000') return 'dir';
  if (mode === '120000') return 'symlink';
  if (mode === '100644' || mode === '100755') return 'file';
  return 'other';
}

function clean(p: string): string {
  return p
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

export function createTreeReader(opts: TreeReaderOptions): TreeReader {
  const root = clean(opts.root ?? '');
  const cache = opts.cache ?? {};
  const dirs = new Map<string, Promise<RawEntry[]>>();

  const repoPath = (rel: string): string => clean(path.posix.join(root, clean(rel)));

  async function readDirRaw(dir: string): Promise<RawEntry[]> {
    const key = clean(dir);
    let pending = dirs.get(key);
    if (!pending) {
      pending = (async () => {
        const filepath = repoPath(key);
        try {
          const { tree } = await git.readTree({
            fs,
            gitdir: opts.gitdir,
            oid: opts.commit,
            ...(filepath ? { filepath } : {}),
            cache,
          });
          return tree.map((e): RawEntry => ({ name: e.path, kind: kindOfMode(e.mode), oid: e.oid }));
        } catch (err) {
          const code = errorCode(err);
          if (code === 'NotFoundError')
            throw new SpecSourceError(
              'NotFound',
              `${key || '.'} does not exist in commit ${shortCommit(opts.commit)}`,
              { path: key },
            );
          if (code === 'ObjectTypeError')
            throw new SpecSourceError('NotADirectory', `${key || '.'} is not a directory`, { path: key });
          throw new SpecSourceError(
            'ReadFailed',
            `cannot read ${key || '.'} from commit ${shortCommit(opts.commit)} (${code ?? 'error'})`,
            { path: key },
          );
        }
      })();
      dirs.set(key, pending);
    }
    return pending;
  }

  async function entryOf(file: string): Promise<RawEntry> {
    const rel = clean(file);
    const slash = rel.lastIndexOf('/');
    const dir = slash < 0 ? '' : rel.slice(0, slash);
    const name = rel.slice(slash + 1);
    let entries: RawEntry[];
    try {
      entries = await readDirRaw(dir);
    } catch (err) {
      if (err instanceof SpecSourceError) throw new SpecSourceError('NotFound', `${rel} does not exist`, { path: rel });
      throw err;
    }
    const entry = entries.find((e) => e.name === name);
    if (!entry || rel === '') throw new SpecSourceError('NotFound', `${rel || '.'} does not exist`, { path: rel });
    return entry;
  }

  async function readBytes(file: string): Promise<Uint8Array> {
    const entry = await entryOf(file);
    if (entry.kind !== 'file')
      throw new SpecSourceError('ReadFailed', `${clean(file)} is not a regular file (${entry.kind})`, {
        path: clean(file),
      });
    try {
      const { blob } = await git.readBlob({ fs, gitdir: opts.gitdir, oid: entry.oid, cache });
      return blob;
    } catch (err) {
      throw new SpecSourceError('ReadFailed', `cannot read ${clean(file)} (${errorCode(err) ?? 'error'})`, {
        path: clean(file),
      });
    }
  }

  return {
    commit: opts.commit,
    async readDir(dir) {
      const entries = await readDirRaw(dir);
      return entries.map((e): SpecDirEntry => ({ name: e.name, kind: e.kind }));
    },
    existedBefore(dir) {
      return dirInHistory({ gitdir: opts.gitdir, cache }, repoPath(dir), opts.commit, false);
    },
    async readFile(file, maxBytes) {
      const blob = await readBytes(file);
      // A blob is stored compressed and whole; past the limit only the limit's worth is handed on.
      return blob.length > maxBytes + 1 ? blob.subarray(0, maxBytes + 1) : blob;
    },
    read: readBytes,
    async list() {
      const out: TreeEntry[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const e of await readDirRaw(dir)) {
          const p = dir ? `${dir}/${e.name}` : e.name;
          if (e.kind === 'dir') {
            out.push({ path: p, kind: 'dir', size: 0 });
            await walk(p);
          } else if (e.kind === 'file' || e.kind === 'symlink') {
            // A symlink's size is its target's length, as lstat reports it; it is not followed.
            const { blob } = await git.readBlob({ fs, gitdir: opts.gitdir, oid: e.oid, cache });
            out.push({ path: p, kind: e.kind, size: blob.length });
          }
        }
      };
      await walk('');
      return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },
  };
}
