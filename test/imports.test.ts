import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every cycle of imports: static, type-only and dynamic ones alike (each ties two files together). */
function cycles(): string[] {
  const files = sources(SRC);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const specifiers = [
      ...text.matchAll(/^(?:import|export)[^'"]*?from '(\.[^']+)'/gm),
      ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
    ];
    const deps = specifiers.map((m) => path.resolve(path.dirname(f), (m[1] ?? '').replace(/\.js$/, '.ts')));
    graph.set(
      f,
      deps.filter((d) => known.has(d)),
    );
  }
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): void => {
    state.set(n, 'open');
    stack.push(n);
    for (const d of graph.get(n) ?? []) {
      if (state.get(d) === 'open')
        found.add(
          stack
            .slice(stack.indexOf(d))
            .map((x) => path.relative(SRC, x))
            .join(' -> '),
        );
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return [...found];
}

describe('src/ imports', () => {
  it('form no cycles (a command and its implementation share flags through cli/flags.ts)', () => {
    assert.deepEqual(cycles(), []);
  });
});
