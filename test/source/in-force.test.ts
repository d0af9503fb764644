import { strict as assert } from 'node:assert';
import { CommitsInForce, type DesiredRevision } from '../../src/source/in-force.js';
import type { DesiredState } from '../../src/spec/model.js';

const desired = (cluster: string): DesiredState => ({ config: { cluster } }) as unknown as DesiredState;
const valid = (commit: string): DesiredRevision => ({
  commit,
  load: { ok: true, desired: desired(commit), files: [`${commit}.yaml`] },
});
const refused = (commit: string): DesiredRevision => ({
  commit,
  load: {
    ok: false,
    files: [],
    errors: [{ file: 'x.yaml', line: 1, column: 1, code: 'schema', message: 'm', hint: 'h' }],
  },
});

describe('the commit in force', () => {
  it('a valid commit is the newest and in force; a refused one is the newest only', () => {
    const c = new CommitsInForce();
    assert.equal(c.loaded(valid('c1')), true);
    assert.deepEqual(c.inForce, { commit: 'c1', desired: desired('c1'), files: ['c1.yaml'] });
    assert.equal(c.loaded(refused('c2')), true);
    assert.equal(c.newest?.commit, 'c2');
    assert.equal(c.inForce?.commit, 'c1');
    assert.equal(c.loaded(valid('c3')), true);
    assert.equal(c.inForce?.commit, 'c3');
  });

  it('the newest commit loaded again is no news, and keeps what was recorded', () => {
    const c = new CommitsInForce();
    const first = valid('c1');
    c.loaded(first);
    assert.equal(c.loaded(valid('c1')), false);
    assert.equal(c.newest, first);
  });

  it('a commit restored after a restart is in force only while none is', () => {
    const c = new CommitsInForce();
    c.loaded(refused('bad'));
    assert.equal(c.restored({ commit: 'old', desired: desired('old'), files: [] }), true);
    assert.equal(c.inForce?.commit, 'old');
    assert.equal(c.newest?.commit, 'bad');
    c.loaded(valid('fixed'));
    assert.equal(c.restored({ commit: 'old', desired: desired('old'), files: [] }), false);
    assert.equal(c.inForce?.commit, 'fixed');
  });
});
