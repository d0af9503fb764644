import { strict as assert } from 'node:assert';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cacheFs } from '../../src/source/cache-fs.js';
import { tempDir } from '../support/git-server.js';

describe('cacheFs', () => {
  let dir: { dir: string; remove: () => void };
  beforeEach(() => (dir = tempDir('drydock-cachefs-')));
  afterEach(() => dir.remove());

  const writeFile = (file: string, data: unknown, opts?: unknown): Promise<void> =>
    (cacheFs.promises.writeFile as (f: string, d: unknown, o?: unknown) => Promise<void>)(file, data, opts);

  it('leaves no file at an object path when a write fails midway', async () => {
    const objects = path.join(dir.dir, 'objects', 'ab');
    mkdirSync(objects, { recursive: true });
    const file = path.join(objects, 'cdef0123456789abcdef0123456789abcdef01');
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('x'.repeat(4096));
      throw new Error('killed midway');
    }
    await assert.rejects(writeFile(file, failing()), /killed midway/);
    assert.deepEqual(readdirSync(objects), []);
  });

  it('writes an object whole, leaving no temporary file', async () => {
    const objects = path.join(dir.dir, 'objects', 'ab');
    mkdirSync(objects, { recursive: true });
    const file = path.join(objects, 'cdef0123456789abcdef0123456789abcdef01');
    await writeFile(file, Buffer.from('whole'));
    assert.equal(readFileSync(file, 'utf8'), 'whole');
    assert.deepEqual(readdirSync(objects), ['cdef0123456789abcdef0123456789abcdef01']);
  });

  it('writes other files in place, with the encoding asked for', async () => {
    const file = path.join(dir.dir, 'HEAD');
    await writeFile(file, 'ref: refs/heads/main\n', 'utf8');
    assert.equal(readFileSync(file, 'utf8'), 'ref: refs/heads/main\n');
  });
});
