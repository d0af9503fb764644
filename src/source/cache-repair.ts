/**
 * Repairs the loose objects of a cache clone when drydock opens it. A cache written by a drydock
 * killed mid-write (before objects were written atomically, or on a crash of the machine) may hold
 * an empty or truncated object file; isomorphic-git never rewrites a file that exists, so that
 * object would break every push that needs it. Removing it lets the next write or fetch store it
 * again.
 *
 * Bounded cost: every loose object is stat'ed (size 0 is the usual damage); only the most recently
 * modified ones, where a killed write lands, are inflated to find a truncated one.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { inflate } from 'node:zlib';
import { TEMP_MARK } from './cache-fs.js';

const inflateAsync = promisify(inflate);

/** How many of the newest loose objects are inflated on open. */
export const INFLATE_NEWEST = 64;

export interface RepairResult {
  /** Loose objects of size 0, removed. */
  readonly empty: number;
  /** Loose objects that did not inflate, removed. */
  readonly corrupt: number;
  /** Temporary files of killed writes, removed. */
  readonly temporary: number;
}

interface Loose {
  readonly file: string;
  readonly size: number;
  readonly mtimeMs: number;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir);
  } catch {
    return [];
  }
}

/** Every loose object's file (objects/xx/…) and every temporary file under objects/. */
async function scan(gitdir: string): Promise<{ objects: Loose[]; temporary: string[] }> {
  const objects: Loose[] = [];
  const temporary: string[] = [];
  const root = path.join(gitdir, 'objects');
  for (const sub of await listDir(root)) {
    const fanout = /^[0-9a-f]{2}$/.test(sub);
    if (!fanout && sub !== 'pack') continue;
    for (const name of await listDir(path.join(root, sub))) {
      const file = path.join(root, sub, name);
      if (name.includes(TEMP_MARK)) temporary.push(file);
      else if (fanout && /^[0-9a-f]{38}$/.test(name)) {
        const st = await fsp.stat(file).catch(() => undefined);
        if (st?.isFile()) objects.push({ file, size: st.size, mtimeMs: st.mtimeMs });
      }
    }
  }
  return { objects, temporary };
}

async function inflates(file: string): Promise<boolean> {
  try {
    await inflateAsync(await fsp.readFile(file));
    return true;
  } catch {
    return false;
  }
}

export async function repairLooseObjects(gitdir: string, inflateNewest = INFLATE_NEWEST): Promise<RepairResult> {
  const { objects, temporary } = await scan(gitdir);
  const empty = objects.filter((o) => o.size === 0);
  const newest = objects
    .filter((o) => o.size > 0)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(0, inflateNewest);
  const corrupt: Loose[] = [];
  for (const o of newest) if (!(await inflates(o.file))) corrupt.push(o);
  for (const file of [...empty.map((o) => o.file), ...corrupt.map((o) => o.file), ...temporary]) {
    await fsp.rm(file, { force: true });
  }
  return { empty: empty.length, corrupt: corrupt.length, temporary: temporary.length };
}
