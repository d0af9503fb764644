/**
 * A generated corpus of hostile repositories, each a valid base repository with one hostile
 * change: every field given a value of the wrong type, look-alike unicode names and kinds,
 * deep nesting, huge strings, arrays and mappings, path tricks (symlinks, paths leaving the
 * repository), conflicting specs, and seeded YAML fuzz. Nothing is committed as a fixture: the
 * cases are made from the base at test time, the same seed giving the same corpus.
 *
 * Each case names the file the refusal must point at and, where the generator knows it from the
 * text it wrote (never from the loader), the line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import { SeededRandom } from '../../src/cloud/sim/random.js';
import { ROOT } from '../spec/support.js';

export type RepoEntry = string | Uint8Array | { readonly symlink: string };
/** Changes over the base: path → new content, or null to delete. */
export type RepoChanges = Readonly<Record<string, RepoEntry | null>>;

export interface HostileCase {
  readonly name: string;
  readonly category: string;
  readonly changes: RepoChanges;
  readonly expect: { readonly file: string; readonly line?: number };
}

type Path = readonly (string | number)[];

/** 1-based line of `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function docsOf(text: string): Document[] {
  return parseAllDocuments(text);
}

function render(docs: readonly Document[]): string {
  return docs.map((d) => d.toString({ lineWidth: 0 })).join('---\n');
}

/** Every node path of a document, parents before children. */
function paths(node: unknown, at: Path = []): Path[] {
  const out: Path[] = [];
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) continue;
      out.push([...at, key], ...paths(pair.value, [...at, key]));
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => out.push([...at, i], ...paths(item, [...at, i])));
  }
  return out;
}

/** Subtrees drydock keeps as written for the API server to validate (batch/v1 JobSpecs). */
const OPAQUE = new Set(['template', 'jobSpec', 'jobTemplate', 'cleanUpJobSpec', 'before', 'after']);

/** Values of a type the node at `path` does not have, as flow collections so they stay on the key's line. */
function wrongValues(node: unknown): unknown[] {
  if (isMap(node)) return [['wrong-type']];
  if (isSeq(node)) return [{ wrong: 'type' }];
  if (isScalar(node)) {
    if (typeof node.value === 'string') return [{ wrong: 'type' }, [1, 2]];
    if (typeof node.value === 'number') return ['wrong-type', { wrong: 'type' }];
    if (typeof node.value === 'boolean') return ['wrong-type', 7];
    return [['wrong-type']];
  }
  return [];
}

/** A new text for `text` with the node at `path` of document `index` replaced, and that node's line. */
function replaced(text: string, index: number, path: Path, value: unknown): { text: string; line: number } {
  const docs = docsOf(text);
  const doc = docs[index]!;
  const node = doc.createNode(value, { flow: true });
  doc.setIn(path, node);
  const out = render(docs);
  const again = docsOf(out)[index]!;
  const at = again.getIn(path, true) as Node | undefined;
  const start = at?.range?.[0];
  if (start === undefined) throw new Error(`corpus: lost ${path.join('.')} after replacing it`);
  return { text: out, line: lineAt(out, start) };
}

function yamlFiles(base: Readonly<Record<string, string>>): string[] {
  return Object.keys(base)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
}

function wrongTypes(base: Readonly<Record<string, string>>): HostileCase[] {
  const out: HostileCase[] = [];
  for (const file of yamlFiles(base)) {
    const text = base[file]!;
    docsOf(text).forEach((doc, index) => {
      for (const path of paths(doc.contents)) {
        if (path.some((p) => typeof p === 'string' && OPAQUE.has(p))) continue;
        for (const value of wrongValues(doc.getIn(path, true))) {
          const r = replaced(text, index, path, value);
          out.push({
            name: `${file}#${index} ${path.join('.')} = ${JSON.stringify(value)}`,
            category: 'wrong type',
            changes: { [file]: r.text },
            expect: { file, line: r.line },
          });
        }
      }
    });
  }
  return out;
}

