/**
 * YAML that would load as something else, messages that must say what is wrong, and errors that
 * must not mislead: unknown tags, CR line endings, control characters, undefined aliases, a kind
 * that is not a string, look-alike field names, references to documents that are invalid, and a
 * file of many errors that must validate fast with a capped, counted report.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource } from '../../src/spec/index.js';
import { bad, fileOfErrors, good, lineOf, runCorpus, type CorpusCase } from './corpus.js';
import { doc, GROUP, IMAGE, memorySource } from './support.js';

const TAGS = [
  '!Ref',
  '!!python/object/apply:os.system',
  '!!binary',
  '!!set',
  '!!timestamp',
  '!!omap',
  '!custom',
  '!<tag:example.com,2000:x>',
  '!GetAtt',
];
const tags: CorpusCase[] = [
  ...TAGS.map((t) =>
    bad(
      `tag ${t} on a value`,
      'i.yaml',
      IMAGE + `  rollout:\n    window: ${t} nights # here\n`,
      '# here',
      'unknown-tag',
      /unknown tag/,
    ),
  ),
  ...TAGS.map((t) =>
    bad(
      `tag ${t} on a mapping`,
      'i.yaml',
      IMAGE + `  rollout: ${t} # here\n    window: nights\n`,
      '# here',
      'unknown-tag',
    ),
  ),
  good('!!map on a mapping', { 'i.yaml': IMAGE.replace('spec:', 'spec: !!map') }),
  good('!!seq on a list', { 'op.yaml': doc('NodeOp', 'op', 'command: !!seq [x]') }),
  good('!!bool on values', {
    'op.yaml': doc('NodeOp', 'op', 'command: [x]\ncordon: !!bool true\nrebootOnSuccess: !!bool false'),
  }),
  good('!!str on a value', { 'i.yaml': IMAGE.replace('image: ', 'image: !!str ') }),
  good('!!int on a count', { 'i.yaml': IMAGE + '  rollout:\n    concurrency: !!int "2"\n' }),
  bad('%YAML 1.1 directive', 'i.yaml', '%YAML 1.1 # here\n---\n' + IMAGE, '# here', 'yaml-syntax', /YAML 1\.1/),
];

/** The same document with every line break written as `eol`, and a mistake on a known line. */
const endings: CorpusCase[] = (['\r', '\r\n', '\n'] as const).flatMap((eol) => {
  const name = JSON.stringify(eol);
  const lines = IMAGE.trimEnd().split('\n');
  return [
    bad(
      `${name} line endings: unknown field`,
      'i.yaml',
      [...lines, '  strategey: replace # here', ''].join(eol),
      '# here',
      'schema',
      /strategy/,
    ),
    bad(
      `${name} line endings: duplicate key`,
      'i.yaml',
      [...lines, '  image: again # here', ''].join(eol),
      '# here',
      'duplicate-key',
    ),
    bad(
      `${name} line endings: syntax error`,
      'i.yaml',
      [...lines, '  rollout: [1, 2', 'x: y # here', ''].join(eol),
      '# here',
      'yaml-syntax',
    ),
    good(`${name} line endings: valid`, { 'i.yaml': [...lines, ''].join(eol) }),
    bad(
      `${name} line endings: NUL byte`,
      'i.yaml',
      [...lines, '  reason: a\u0000b # here', ''].join(eol),
      '# here',
      'binary-file',
    ),
    bad(
      `${name} line endings: control character`,
      'i.yaml',
      [...lines, '  reason: a\u001bb # here', ''].join(eol),
      '# here',
      'control-character',
    ),
  ];
});

