/**
 * The fast path (js-yaml) against the full path (`yaml`): for every file the fast path answers,
 * both give the same findings, the same documents with the same data, and the same line:column
 * for every node and every key, and for paths that do not exist; for anything else the fast
 * path must decline. Over the generated corpora of the loader's tests, the hostile corpus,
 * the 1 MiB file of errors, and YAML generated here in every style (and then broken).
 */
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { DEFAULT_LIMITS } from '../../src/spec/index.js';
import { parseFast } from '../../src/spec/parse-fast.js';
import { parseWithYaml } from '../../src/spec/parse-yaml.js';
import { prepareText } from '../../src/spec/parse.js';
import type { ParsedFile, PathSegment } from '../../src/spec/parsed.js';
import { examplesRepo, hostileCorpus, seededSubset } from '../reliability/hostile-corpus.js';
import * as kubernetes from './cases-kubernetes.js';
import * as yamlCases from './cases-yaml.js';
import { fileOfErrors, type CorpusCase } from './corpus.js';

const LIMITS = DEFAULT_LIMITS;

/** Every path into `value` (each mapping key and sequence index), up to `max`. */
function pathsOf(value: unknown, max = 200_000): PathSegment[][] {
  const out: PathSegment[][] = [[]];
  const stack: { v: unknown; p: PathSegment[] }[] = [{ v: value, p: [] }];
  while (stack.length > 0 && out.length < max) {
    const { v, p } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const entries: [PathSegment, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (const [k, child] of entries) {
      out.push([...p, k]);
      stack.push({ v: child, p: [...p, k] });
    }
  }
  return out;
}

const summary = (r: ParsedFile): string[] =>
  r.errors.map((e) => `${e.line}:${e.column} ${e.code} ${e.message} | ${e.hint ?? ''}`);

type Reading = 'fast' | 'full' | 'refused';

/** How `raw` was read; asserts that a fast reading is the full path's reading. */
function sameReading(raw: string): Reading {
  const text = prepareText('f.yaml', raw, LIMITS);
  if (typeof text !== 'string') return 'refused';
  const fast = parseFast('f.yaml', text, LIMITS);
  if (fast === undefined) return 'full';
  const full = parseWithYaml('f.yaml', text, LIMITS);
  const show = `\n--- text:\n${text}`;
  assert.deepEqual(summary(fast), summary(full), `findings differ${show}`);
  assert.equal(fast.documents.length, full.documents.length, `documents differ${show}`);
  fast.documents.forEach((f, i) => {
    const y = full.documents[i]!;
    assert.equal(f.index, y.index, `document index differs${show}`);
    assert.deepEqual(f.start, y.start, `document start differs${show}`);
    assert.deepStrictEqual(f.value, y.value, `data differs${show}`);
    const at = (d: typeof f, p: PathSegment[], key: boolean): string => {
      const { file, line, column } = d.locate(p, key);
      return `${file}:${line}:${column}`;
    };
    for (const path of pathsOf(y.value)) {
      for (const p of [path, [...path, 'no-such-key'], [...path, 999]])
        for (const key of [false, true])
          if (at(f, p, key) !== at(y, p, key))
            assert.equal(at(f, p, key), at(y, p, key), `${JSON.stringify(p)} key=${key} differs${show}`);
    }
  });
  return 'fast';
}

function tally(texts: Iterable<string>): Record<Reading, number> {
  const n: Record<Reading, number> = { fast: 0, full: 0, refused: 0 };
  for (const t of texts) n[sameReading(t)]++;
  return n;
}

function* caseTexts(cases: readonly CorpusCase[]): Generator<string> {
  for (const c of cases) for (const f of Object.values(c.files)) if (typeof f === 'string') yield f;
}

// ---- generated YAML: values printed in every style, then broken at random ----

const SCALARS = [
  ...['', 'x', 'a b', 'true', 'True', 'TRUE', 'yes', 'no', 'on', 'null', 'Null', '~', 'NULL'],
  ...['0', '-0', '+12', '017', '0o17', '0x1f', '0X1F', '0b101', '1_000', '1.5', '1.', '.5', '1e3', '1.5E-3'],
  ...['.inf', '-.Inf', '+.INF', '.nan', '.NaN', '2001-12-14', '12:30:00', '<<', '=', 'ü', 'a #b', 'a#b'],
  ...['#c', '- x', '[x]', '{a}', '@x', '`x', '%x', '*x', '&x', '!x', '? x', ': x', 'a: b', "it's", '"q"'],
  ...['-', ':', '?', '---', '...', ' lead', 'trail ', 'two\nlines', 'a\n\nb', 'x,y', '|', '>', 'é\u00a0x'],
];
const KEYS = ['a', 'b', 'spec', 'kind', 'true', '1', '0x10', '1.0', 'null', '~', 'a b', 'é', '<<', '-k', 'k:'];

type Tree = string | { map: [string, Tree][] } | { seq: Tree[] };

const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...SCALARS),
    fc.record({ map: fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('node')), { maxLength: 4 }) }),
    fc.record({ seq: fc.array(tie('node'), { maxLength: 3 }) }),
  ),
})).node;

