import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('drydock command line', () => {
  it('prints help and exits 0', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Usage: drydock/);
  });
  it('exits 2 on an unknown command', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin/drydock.js'), 'no-such-command'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
  });
});
