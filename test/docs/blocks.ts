/**
 * The docs' fenced blocks, as the tests that run them read them: README.md and every page under
 * docs/, the block holding a marker, a shell block's commands, and placeholders filled in.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Block {
  readonly page: string;
  readonly lang: string;
  readonly text: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

/** README.md and every Markdown page under docs/, repository-relative, sorted. */
export function pages(): string[] {
  const out = ['README.md'];
  const walk = (dir: string): void => {
    for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out.sort();
}

export function readPage(page: string): string {
  return readFileSync(path.join(root, page), 'utf8');
}

/** Every fenced block of `page`. */
export function blocks(page: string): Block[] {
  const text = readPage(page);
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    page,
    lang: m[1] ?? '',
    text: m[2] ?? '',
    line: text.slice(0, m.index).split('\n').length,
  }));
}

/** The one `lang` block of `page` holding `marker`. */
export function block(page: string, marker: string, lang = 'sh'): string {
  const found = blocks(page).filter((b) => b.lang === lang && b.text.includes(marker));
  assert.equal(found.length, 1, `${page} has ${found.length} ${lang} blocks holding ${JSON.stringify(marker)}`);
  return found[0]!.text;
}

/** The commands of a shell block: continuations joined, comments dropped. */
export function commands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.replace(/\s{2,}#.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** The one command of `text` that starts with `start`. */
export function command(text: string, start: string): string {
  const found = commands(text).filter((c) => c.startsWith(start));
  assert.equal(found.length, 1, `block has ${found.length} commands starting ${JSON.stringify(start)}`);
  return found[0]!;
}

/** `line` with each placeholder replaced; a placeholder it does not hold is a docs change to follow. */
export function fill(line: string, values: readonly (readonly [string, string])[]): string {
  let out = line;
  for (const [placeholder, value] of values) {
    assert.ok(out.includes(placeholder), `${JSON.stringify(placeholder)} is no longer in: ${line}`);
    out = out.split(placeholder).join(value);
  }
  return out;
}