interface Style {
  readonly indent: number;
  readonly pick: (n: number) => number;
}

function scalar(s: string, style: Style, pad: string): string {
  switch (style.pick(6)) {
    case 0:
      return `'${s.replace(/'/g, "''")}'`;
    case 1:
      return JSON.stringify(s);
    case 2:
      return `${['|', '|-', '|+', '>', '>-'][style.pick(5)]}\n${s
        .split('\n')
        .map((l) => pad + ' '.repeat(style.indent) + l)
        .join('\n')}`;
    default:
      return s;
  }
}

function flow(t: Tree, style: Style): string {
  if (typeof t === 'string') return style.pick(2) === 0 ? JSON.stringify(t) : t;
  if ('seq' in t) return `[${t.seq.map((x) => flow(x, style)).join(', ')}]`;
  return `{${t.map.map(([k, v]) => `${k}: ${flow(v, style)}`).join(', ')}}`;
}

const comment = (style: Style): string => ['', '', ' # note', '  #', '\n'][style.pick(5)]!;

/** `t` as the value after "key:" or "-" at indentation `pad`. */
function block(t: Tree, style: Style, pad: string): string {
  if (typeof t === 'string') return ` ${scalar(t, style, pad)}${comment(style)}`;
  const items = 'seq' in t ? t.seq : t.map;
  if (items.length === 0 || style.pick(5) === 0) return ` ${flow(t, style)}${comment(style)}`;
  const inner = pad + ' '.repeat(style.indent);
  // A sequence under a key may sit at the key's own indentation, as YAML allows.
  const seqPad = style.pick(2) === 0 ? pad : inner;
  const lines =
    'seq' in t
      ? t.seq.map((x) => `${seqPad}-${block(x, style, seqPad + ' ')}`)
      : t.map.map(([k, v]) => `${inner}${k}:${block(v, style, inner)}`);
  return `${comment(style)}\n${lines.join('\n')}`;
}

function documentText(t: Tree, style: Style): string {
  if (typeof t === 'string' || 'seq' in t) return `v:${block(t, style, '')}\n`;
  return t.map.map(([k, v]) => `${k}:${block(v, style, '')}\n`).join('');
}

const FRAGMENTS = [
  ' ',
  '\n',
  ':',
  ': ',
  '- ',
  '#',
  '[',
  ']',
  '{',
  '}',
  ',',
  '"',
  "'",
  '|',
  '&a ',
  '*a',
  '!t ',
  '---\n',
];

const generated = fc
  .record({
    docs: fc.array(tree, { minLength: 1, maxLength: 3 }),
    indent: fc.integer({ min: 1, max: 4 }),
    choices: fc.array(fc.nat(), { minLength: 64, maxLength: 64 }),
    breaks: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...FRAGMENTS)), { maxLength: 2 }),
  })
  .map(({ docs, indent, choices, breaks }) => {
    let c = 0;
    const style: Style = { indent, pick: (n) => choices[c++ % choices.length]! % n };
    let text = docs.map((d, i) => (i > 0 || style.pick(3) === 0 ? '---\n' : '') + documentText(d, style)).join('');
    for (const [at, frag] of breaks) {
      const i = at % (text.length + 1);
      text = text.slice(0, i) + frag + text.slice(i);
    }
    return text;
  });

describe('spec parser: the fast path reads as the full path does, or declines', function () {
  this.timeout(300_000);

  it("the loader tests' generated corpora (YAML and Kubernetes classes)", () => {
    const all = [...Object.values(yamlCases), ...Object.values(kubernetes)].flat();
    const n = tally(caseTexts(all));
    // The corpora are mostly plain YAML: the fast path must take most of them, not decline all.
    assert.ok(n.fast > n.full, JSON.stringify(n));
  });

  it('120 seeded cases of the hostile corpus, and examples-repo/', () => {
    const base = examplesRepo();
    const texts = new Set(Object.values(base));
    // 120 of the 500+ cases keep this test short; DRYDOCK_HOSTILE_SEED picks another 120.
    const seed = Number(process.env['DRYDOCK_HOSTILE_SEED'] ?? 1);
    for (const c of seededSubset(hostileCorpus(base), 120, seed))
      for (const t of Object.values(c.changes)) if (typeof t === 'string') texts.add(t);
    const n = tally(texts);
    assert.ok(n.fast > 0 && n.full > 0, JSON.stringify(n));
  });

  it('the 1 MiB file of errors takes the fast path', () => {
    assert.equal(sameReading(fileOfErrors().text), 'fast');
  });

  it('generated documents in every style, and broken ones', () => {
    const n: Record<Reading, number> = { fast: 0, full: 0, refused: 0 };
    fc.assert(
      fc.property(generated, (text) => {
        n[sameReading(text)]++;
      }),
      {
        numRuns: Number(process.env['DRYDOCK_FUZZ_RUNS'] ?? 3000),
        seed: Number(process.env['DRYDOCK_FUZZ_SEED'] ?? 17),
      },
    );
    assert.ok(n.fast > n.full / 4, JSON.stringify(n));
  });
});
