/**
 * Hostile input: every case must come back as a located finding — never a crash, a hang or a
 * huge allocation.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource, type SpecError } from '../../src/spec/index.js';
import { IMAGE, memorySource, type MemoryEntry } from './support.js';

const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
  .concat(
    ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map(
      (k, i) =>
        `${k}: &${k} [${Array(9)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(',')}]`,
    ),
  )
  .join('\n');

interface Case {
  readonly name: string;
  readonly files: Readonly<Record<string, MemoryEntry>>;
  readonly expect: readonly [string, string, number, number];
}

const cases: readonly Case[] = [
  { name: 'YAML syntax error', files: { 'a.yaml': 'a: [1, 2\nb: c\n' }, expect: ['yaml-syntax', 'a.yaml', 2, 1] },
  { name: 'tab indentation', files: { 'a.yaml': 'spec:\n\timage: x\n' }, expect: ['yaml-syntax', 'a.yaml', 2, 1] },
  {
    name: 'duplicate key',
    files: { 'a.yaml': IMAGE.replace('  image:', '  image: a\n  image:') },
    expect: ['duplicate-key', 'a.yaml', 7, 3],
  },
  { name: 'alias bomb', files: { 'a.yaml': bomb }, expect: ['alias-limit', 'a.yaml', 2, 8] },
  {
    name: 'deep flow nesting',
    files: { 'a.yaml': 'a: ' + '['.repeat(100_000) + ']'.repeat(100_000) },
    expect: ['too-deep', 'a.yaml', 1, 68],
  },
  {
    name: 'deep block nesting',
    files: { 'a.yaml': Array.from({ length: 100 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x\n' },
    expect: ['too-deep', 'a.yaml', 65, 65],
  },
  {
    name: 'file over the size limit',
    files: { 'a.yaml': 'a: ' + 'x'.repeat(1024 * 1024) },
    expect: ['file-too-large', 'a.yaml', 1, 1],
  },
  {
    name: 'binary file (NUL byte)',
    files: { 'a.yaml': new Uint8Array([0x61, 0x3a, 0x0a, 0x62, 0x00]) },
    expect: ['binary-file', 'a.yaml', 2, 2],
  },
  {
    name: 'not UTF-8 (Latin-1)',
    files: { 'a.yaml': new Uint8Array([...new TextEncoder().encode('a: 1\nreason: caf'), 0xe9, 0x0a]) },
    expect: ['not-utf8', 'a.yaml', 2, 12],
  },
  {
    name: 'UTF-16 with BOM',
    files: { 'a.yaml': new Uint8Array([0xff, 0xfe, 0x61, 0x00]) },
    expect: ['not-utf8', 'a.yaml', 1, 1],
  },
  { name: 'symlinked spec file', files: { 'a.yaml': { symlink: '/etc/passwd' } }, expect: ['symlink', 'a.yaml', 1, 1] },
  {
    name: 'symlinked drydock.yaml',
    files: { 'drydock.yaml': { symlink: '../elsewhere.yaml' } },
    expect: ['symlink', 'drydock.yaml', 1, 1],
  },
  {
    name: 'too many documents',
    files: { 'a.yaml': '---\na: 1\n'.repeat(600) },
    expect: ['too-many-documents', 'a.yaml', 1002, 1],
  },
  { name: 'non-scalar key', files: { 'a.yaml': '? [a, b]\n: c\n' }, expect: ['yaml-syntax', 'a.yaml', 1, 3] },
];

describe('spec loader: hostile input', () => {
  for (const c of cases) {
    it(`${c.name} → a located finding`, async () => {
      const started = Date.now();
      const r = await loadFromSource(memorySource(c.files));
      assert.ok(Date.now() - started < 5000, 'bounded time');
      assert.equal(r.ok, false);
      if (r.ok) return;
      const [code, file, line, column] = c.expect;
      assert.ok(
        r.errors.some((e) => e.code === code && e.file === file && e.line === line && e.column === column),
        `no ${code} at ${file}:${line}:${column}; got:\n${r.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.code} ${e.message}`).join('\n')}`,
      );
    });
  }

  it('a mapping with 50,000 keys is checked for duplicates in linear time', async () => {
    // Ten times the keys must cost about ten times the CPU, not a hundred (a search per key):
    // CPU time of this process, as a ratio within one run, so a loaded machine does not decide.
    const file = (n: number): string => `${Array.from({ length: n }, (_, i) => `k${i}: 1`).join('\n')}\nk7: 2\n`;
    const cpu = async (n: number): Promise<{ us: number; errors: readonly SpecError[] }> => {
      const source = memorySource({ 'a.yaml': file(n) });
      const start = process.cpuUsage();
      const r = await loadFromSource(source);
      const used = process.cpuUsage(start);
      return { us: used.user + used.system, errors: r.ok ? [] : r.errors };
    };
    await cpu(5_000); // warm-up: compile the loader's hot paths before measuring
    const small = Math.min((await cpu(5_000)).us, (await cpu(5_000)).us);
    const large = await cpu(50_000);
    assert.ok(large.us / small < 30, `50,000 keys took ${(large.us / small).toFixed(1)}× the CPU of 5,000`);
    assert.ok(large.errors.some((e) => e.code === 'duplicate-key' && e.line === 50_001 && e.column === 1));
  });

  it('caps the number of errors reported', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++)
      files[`f${String(i).padStart(2, '0')}.yaml`] = Array.from({ length: 50 }, (_, j) => `---\nkind: X${j}\n`).join(
        '',
      );
    const r = await loadFromSource(memorySource(files), { limits: { maxErrors: 100 } });
    assert.ok(!r.ok);
    if (r.ok) return;
    assert.equal(r.errors.length, 101);
    assert.equal(r.errors[100]?.code, 'too-many-errors');
  });

  it('bounds the number of spec files', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`d/f${String(i).padStart(2, '0')}.yaml`] = '';
    const r = await loadFromSource(memorySource(files), { limits: { maxFiles: 10 } });
    assert.ok(!r.ok && r.errors.some((e) => e.code === 'source-limit' && e.file === 'd/f10.yaml'));
  });

  it('bounds directory depth', async () => {
    const deep = Array.from({ length: 40 }, (_, i) => `d${i}`).join('/');
    const r = await loadFromSource(memorySource({ [`${deep}/a.yaml`]: IMAGE }), { limits: { maxDirDepth: 8 } });
    assert.ok(!r.ok && r.errors.some((e) => e.code === 'source-limit' && e.file === 'd0/d1/d2/d3/d4/d5/d6/d7/d8'));
  });

  it('empty files and empty documents are not errors', async () => {
    const r = await loadFromSource(
      memorySource({ 'a.yaml': '', 'b.yaml': '# only a comment\n', 'c.yaml': `---\n---\n${IMAGE}---\n` }),
    );
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.equal(r.desired.nodeImages.length, 1);
  });
});
