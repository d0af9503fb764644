import { strict as assert } from 'node:assert';
import { errorsToJson, formatErrorGithub, formatErrorText, type SpecError } from '../../src/spec/index.js';

const e: SpecError = {
  file: 'images/worker.yaml',
  line: 7,
  column: 3,
  code: 'schema',
  message: 'unknown field "x", here: 50%',
  hint: 'remove it,\nor rename it',
};

describe('error formats', () => {
  it('text: compiler-style line with the hint indented under it', () => {
    assert.equal(
      formatErrorText(e, { root: 'repo/' }),
      'repo/images/worker.yaml:7:3: error: unknown field "x", here: 50% [schema]\n  hint: remove it,\nor rename it',
    );
  });
  it('github: a workflow annotation with properties and data escaped', () => {
    assert.equal(
      formatErrorGithub(e, { root: 'repo' }),
      '::error file=repo/images/worker.yaml,line=7,col=3,title=drydock%3A schema::unknown field "x", here: 50%25%0Ahint: remove it,%0Aor rename it',
    );
  });
  it('json: every field, the path prefixed', () => {
    assert.deepEqual(errorsToJson([e], { root: '.' }), [
      { file: 'images/worker.yaml', line: 7, column: 3, code: 'schema', message: e.message, hint: e.hint },
    ]);
  });
});
