/**
 * Which files are specs: *.yaml and *.yml under the configured paths, minus dot-files,
 * dot-directories and what .drydockignore excludes. Symlinks are never followed — a symlink
 * named like a spec is an error, because the spec it points to would silently not apply (and
 * following it could leave the repository). Bounded in entries, depth and files.
 */
import ignoreModule, { type Ignore } from 'ignore';
import { fileStart, specError, SpecSourceError, type CodedSpecError } from './errors.js';
import type { SourcePosition } from './model.js';
import type { SpecFileSource } from './source.js';

export interface WalkLimits {
  /** Spec files read at most. */
  readonly maxFiles: number;
  /** Directory entries looked at, in total. */
  readonly maxEntries: number;
  /** Directory nesting below the repository root. */
  readonly maxDirDepth: number;
}

export interface WalkRoot {
  /** Canonical repo-relative directory; '.' for the root. */
  readonly path: string;
  /** Where drydock.yaml names it, for "does not exist" errors. */
  readonly declaredAt: SourcePosition;
}

// ignore is CommonJS; its module object is the factory and carries itself as .default.
const ignore = ignoreModule.default;

const SPEC_FILE = /\.ya?ml$/;
const ROOT_CONFIG = new Set(['drydock.yaml', 'drydock.yml']);

export function isSpecFileName(name: string): boolean {
  return SPEC_FILE.test(name);
}

export function drydockIgnore(text: string | undefined): Ignore {
  const ig = ignore();
  if (text !== undefined) ig.add(text);
  return ig;
}

export async function collectSpecFiles(
  source: SpecFileSource,
  roots: readonly WalkRoot[],
  ig: Ignore,
  limits: WalkLimits,
): Promise<{ files: string[]; errors: CodedSpecError[]; warnings: CodedSpecError[] }> {
  const files = new Set<string>();
  const errors: CodedSpecError[] = [];
  const warnings: CodedSpecError[] = [];
  const visited = new Set<string>();
  let entries = 0;

  for (const root of roots) {
    const start = root.path === '.' ? '' : root.path;
    const queue: { dir: string; depth: number }[] = [{ dir: start, depth: start === '' ? 0 : start.split('/').length }];
    let first = true;
    while (queue.length > 0) {
      const { dir, depth } = queue.shift()!;
      if (visited.has(dir)) continue;
      visited.add(dir);
      let list;
      try {
        list = await source.readDir(dir);
      } catch (err) {
        if (!(err instanceof SpecSourceError)) throw err;
        if (first && err.code === 'NotFound' && (await source.existedBefore?.(start)) === true) {
          warnings.push(
            specError(
              'path-emptied',
              root.declaredAt,
              `path ${JSON.stringify(root.path)} holds no files any more (Git keeps no empty folders); it is read as empty`,
              "remove it from drydock.yaml's paths if it is to stay empty",
            ),
          );
        } else if (first && (err.code === 'NotFound' || err.code === 'NotADirectory')) {
          errors.push(
            specError(
              'config',
              root.declaredAt,
              `path ${JSON.stringify(root.path)} ${err.code === 'NotFound' ? 'does not exist' : 'is not a directory'}`,
              "fix or remove it in drydock.yaml's paths",
            ),
          );
        } else {
          errors.push(
            specError(
              'read-failed',
              fileStart(dir || '.'),
              `cannot read directory: ${err.message}`,
              "check the directory's permissions",
            ),
          );
        }
        first = false;
        continue;
      }
      first = false;
      const sorted = [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of sorted) {
        if (++entries > limits.maxEntries) {
          errors.push(
            specError(
              'source-limit',
              fileStart(dir || '.'),
              `more than ${limits.maxEntries} files and directories under the spec paths`,
              "narrow drydock.yaml's paths to the directories that hold specs, or exclude the rest in .drydockignore",
            ),
          );
          return { files: [...files].sort(), errors, warnings };
        }
        if (entry.name.startsWith('.') || entry.name.includes('/')) continue;
        const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
        const isDir = entry.kind === 'dir';
        if (ig.ignores(isDir ? `${rel}/` : rel)) continue;
        if (isDir) {
          if (depth + 1 > limits.maxDirDepth) {
            errors.push(
              specError(
                'source-limit',
                fileStart(rel),
                `directory is nested more than ${limits.maxDirDepth} levels deep`,
                'flatten the layout, or exclude it in .drydockignore',
              ),
            );
            continue;
          }
          queue.push({ dir: rel, depth: depth + 1 });
          continue;
        }
        if (!isSpecFileName(entry.name) || (dir === '' && ROOT_CONFIG.has(entry.name))) continue;
        if (entry.kind === 'symlink') {
          errors.push(
            specError(
              'symlink',
              fileStart(rel),
              'spec file is a symlink; drydock never follows symlinks',
              'replace the link with the file itself, or list it in .drydockignore',
            ),
          );
          continue;
        }
        if (entry.kind !== 'file') continue;
        if (files.has(rel)) continue;
        if (files.size >= limits.maxFiles) {
          errors.push(
            specError(
              'source-limit',
              fileStart(rel),
              `more than ${limits.maxFiles} spec files`,
              "narrow drydock.yaml's paths, or exclude files in .drydockignore",
            ),
          );
          return { files: [...files].sort(), errors, warnings };
        }
        files.add(rel);
      }
    }
  }
  return { files: [...files].sort(), errors, warnings };
}