/** Names that look like a DNS label to a person and are not one. */
const LOOKALIKE_NAMES: readonly [string, (name: string) => string][] = [
  ['Cyrillic a', (n) => (n.includes('a') ? n.replace('a', '\u0430') : `\u0430${n}`)],
  ['Cyrillic o', (n) => `${n}-c\u043ede`],
  ['fullwidth', (n) => `\uff57${n}`],
  ['zero-width space', (n) => `${n.slice(0, 1)}\u200b${n.slice(1)}`],
  ['right-to-left override', (n) => `\u202e${n}`],
  ['combining acute', (n) => `${n}e\u0301`],
  ['dotless i', (n) => `\u0131${n}`],
  ['non-breaking hyphen', (n) => `${n}\u2011x`],
];
const LOOKALIKE_KINDS: readonly string[] = ['Node\u0406mage', 'Sc\u0430lingGroup', 'NodeImage\u200b', 'N\u03bfdeOp'];
const LOOKALIKE_API = ['drydock.dev/v1\u0430lpha1', 'drydock\u2024dev/v1alpha1', '\ufeffdrydock.dev/v1alpha1'];

function lookalikes(base: Readonly<Record<string, string>>): HostileCase[] {
  const out: HostileCase[] = [];
  for (const file of yamlFiles(base)) {
    const text = base[file]!;
    docsOf(text).forEach((doc, index) => {
      const name = doc.getIn(['metadata', 'name']);
      const kind = doc.get('kind');
      const values: [string, Path, string][] = [];
      if (typeof name === 'string')
        for (const [what, f] of LOOKALIKE_NAMES) values.push([what, ['metadata', 'name'], f(name)]);
      if (typeof kind === 'string' && kind !== 'RepoConfig')
        for (const k of LOOKALIKE_KINDS) values.push([`kind ${JSON.stringify(k)}`, ['kind'], k]);
      if (doc.has('apiVersion'))
        for (const a of LOOKALIKE_API) values.push([`apiVersion ${JSON.stringify(a)}`, ['apiVersion'], a]);
      for (const [what, path, value] of values) {
        const r = replaced(text, index, path, value);
        out.push({
          name: `${file}#${index} ${path.join('.')}: ${what}`,
          category: 'look-alike unicode',
          changes: { [file]: r.text },
          expect: { file, line: r.line },
        });
      }
    });
  }
  return out;
}

/** The first spec file (not drydock.yaml) and its first top-level `spec:` line. */
function firstSpec(base: Readonly<Record<string, string>>): { file: string; text: string } {
  const file = yamlFiles(base).find((f) => f !== 'drydock.yaml' && /\nspec:\n/.test(base[f]!));
  if (!file) throw new Error('corpus: the base has no spec file');
  return { file, text: base[file]! };
}

/** A spec file with `extra` appended under its top-level `spec:`, and the line `extra` starts on. */
function withSpecField(text: string, extra: string): { text: string; line: number } {
  const at = text.indexOf('\nspec:\n') + '\nspec:\n'.length;
  return { text: text.slice(0, at) + extra + text.slice(at), line: lineAt(text, at) };
}

