import assert from 'node:assert/strict';
import type { KubernetesListObject, V1ConfigMap } from '@kubernetes/client-node';
import { listInPages, type ListPage } from '../../src/kube/pages.js';

const item = (i: number): V1ConfigMap => ({ metadata: { name: `cm-${i}`, namespace: 'ns', resourceVersion: `${i}` } });

/** A server of `total` items in pages, continue token = next index, list resourceVersion "77". */
function server(total: number, opts: { expireAt?: number; fail?: Error } = {}) {
  const calls: ListPage[] = [];
  const list = (page: ListPage): Promise<KubernetesListObject<V1ConfigMap>> => {
    calls.push(page);
    if (opts.fail) return Promise.reject(opts.fail);
    const from = page._continue === undefined ? 0 : Number(page._continue);
    if (opts.expireAt !== undefined && from === opts.expireAt)
      return Promise.reject(Object.assign(new Error('Expired'), { code: 410 }));
    const to = page.limit === undefined ? total : Math.min(total, from + page.limit);
    const items = Array.from({ length: to - from }, (_, i) => item(from + i));
    return Promise.resolve({
      metadata: { resourceVersion: '77', ...(to < total ? { _continue: String(to) } : {}) },
      items,
    });
  };
  return { list, calls };
}

const tag = (cm: V1ConfigMap): V1ConfigMap => ({ metadata: { ...cm.metadata, labels: { trimmed: 'yes' } } });

describe('listInPages: the informer list in pages', () => {
  it('reads every page, trims every item, and keeps the list resourceVersion', async () => {
    const s = server(7);
    const out = await listInPages(s.list, tag, 3);
    assert.deepEqual(
      out.items.map((c) => c.metadata?.name),
      ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6'],
    );
    assert.ok(out.items.every((c) => c.metadata?.labels?.trimmed === 'yes'));
    assert.equal(out.metadata?.resourceVersion, '77');
    assert.deepEqual(s.calls, [{ limit: 3 }, { limit: 3, _continue: '3' }, { limit: 3, _continue: '6' }]);
  });

  it('a list function that ignores paging is read once, whole', async () => {
    const s = server(4);
    const out = await listInPages((_page: ListPage) => s.list({}), tag, 2);
    assert.equal(out.items.length, 4);
    assert.equal(s.calls.length, 1);
  });

  it('an expired continue token (410) restarts as one whole list', async () => {
    const s = server(5, { expireAt: 2 });
    const out = await listInPages(s.list, tag, 2);
    assert.deepEqual(
      out.items.map((c) => c.metadata?.name),
      ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4'],
    );
    assert.deepEqual(s.calls.at(-1), {});
    assert.ok(out.items.every((c) => c.metadata?.labels?.trimmed === 'yes'));
  });

  it('any other error, or a 410 on the first page, fails the list', async () => {
    await assert.rejects(listInPages(server(3, { fail: new Error('boom') }).list, tag, 2), /boom/);
    await assert.rejects(listInPages(server(3, { expireAt: 0 }).list, tag, 2), /Expired/);
  });
});
