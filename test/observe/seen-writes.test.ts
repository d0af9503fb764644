import { strict as assert } from 'node:assert';
import { SeenWrites, type Written } from '../../src/observe/seen-writes.js';

const node = (name: string, resourceVersion: string): Written => ({ collection: 'nodes', name, resourceVersion });

describe("seen writes: which of drydock's writes the watch caches have shown", () => {
  const none = (): undefined => undefined;

  it('a write whose event came first is seen at once', async () => {
    const s = new SeenWrites(none);
    s.saw('nodes', '7');
    assert.equal(await s.whenSeen([node('a', '7')], 10_000), true);
  });

  it('waits for every write, then resolves', async () => {
    const s = new SeenWrites(none);
    let result: boolean | undefined;
    const wait = s.whenSeen([node('a', '7'), node('b', '8')], 10_000).then((r) => (result = r));
    s.saw('nodes', '7');
    await Promise.resolve();
    assert.equal(result, undefined, 'one of two writes seen');
    s.saw('nodes', '8');
    await wait;
    assert.equal(result, true);
  });

  it('a version of another collection is not the write', async () => {
    const s = new SeenWrites(none);
    s.saw('pods', '7');
    assert.equal(s.has(node('a', '7')), false);
    assert.equal(await s.whenSeen([node('a', '7')], 5), false);
  });

  it('a write the cache holds at its version is seen (a patch that changed nothing keeps the version)', async () => {
    const s = new SeenWrites((w) => (w.name === 'a' ? '3' : undefined));
    assert.equal(await s.whenSeen([node('a', '3')], 10_000), true);
    assert.equal(s.has(node('b', '3')), false);
  });

  it('gives up after the timeout, and when the caches stop', async () => {
    const s = new SeenWrites(none);
    assert.equal(await s.whenSeen([node('a', '9')], 5), false);
    const stopped = s.whenSeen([node('a', '10')], 60_000);
    s.stop();
    assert.equal(await stopped, false);
  });

  it('remembers a bounded number of versions, the latest ones', () => {
    const s = new SeenWrites(none, 3);
    for (const v of ['1', '2', '3', '4']) s.saw('nodes', v);
    assert.deepEqual(
      ['1', '2', '3', '4'].map((v) => s.has(node('a', v))),
      [false, true, true, true],
    );
    s.saw('nodes', '4'); // seen again: nothing forgotten for it
    assert.equal(s.has(node('a', '2')), true);
  });
});