function deepAndHuge(base: Readonly<Record<string, string>>, rnd: SeededRandom): HostileCase[] {
  const { file, text } = firstSpec(base);
  const out: HostileCase[] = [];
  const add = (category: string, name: string, extra: string, exactLine = true): void => {
    const r = withSpecField(text, extra);
    out.push({ name, category, changes: { [file]: r.text }, expect: exactLine ? { file, line: r.line } : { file } });
  };
  for (const depth of [65, 100, 1000, 10_000, 100_000, 300_000])
    add('deep nesting', `flow sequences ${depth} deep`, `  x: ${'['.repeat(depth)}${']'.repeat(depth)}\n`, false);
  for (const depth of [65, 66, 100, 200, 400]) {
    const block = Array.from({ length: depth }, (_, i) => `${' '.repeat(2 + 2 * i)}k${i}:\n`).join('');
    add('deep nesting', `block mappings ${depth} deep`, `${block.trimEnd()} x\n`, false);
  }
  for (const depth of [70, 500, 5000])
    add('deep nesting', `flow mappings ${depth} deep`, `  x: ${'{a: '.repeat(depth)}1${'}'.repeat(depth)}\n`, false);
  for (const size of [3000, 100_000, 900_000])
    add('huge string', `an image ${size} characters long`, `  image: ${'a'.repeat(size)}\n`);
  for (const size of [1_100_000, 4_000_000])
    add('huge string', `a file over 1 MiB (${size} characters)`, `  note: ${'x'.repeat(size)}\n`, false);
  for (const count of [1000, 100_000, 300_000])
    add('huge array', `an array of ${count} items in a string field`, `  image: [${'1,'.repeat(count)}1]\n`);
  for (const count of [5000, 50_000])
    add(
      'huge array',
      `a selector with ${count} keys`,
      `  nodeSelector:\n${Array.from({ length: count }, (_, i) => `    k${i}: v\n`).join('')}`,
    );
  for (const count of [501, 2000]) {
    const docs = `${text}${'---\nnot: a spec\n'.repeat(count)}`;
    out.push({
      name: `${count + 1} documents in one file`,
      category: 'huge array',
      changes: { [file]: docs },
      expect: { file },
    });
  }
  // A random size between the limits, so the run explores more than the round numbers.
  const n = 2000 + Math.floor(rnd.next() * 60_000);
  add('huge array', `an array of ${n} strings in a scalar field`, `  strategy: [${'"x",'.repeat(n)}"x"]\n`);
  return out;
}

function pathTricks(base: Readonly<Record<string, string>>): HostileCase[] {
  const { file, text } = firstSpec(base);
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
  const inDir = (name: string): string => (dir ? `${dir}/${name}` : name);
  const out: HostileCase[] = [];
  for (const target of ['/etc/passwd', '../../../etc/shadow', '../drydock.yaml', file, '/proc/self/environ'])
    out.push({
      name: `a spec file that is a symlink to ${target}`,
      category: 'path tricks',
      changes: { [inDir('link.yaml')]: { symlink: target } },
      expect: { file: inDir('link.yaml'), line: 1 },
    });
  out.push({
    name: 'drydock.yaml replaced by a symlink',
    category: 'path tricks',
    changes: { 'drydock.yaml': { symlink: '/etc/hostname' } },
    expect: { file: 'drydock.yaml', line: 1 },
  });
  const config = base['drydock.yaml'];
  if (config !== undefined) {
    const docs = docsOf(config);
    const first = docs[0];
    const readPaths = first?.get('paths');
    if (first && isSeq(readPaths)) {
      for (const p of [
        '../outside',
        '/etc',
        `${dir || 'x'}/../../..`,
        '..',
        '~/specs',
        'a\u0000b',
        '\\\\server\\share',
      ]) {
        const r = replaced(config, 0, ['paths', 0], p);
        out.push({
          name: `drydock.yaml paths entry ${JSON.stringify(p)}`,
          category: 'path tricks',
          changes: { 'drydock.yaml': r.text },
          expect: { file: 'drydock.yaml', line: r.line },
        });
      }
    }
  }
  // A file name that looks like an existing one, holding the same spec: a conflict.
  const twin = inDir(file.slice(file.lastIndexOf('/') + 1).replace(/o/, '\u043e'));
  if (twin !== file)
    out.push({
      name: `a look-alike file name ${JSON.stringify(twin)} holding the same spec`,
      category: 'path tricks',
      changes: { [twin]: text },
      expect: { file: [file, twin].sort()[1]! },
    });
  return out;
}

function conflicts(base: Readonly<Record<string, string>>): HostileCase[] {
  const out: HostileCase[] = [];
  for (const file of yamlFiles(base)) {
    if (file === 'drydock.yaml') continue;
    const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : '';
    const copy = `${dir}zz-copy-of-${file.slice(dir.length)}`;
    out.push({
      name: `${file} defined twice (${copy})`,
      category: 'conflicting specs',
      changes: { [copy]: base[file]! },
      expect: { file: copy },
    });
    out.push({
      name: `${file} twice in one file`,
      category: 'conflicting specs',
      changes: { [file]: `${base[file]!}---\n${base[file]!}` },
      expect: { file },
    });
  }
  return out;
}