const CONTROLS = [
  '\u001b',
  '\u0007',
  '\u0000'.replace('\u0000', '\u0008'),
  '\u007f',
  '\u0085'.replace('\u0085', '\u009b'),
  '\u000b',
  '\u000c',
  '\ufffe',
];
const controls: CorpusCase[] = [
  ...CONTROLS.map((c) =>
    bad(
      `raw U+${c.charCodeAt(0).toString(16).padStart(4, '0')} in a value`,
      'i.yaml',
      IMAGE.replace('image: registry', `image: reg${c}istry`) + '# here\n',
      'reg',
      'control-character',
      /control character U\+/,
    ),
  ),
  ...['\\e[31m', '\\x1b]0;title\\x07', '\\u009b2J', '\\r', '\\x7f', '\\0'].map((esc) =>
    bad(
      `escape ${esc} in a quoted value`,
      'w.yaml',
      doc('NodeMaintenance', 'm', `nodeName: n1\nreason: "fixing ${esc} now" # here`),
      '# here',
      'control-character',
      /U\+/,
    ),
  ),
  bad('escape in a key', 'i.yaml', IMAGE + '  "x\\e": 1 # here\n', '# here', 'control-character'),
  good('tab and newline in values are text', {
    'm.yaml': doc('NodeMaintenance', 'm', 'nodeName: n1\nreason: "a\\tb\\nc"'),
  }),
  good('NEL, non-breaking space and emoji are printable', {
    'm.yaml': doc('NodeMaintenance', 'm', 'nodeName: n1\nreason: "caf\u00e9\u00a0\u{1f527}"'),
  }),
];

const messages: CorpusCase[] = [
  bad(
    'undefined alias',
    'i.yaml',
    IMAGE + '  rollout:\n    window: *nights # here\n',
    '# here',
    'undefined-alias',
    /\*nights has no anchor/,
  ),
  bad(
    'alias before its anchor',
    'i.yaml',
    IMAGE + '  rollout:\n    window: *w # here\n    order: &w byName\n',
    '# here',
    'undefined-alias',
  ),
  good('alias after its anchor', {
    'i.yaml': IMAGE.replace('image: ', 'image: &img ') + '  rollout:\n    window: nights\n',
    'w.yaml': doc('MaintenanceWindow', 'nights', "timeZone: UTC\nschedules:\n- cron: '0 1 * * *'\n  duration: 1h"),
  }),
  ...[
    ['[NodeImage]', /kind must be a string, not a list/],
    ['{a: b}', /kind must be a string, not a mapping/],
    ['42', /kind must be a string, not the number 42/],
    ['true', /not the boolean/],
  ].map(([v, says]) =>
    bad(
      `kind: ${String(v)}`,
      'i.yaml',
      IMAGE.replace('kind: NodeImage', `kind: ${String(v)} # here`),
      '# here',
      'missing-kind',
      says as RegExp,
    ),
  ),
  bad(
    'apiVersion: [drydock.dev/v1alpha1]',
    'i.yaml',
    IMAGE.replace('apiVersion: drydock.dev/v1alpha1', 'apiVersion: [drydock.dev/v1alpha1] # here'),
    '# here',
    'missing-kind',
    /apiVersion must be a string/,
  ),
  ...[
    ['ѕpec', 'spec', 'U+0455'],
    ['spеc', 'spec', 'U+0435'],
    ['metаdata', 'metadata', 'U+0430'],
    ['image\u200b', 'image', 'U+200B (invisible)'],
    ['\ufeffimage', 'image', 'U+FEFF (invisible)'],
    ['ｉｍａｇｅ', 'image', 'U+FF49'],
    ['imagé', undefined, 'U+00E9'],
  ].map(([name, meant, cp]) => {
    const text =
      meant === 'spec'
        ? IMAGE.replace('spec:', `${name}: # here`)
        : meant === 'metadata'
          ? IMAGE.replace('metadata:', `${name}: # here`)
          : IMAGE.replace('  image:', `  ${name}: # here\n  image:`);
    const says = new RegExp(
      `${cp!.replace(/[()+]/g, '\\$&')}.*${meant ? `retype it as "${meant}"` : 'retype it in plain ASCII'}`,
    );
    return bad(`field name ${JSON.stringify(name)}`, 'i.yaml', text, '# here', 'schema', says);
  }),
  bad(
    'kind with a look-alike letter',
    'i.yaml',
    IMAGE.replace('kind: NodeImage', 'kind: NodeІmage # here'),
    '# here',
    'unknown-kind',
    /U\+0406.*retype it as "NodeImage"/,
  ),
];

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
