/**
 * YAML that would load as something else, messages that must say what is wrong, and errors that
 * must not mislead: unknown tags, CR line endings, control characters, undefined aliases, a kind
 * that is not a string, look-alike field names, references to documents that are invalid, and a
 * file of many errors that must validate fast with a capped, counted report.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource } from '../../src/spec/index.js';
import { controls, endings, messages, tags } from './cases-yaml.js';
import { fileOfErrors, lineOf, runCorpus } from './corpus.js';
import { doc, GROUP, IMAGE, memorySource } from './support.js';

describe('spec corpus: YAML tags', () => runCorpus(tags));
describe('spec corpus: line endings', () => runCorpus(endings));
describe('spec corpus: control characters', () => runCorpus(controls));
describe('spec corpus: messages that say what is wrong', () => runCorpus(messages));

describe('spec loader: references to invalid documents', () => {
  it('a ScalingGroup naming an invalid NodeImage reports the NodeImage, not a dangling reference', async () => {
    const image = IMAGE + '  strategey: replace # here\n';
    const r = await loadFromSource(
      memorySource({
        'i.yaml': image,
        'g.yaml': GROUP,
        'h.yaml': GROUP.replace('name: workers', 'name: others').replace('groupId: workers', 'groupId: others'),
      }),
    );
    assert.ok(!r.ok);
    if (r.ok) return;
    assert.deepEqual(
      r.errors.map((e) => `${e.file}:${e.line} ${e.code}`),
      [`i.yaml:${lineOf(image, '# here')} schema`],
    );
  });

  it('a reference to a document that does not exist is still dangling', async () => {
    const group = GROUP.replace('nodeImage: worker', 'nodeImage: wroker # here');
    const r = await loadFromSource(memorySource({ 'i.yaml': IMAGE + '  strategey: replace\n', 'g.yaml': group }));
    assert.ok(
      !r.ok &&
        r.errors.some(
          (e) => e.code === 'dangling-reference' && e.file === 'g.yaml' && e.line === lineOf(group, '# here'),
        ),
    );
  });

  it('an Approval of an invalid NodeImage and a window named by an invalid MaintenanceWindow are not dangling', async () => {
    const approval = doc(
      'Approval',
      'ok',
      'target: {kind: NodeImage, name: worker}\nimage: registry.example/node-os:v1.0.0\nstage: start',
    );
    const window = doc('MaintenanceWindow', 'nights', 'timeZone: UTC\nschedules: []');
    const image =
      IMAGE.replace('image: registry.example/node-os:v1.0.0', 'image: 42') + '  rollout:\n    window: nights\n';
    const r = await loadFromSource(memorySource({ 'a.yaml': approval, 'i.yaml': image, 'w.yaml': window }));
    assert.ok(!r.ok);
    if (r.ok) return;
    assert.deepEqual(r.errors.map((e) => e.code).sort(), ['schema', 'schema']);
  });
});

describe('spec loader: a 1 MiB file of errors', () => {
  it('validates in linear time and reports the first 100 findings with a count of the rest', async function () {
    this.timeout(60_000);
    const { text, fields } = fileOfErrors();
    assert.ok(text.length < 1024 * 1024 && fields > 50_000);
    const started = Date.now();
    const r = await loadFromSource(memorySource({ 'big.yaml': text }));
    const ms = Date.now() - started;
    // 49 s when every finding searched its mapping; a shared 2-core machine takes 1-3 s.
    assert.ok(ms < 15_000, `took ${ms} ms`);
    assert.ok(!r.ok);
    if (r.ok) return;
    assert.equal(r.errors.length, 101);
    assert.deepEqual(
      r.errors.slice(0, 3).map((e) => `${e.line} ${e.message}`),
      ['7 unknown field "field0" in spec', '8 unknown field "field1" in spec', '9 unknown field "field2" in spec'],
    );
    const last = r.errors[100]!;
    assert.equal(last.code, 'too-many-errors');
    assert.equal(last.message, `${fields - 100} more errors in big.yaml not shown`);
  });

  it('caps each file on its own and counts every file', async () => {
    const many = (n: number): string => IMAGE + Array.from({ length: n }, (_, i) => `  f${i}: 1\n`).join('');
    const r = await loadFromSource(memorySource({ 'a.yaml': many(150), 'b.yaml': many(3), 'c.yaml': many(101) }), {
      limits: { maxErrorsPerFile: 100 },
    });
    assert.ok(!r.ok);
    if (r.ok) return;
    const count = (f: string): number => r.errors.filter((e) => e.file === f && e.code === 'schema').length;
    assert.deepEqual([count('a.yaml'), count('b.yaml'), count('c.yaml')], [100, 3, 100]);
    assert.deepEqual(
      r.errors.filter((e) => e.code === 'too-many-errors').map((e) => e.message),
      ['50 more errors in a.yaml not shown', '1 more error in c.yaml not shown'],
    );
  });
});