/** Fragments that break YAML wherever they start a line. */
const BREAKERS = [
  '\tkey: tab-indented',
  "key: 'unterminated",
  'key: "unterminated',
  'key: [unclosed',
  'key: {unclosed: 1',
  '}',
  ']',
  'key: *undefined-alias',
  'key: &a [*a]',
  '? [complex, key]\n: value',
  '%YAML 9.9',
  'key: !!binary not-base64!!',
  'key: value\nkey: again',
  '- a list\nkey: where a mapping was',
  'key: |\n bad\n  indentation\n',
];
const SOUP = [
  '[',
  ']',
  '{',
  '}',
  ':',
  ': ',
  '- ',
  '&a ',
  '*a',
  '!!str ',
  '|',
  '>',
  '"',
  "'",
  '#',
  '\t',
  '\n',
  '  ',
  '?',
  '%',
  '@',
  '`',
  ',',
  'k',
  'apiVersion',
  'kind',
  '\u0430',
  '\u202e',
  '\u0000',
  'ü',
  '0x',
  '1e999',
  '~',
  'null',
];

function fuzz(base: Readonly<Record<string, string>>, rnd: SeededRandom, count: number): HostileCase[] {
  const files = yamlFiles(base);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd.next() * xs.length)]!;
  const out: HostileCase[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      const file = pick(files);
      const lines = base[file]!.split('\n');
      const at = Math.floor(rnd.next() * lines.length);
      const breaker = pick(BREAKERS);
      lines.splice(at, 0, breaker);
      out.push({
        name: `${file}: ${JSON.stringify(breaker)} inserted at line ${at + 1}`,
        category: 'fuzzed YAML',
        changes: { [file]: lines.join('\n') },
        expect: { file },
      });
    } else {
      const length = 1 + Math.floor(rnd.next() * 200);
      // Starts with a plain word, so the file is never empty or a lone comment (both valid).
      let soup = 'x';
      for (let j = 0; j < length; j++) soup += pick(SOUP);
      const file = `${files.find((f) => f.includes('/'))?.split('/')[0] ?? 'specs'}/fuzz-${i}.yaml`;
      out.push({
        name: `token soup ${i} (${soup.length} characters)`,
        category: 'fuzzed YAML',
        changes: { [file]: soup },
        expect: { file },
      });
    }
  }
  return out;
}

/** The whole corpus over `base` (a valid repository), at least `minimum` cases. */
export function hostileCorpus(base: Readonly<Record<string, string>>, seed = 1, minimum = 500): HostileCase[] {
  const rnd = new SeededRandom(seed);
  const fixed = [
    ...wrongTypes(base),
    ...lookalikes(base),
    ...deepAndHuge(base, rnd),
    ...pathTricks(base),
    ...conflicts(base),
  ];
  return [...fixed, ...fuzz(base, rnd, Math.max(100, minimum - fixed.length))];
}

/** `count` cases of `corpus`, chosen by `seed`, keeping every category represented. */
export function seededSubset(corpus: readonly HostileCase[], count: number, seed: number): HostileCase[] {
  const rnd = new SeededRandom(seed);
  const byCategory = new Map<string, HostileCase[]>();
  for (const c of corpus) byCategory.set(c.category, [...(byCategory.get(c.category) ?? []), c]);
  const out: HostileCase[] = [];
  const pools = [...byCategory.values()].map((cs) => [...cs]);
  while (out.length < count && pools.some((p) => p.length > 0)) {
    for (const pool of pools) {
      if (pool.length === 0 || out.length >= count) continue;
      out.push(pool.splice(Math.floor(rnd.next() * pool.length), 1)[0]!);
    }
  }
  return out;
}

/** examples-repo/'s YAML files, path → text; templates/ holds files to copy, not specs drydock reads. */
export function examplesRepo(): Record<string, string> {
  const dir = path.join(ROOT, 'examples-repo');
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
    const abs = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dir, abs).split(path.sep).join('/');
    if (rel.split('/').some((p) => p.startsWith('.')) || rel.startsWith('templates/')) continue;
    out[rel] = readFileSync(abs, 'utf8');
  }
  return out;
}
