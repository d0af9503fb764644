/**
 * A DesiredSource over a local directory (a checkout, or a directory a sidecar keeps in sync).
 * Its "commit" is the Git HEAD when the directory is a Git work tree with no local changes,
 * otherwise a content hash of the loaded files, so a change is always noticed.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileStart, specError } from '../spec/errors.js';
import { FLEET_FILE, loadFleet } from '../spec/fleet.js';
import { loadFromDirectory } from '../spec/load.js';
import { loadMember } from '../spec/fleet-load.js';
import type { LoadResult } from '../spec/model.js';
import { directorySource } from '../spec/source.js';
import { revisionSource, type DesiredRevision, type DesiredSource } from './desired.js';

function gitHead(dir: string): string | undefined {
  const head = spawnSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  if (head.status !== 0) return undefined;
  const dirty = spawnSync('git', ['-C', dir, 'status', '--porcelain', '--', '.'], { encoding: 'utf8' });
  if (dirty.status !== 0 || dirty.stdout.trim() !== '') return undefined;
  return head.stdout.trim();
}

/**
 * A fleet's stages wait on the other clusters' status branches, which a directory has none of:
 * `drydock run` over a directory holding a fleet file refuses every revision rather than
 * rolling every stage at once. (`drydock plan` and `validate` read a directory fleet.)
 */
async function refuseFleet(dir: string): Promise<LoadResult | undefined> {
  if ((await loadFleet(directorySource(dir))) === undefined) return undefined;
  const error = specError(
    'config',
    fileStart(FLEET_FILE),
    "a fleet is not run from a directory: its stages wait on the other clusters' status branches, which only a Git repository has",
    "give `drydock run` the fleet repository's Git URL as --repo, with --cluster naming this cluster",
  );
  return { ok: false, errors: [error], files: [FLEET_FILE] };
}

/**
 * A directory's specs; with `cluster`, that cluster's view when the directory holds a fleet file.
 * With `run`, for the service: a directory holding a fleet file is refused (refuseFleet).
 */
export function directoryDesiredSource(dir: string, cluster?: string, run = false): DesiredSource {
  return revisionSource(async (): Promise<DesiredRevision> => {
    const refused = run ? await refuseFleet(dir) : undefined;
    const load =
      refused ??
      (cluster === undefined ? await loadFromDirectory(dir) : (await loadMember(directorySource(dir), cluster)).result);
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
