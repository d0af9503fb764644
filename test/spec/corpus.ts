/**
 * Generated corpora: each case is a small repository made from a template, the line of the
 * offending value found in the text the template wrote (never asked of the loader), and what
 * the finding must say. A class's cases come from lists of values, so a rule is tested over its
 * whole table rather than one example.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource } from '../../src/spec/index.js';
import { memorySource, type MemoryEntry } from './support.js';

export interface CorpusCase {
  readonly name: string;
  readonly files: Readonly<Record<string, MemoryEntry>>;
  /** Expected finding; omitted for a case that must load. */
  readonly expect?: { readonly code: string; readonly file: string; readonly line: number; readonly says?: RegExp };
}

/** 1-based line of the first line of `text` holding `marker`. */
export function lineOf(text: string, marker: string): number {
  const i = text.indexOf(marker);
  if (i < 0) throw new Error(`corpus template lost its marker ${JSON.stringify(marker)}`);
  return text.slice(0, i).split(/\r\n?|\n/).length;
}

/** A case whose `file` holds `text`, and the finding expected on the line holding `marker`. */
export function bad(
  name: string,
  file: string,
  text: string,
  marker: string,
  code: string,
  says?: RegExp,
  extra: Record<string, MemoryEntry> = {},
): CorpusCase {
  return {
    name,
    files: { ...extra, [file]: text },
    expect: { code, file, line: lineOf(text, marker), ...(says ? { says } : {}) },
  };
}

export function good(name: string, files: Record<string, MemoryEntry>): CorpusCase {
  return { name, files };
}

function show(errors: readonly { file: string; line: number; code: string; message: string; hint?: string }[]): string {
  return errors.map((e) => `${e.file}:${e.line} ${e.code} ${e.message} | ${e.hint ?? ''}`).join('\n');
}

/** One mocha test per case. */
export function runCorpus(cases: readonly CorpusCase[]): void {
  for (const c of cases) {
    it(
      c.expect ? `${c.name} → ${c.expect.code} at ${c.expect.file}:${c.expect.line}` : `${c.name} → loads`,
      async () => {
        const r = await loadFromSource(memorySource(c.files));
        if (c.expect === undefined) {
          assert.ok(r.ok, r.ok ? '' : show(r.errors));
          return;
        }
        assert.equal(r.ok, false, 'loaded although it must not');
        if (r.ok) return;
        const { code, file, line, says } = c.expect;
        const hit = r.errors.find((e) => e.code === code && e.file === file && e.line === line);
        assert.ok(hit, `no ${code} at ${file}:${line}; got:\n${show(r.errors)}`);
        if (says) assert.match(`${hit.message} | ${hit.hint}`, says);
      },
    );
  }
}

/** A file just under the 1 MiB limit: one document whose spec holds `fields` unknown fields. */
export function fileOfErrors(bytes = 1024 * 1024 - 64): { text: string; fields: number } {
  const head =
    'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: registry.example/node-os:v1\n';
  const parts = [head];
  let size = head.length;
  let fields = 0;
  while (size < bytes - 32) {
    const line = `  field${fields}: ${fields}\n`;
    parts.push(line);
    size += line.length;
    fields++;
  }
  return { text: parts.join(''), fields };
}
