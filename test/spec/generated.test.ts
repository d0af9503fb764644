/**
 * One source of truth: the committed TypeScript types in src/spec/generated/ must be exactly
 * what `npm run generate:types` makes from schemas/ now.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './support.js';

const OUT = 'src/spec/generated/';

function schemaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? schemaFiles(path.join(dir, e.name)) : e.name.endsWith('.schema.json') ? [e.name] : [],
  );
}

describe('generated types', () => {
  it('match a fresh generation from schemas/', function () {
    this.timeout(60_000);
    const script = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts['generate:types'];
    if (script === undefined || !script.includes(`-o ${OUT}`)) throw new Error(`generate:types must write to ${OUT}`);
    const tmp = mkdtempSync(path.join(tmpdir(), 'drydock-types-'));
    try {
      const r = spawnSync('sh', ['-c', script.replace(`-o ${OUT}`, `-o ${tmp}/`)], {
        cwd: ROOT,
        encoding: 'utf8',
        env: {
          ...process.env,
          PATH: `${path.join(ROOT, 'node_modules/.bin')}${path.delimiter}${process.env['PATH'] ?? ''}`,
        },
      });
      assert.equal(r.status, 0, r.stderr);
      const fresh = readdirSync(tmp).sort();
      const committed = readdirSync(path.join(ROOT, OUT)).sort();
      assert.deepEqual(committed, fresh, 'run npm run generate:types and commit the result');
      assert.equal(
        fresh.length,
        schemaFiles(path.join(ROOT, 'schemas')).length,
        'two schemas map to one generated file: give them distinct names',
      );
      for (const f of fresh) {
        assert.equal(
          readFileSync(path.join(ROOT, OUT, f), 'utf8'),
          readFileSync(path.join(tmp, f), 'utf8'),
          `${OUT}${f} differs from schemas/: run npm run generate:types`,
        );
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('declare each type once: the shared definitions live in common.schema.d.ts only', () => {
    const declaredIn = new Map<string, string[]>();
    for (const f of readdirSync(path.join(ROOT, OUT))) {
      for (const m of readFileSync(path.join(ROOT, OUT, f), 'utf8').matchAll(/^export (?:type|interface) (\w+)/gm)) {
        const name = m[1] ?? '';
        declaredIn.set(name, [...(declaredIn.get(name) ?? []), f]);
      }
    }
    const repeated = [...declaredIn].filter(([name, files]) => files.length > 1 || /\D\d+$/.test(name));
    assert.deepEqual(repeated, [], 'a type declared twice (or numbered, like DrainSpec1) means a $ref was inlined');
  });

  it('every schema property has a description', () => {
    const missing: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if (typeof n['properties'] === 'object' && n['properties'] !== null) {
        for (const [k, v] of Object.entries(n['properties'] as Record<string, unknown>)) {
          if (typeof (v as Record<string, unknown>)['description'] !== 'string') missing.push(`${where}.${k}`);
        }
      }
      for (const [k, v] of Object.entries(n)) walk(v, `${where}/${k}`);
    };
    const all = (dir: string, rel = ''): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? all(path.join(dir, e.name), `${rel}${e.name}/`)
          : e.name.endsWith('.schema.json')
            ? [`${rel}${e.name}`]
            : [],
      );
    for (const f of all(path.join(ROOT, 'schemas')))
      walk(JSON.parse(readFileSync(path.join(ROOT, 'schemas', f), 'utf8')), f);
    assert.deepEqual(missing, []);
  });
});
