/** Test helpers: an in-memory SpecFileSource (as a Git tree would be) and paths of the repo. */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { SpecSourceError, type SpecDirEntry, type SpecFileSource } from '../../src/spec/index.js';

/** The repository root (tests run from dist/test/spec/). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export type MemoryEntry = string | Uint8Array | { readonly symlink: string };

/** A tree given as path → content; directories are implied by paths. */
export function memorySource(tree: Readonly<Record<string, MemoryEntry>>): SpecFileSource & { reads: string[] } {
  const reads: string[] = [];
  const dirs = new Map<string, Map<string, SpecDirEntry>>([['', new Map()]]);
  for (const [file, content] of Object.entries(tree)) {
    const parts = file.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const name = parts[i]!;
      const isLast = i === parts.length - 1;
      if (!dirs.has(dir)) dirs.set(dir, new Map());
      const kind = !isLast ? 'dir' : typeof content === 'object' && 'symlink' in content ? 'symlink' : 'file';
      dirs.get(dir)!.set(name, { name, kind });
      if (!isLast && !dirs.has(parts.slice(0, i + 1).join('/'))) dirs.set(parts.slice(0, i + 1).join('/'), new Map());
    }
  }
  return {
    reads,
    async readDir(dir) {
      const d = dirs.get(dir);
      if (d) return [...d.values()];
      if (dir in tree) throw new SpecSourceError('NotADirectory', `${dir} is not a directory`, { path: dir });
      throw new SpecSourceError('NotFound', `${dir} does not exist`, { path: dir });
    },
    async readFile(file, maxBytes) {
      reads.push(file);
      const c = tree[file];
      if (c === undefined) throw new SpecSourceError('NotFound', `${file} does not exist`, { path: file });
      if (typeof c === 'object' && 'symlink' in c) throw new Error('test source: a symlink was read');
      const bytes = typeof c === 'string' ? new TextEncoder().encode(c) : c;
      return bytes.subarray(0, maxBytes + 1);
    },
  };
}

/** A minimal valid drydock.dev document of `kind` named `name`, with `spec`. */
export function doc(kind: string, name: string, spec: string): string {
  return `apiVersion: drydock.dev/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;
}

export const IMAGE = doc('NodeImage', 'worker', 'image: registry.example/node-os:v1.0.0');
export const GROUP = doc('ScalingGroup', 'workers', 'provider: sim\ngroupId: workers\nnodeImage: worker');
