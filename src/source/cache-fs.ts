/**
 * The file system isomorphic-git writes drydock's Git cache through. isomorphic-git writes an
 * object only when no file exists at its path and trusts whatever file it finds there, so a write
 * cut short (drydock killed between opening the file and filling it) would leave an empty or
 * truncated object that is never rewritten: every later push that needs it fails. Files under
 * objects/ are therefore written to a temporary file in the same directory, flushed to disk and
 * renamed into place (a rename is atomic on POSIX): the final path holds a whole object or nothing.
 *
 * Other files (refs, config) are written as before: a stray temporary file in refs/ would read
 * as a branch.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { PromiseFsClient } from 'isomorphic-git';

/** The infix of a temporary object file's name; left behind only by a write that was killed. */
export const TEMP_MARK = '.drydock-tmp-';

type WriteData = Parameters<FileHandle['writeFile']>[0];
type WriteOptions = BufferEncoding | { encoding?: BufferEncoding | null; mode?: number } | null | undefined;

function isObjectPath(file: string): boolean {
  return file.split(/[\\/]/).includes('objects');
}

/** Writes `file` whole or not at all: a temporary sibling, flushed, then renamed over it. */
export async function writeFileAtomic(file: string, data: WriteData, options?: WriteOptions): Promise<void> {
  const opts = typeof options === 'string' ? { encoding: options } : (options ?? {});
  const tmp = `${file}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const handle = await fsp.open(tmp, 'wx', opts.mode ?? 0o666);
    try {
      await handle.writeFile(data, { encoding: opts.encoding ?? null });
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

function writeFile(file: string, data: WriteData, options?: WriteOptions): Promise<void> {
  if (isObjectPath(file)) return writeFileAtomic(file, data, options);
  return fsp.writeFile(file, data, options);
}

/** node:fs promises, with writes under objects/ made atomic. */
export const cacheFs: PromiseFsClient = {
  promises: {
    readFile: fsp.readFile,
    writeFile,
    unlink: fsp.unlink,
    readdir: fsp.readdir,
    mkdir: fsp.mkdir,
    rmdir: fsp.rmdir,
    rm: fsp.rm,
    stat: fsp.stat,
    lstat: fsp.lstat,
    readlink: fsp.readlink,
    symlink: fsp.symlink,
    chmod: fsp.chmod,
  } as PromiseFsClient['promises'],
};
