/**
 * A DesiredSource over a local directory (a checkout, or a directory a sidecar keeps in sync).
 * Its "commit" is the Git HEAD when the directory is a Git work tree with no local changes,
 * otherwise a content hash of the loaded files, so a change is always noticed.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadFromDirectory } from '../spec/load.js';
import { loadMember } from '../spec/fleet-load.js';
import { directorySource } from '../spec/source.js';
import { revisionSource, type DesiredRevision, type DesiredSource } from './desired.js';

function gitHead(dir: string): string | undefined {
  const head = spawnSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  if (head.status !== 0) return undefined;
  const dirty = spawnSync('git', ['-C', dir, 'status', '--porcelain', '--', '.'], { encoding: 'utf8' });
  if (dirty.status !== 0 || dirty.stdout.trim() !== '') return undefined;
  return head.stdout.trim();
}

/** A directory's specs; with `cluster`, that cluster's view when the directory holds a fleet file. */
export function directoryDesiredSource(dir: string, cluster?: string): DesiredSource {
  return revisionSource(async (): Promise<DesiredRevision> => {
    const load =
      cluster === undefined ? await loadFromDirectory(dir) : (await loadMember(directorySource(dir), cluster)).result;
    const head = gitHead(dir);
    if (head) return { commit: head, load };
    const hash = createHash('sha256');
    for (const file of [...load.files].sort()) {
      hash.update(file);
      hash.update('\0');
      hash.update(await readFile(path.join(dir, file)).catch(() => Buffer.alloc(0)));
      hash.update('\0');
    }
    return { commit: `dir-${hash.digest('hex').slice(0, 12)}`, load };
  });
}
