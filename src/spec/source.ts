/**
 * Where spec files come from. The loader only needs to list a directory and read a file, so
 * the same loader works on a working directory (directorySource) and on a commit's tree (the
 * Git source implements SpecFileSource over isomorphic-git's readTree/readBlob).
 */
import { lstat, open, readdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import fs from 'node:fs';
import { SpecSourceError } from './errors.js';
import { dirInHistory } from '../source/history.js';

export type SpecEntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface SpecDirEntry {
  /** The entry's name inside its directory (no slashes). */
  readonly name: string;
  readonly kind: SpecEntryKind;
  /** Size in bytes when known without reading the file (a Git tree does not say). */
  readonly size?: number;
}

/**
 * A read-only tree of files. Paths are repository-relative, '/'-separated, without a leading
 * slash; '' is the root. Implementations must never follow symlinks: a symlink is reported as
 * kind 'symlink' and is not read.
 */
export interface SpecFileSource {
  /**
   * The entries directly inside `dir`, in any order. Throws SpecSourceError NotFound when `dir`
   * does not exist and NotADirectory when it is not a directory.
   */
  readDir(dir: string): Promise<readonly SpecDirEntry[]>;
  /**
   * The bytes of the regular file at `file`. May stop after maxBytes + 1 bytes, so that an
   * oversized file is detected without reading (or allocating) all of it.
   */
  readFile(file: string, maxBytes: number): Promise<Uint8Array>;
  /**
   * Whether `dir` held files in an earlier commit. Git keeps no empty folders, so a listed
   * path whose last file a commit deleted is gone from that commit's tree: that is a warning,
   * where a path that never existed is likely a typo. Left out where there is no history.
   */
  existedBefore?(dir: string): Promise<boolean>;
}

function code(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

/** A SpecFileSource over a directory of the local file system. */
export function directorySource(root: string): SpecFileSource {
  const abs = (rel: string): string => {
    const joined = path.resolve(root, ...rel.split('/').filter((p) => p !== ''));
    const base = path.resolve(root);
    if (joined !== base && !joined.startsWith(base + path.sep)) {
      throw new SpecSourceError('NotFound', `path ${JSON.stringify(rel)} is outside the spec root`, { path: rel });
    }
    return joined;
  };

  return {
    async readDir(dir) {
      const target = abs(dir);
      let entries;
      try {
        const st = await lstat(target);
        if (!st.isDirectory()) {
          throw new SpecSourceError('NotADirectory', `${dir || '.'} is not a directory`, { path: dir });
        }
        entries = await readdir(target, { withFileTypes: true });
      } catch (err) {
        if (err instanceof SpecSourceError) throw err;
        if (code(err) === 'ENOENT')
          throw new SpecSourceError('NotFound', `${dir || '.'} does not exist`, { path: dir });
        if (code(err) === 'ENOTDIR')
          throw new SpecSourceError('NotADirectory', `${dir || '.'} is not a directory`, { path: dir });
        throw new SpecSourceError('ReadFailed', `cannot read directory ${dir || '.'}: ${code(err) ?? 'error'}`, {
          path: dir,
        });
      }
      return entries.map((e): SpecDirEntry => ({
        name: e.name,
        kind: e.isSymbolicLink() ? 'symlink' : e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other',
      }));
    },

    // A working copy: a path emptied here or by the commit checked out was in HEAD or before it.
    async existedBefore(dir) {
      let repo;
      try {
        repo = await git.findRoot({ fs, filepath: path.resolve(root) });
      } catch {
        return false;
      }
      const rel = path
        .relative(repo, abs(dir))
        .split(path.sep)
        .filter((p) => p !== '')
        .join('/');
      let head;
      try {
        head = await git.resolveRef({ fs, gitdir: path.join(repo, '.git'), ref: 'HEAD' });
      } catch {
        return false;
      }
      return dirInHistory({ gitdir: path.join(repo, '.git') }, rel, head, true);
    },

    async readFile(file, maxBytes) {
      let handle;
      try {
        // O_NOFOLLOW: a file swapped for a symlink after listing is still not followed.
        handle = await open(abs(file), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
        const st = await handle.stat();
        if (!st.isFile()) throw new SpecSourceError('ReadFailed', `${file} is not a regular file`, { path: file });
        const want = Math.min(st.size, maxBytes + 1);
        const buf = new Uint8Array(want);
        let got = 0;
        while (got < want) {
          const { bytesRead } = await handle.read(buf, got, want - got, got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return buf.subarray(0, got);
      } catch (err) {
        if (err instanceof SpecSourceError) throw err;
        if (code(err) === 'ENOENT') throw new SpecSourceError('NotFound', `${file} does not exist`, { path: file });
        throw new SpecSourceError('ReadFailed', `cannot read ${file}: ${code(err) ?? 'error'}`, { path: file });
      } finally {
        await handle?.close();
      }
    },
  };
}
