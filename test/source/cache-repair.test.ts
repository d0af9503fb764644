import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { pino, type Logger } from 'pino';
import { GitSource, StatusWriter } from '../../src/source/index.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import type { StatusReport } from '../../src/report/types.js';
import { specStatus } from '../support/spec-status.js';
import { git, tempDir, TEST_USER, withUser } from '../support/git-server.js';
import { createFixture, type Fixture } from './fixture.js';

const report: StatusReport = {
  cluster: 'prod-eu',
  sourceCommit: '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d',
  specs: [
    specStatus('NodeImage', 'worker', { progress: { done: 3, total: 10 }, nodes: [{ node: 'n1', phase: 'Done' }] }),
  ],
};

/** A blob as Git stores it: its id and its loose object's bytes. */
function blobObject(content: string): { oid: string; raw: Buffer } {
  const body = Buffer.from(content, 'utf8');
  const raw = Buffer.concat([Buffer.from(`blob ${body.length}\0`), body]);
  return { oid: createHash('sha1').update(raw).digest('hex'), raw };
}

const objectPath = (gitdir: string, oid: string): string => path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));

describe('Git cache objects damaged by a killed write', function () {
  this.timeout(30_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await createFixture();
    await fx.commit({ 'specs/drydock.yaml': 'cluster: prod-eu\n' }, 1);
  });
  afterEach(() => fx.close());

  const source = (logger?: Logger): GitSource =>
    new GitSource({
      repo: fx.url,
      credentials: TEST_USER,
      cacheRoot: fx.cacheRoot,
      retries: 0,
      ...(logger ? { logger } : {}),
    });

  it('removes empty and truncated objects on open, so the next status push writes them again', async () => {
    const first = source();
    await first.fetch();
    const blobs = [...renderStatusDocs(report).values()].map(blobObject);
    assert.ok(blobs.length >= 2);
    const [emptied, truncated] = blobs as [ReturnType<typeof blobObject>, ReturnType<typeof blobObject>];
    // What a kill between open and write leaves, and what a kill mid-write leaves.
    for (const [blob, bytes] of [
      [emptied, Buffer.alloc(0)],
      [truncated, deflateSync(truncated.raw).subarray(0, 8)],
    ] as const) {
      mkdirSync(path.dirname(objectPath(first.gitdir, blob.oid)), { recursive: true });
      writeFileSync(objectPath(first.gitdir, blob.oid), bytes);
    }

    // What a kill during an atomic write leaves: its temporary file beside the object.
    const leftover = `${objectPath(first.gitdir, emptied.oid)}.drydock-tmp-1-0000`;
    writeFileSync(leftover, 'partial');

    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const res = await new StatusWriter({ source: source(logger), cluster: 'prod-eu', retries: 0 }).write(report);
    assert.equal(res.changed, true);

    for (const blob of [emptied, truncated]) {
      assert.deepEqual(inflateSync(readFileSync(objectPath(first.gitdir, blob.oid))), blob.raw);
    }
    const clone = tempDir('drydock-reader-');
    try {
      await git(clone.dir, ['init', '-q', '--bare']);
      await git(clone.dir, ['fetch', '-q', withUser(fx.url), '+refs/heads/drydock/status:refs/heads/status']);
      assert.equal(await git(clone.dir, ['rev-parse', 'status']), res.commit);
      assert.equal(await git(clone.dir, ['cat-file', '-t', emptied.oid]), 'blob');
      assert.equal(await git(clone.dir, ['fsck', '--no-dangling']), '');
    } finally {
      clone.remove();
    }
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const repair = logged.find((l) => l.msg === 'damaged cache objects removed');
    assert.ok(repair, 'the repair is logged');
    assert.equal(repair.empty, 1);
    assert.equal(repair.corrupt, 1);
    assert.equal(repair.temporary, 1);
    assert.equal(existsSync(leftover), false);
  });
});
