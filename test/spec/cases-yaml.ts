/**
 * Generated cases of YAML that would load as something else and of messages that must say what
 * is wrong (corpus-yaml.test.ts runs them through the loader; parse-fast.test.ts holds both
 * parsers to the same reading of them).
 */
import { bad, good, type CorpusCase } from './corpus.js';
import { doc, IMAGE } from './support.js';

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
export const tags: CorpusCase[] = [
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
export const endings: CorpusCase[] = (['\r', '\r\n', '\n'] as const).flatMap((eol) => {
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
export const controls: CorpusCase[] = [
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

export const messages: CorpusCase[] = [
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
