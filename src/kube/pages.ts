/**
 * A list read in pages (`limit` and `continue`, as kubectl and client-go's reflector do), each
 * page trimmed before the next is read: a list of 10,000 pods parsed whole held every object
 * whole at once (with the response text), raising the heap's peak and the pages the allocator
 * keeps afterwards. The API server serves every page from one snapshot, and the last page's
 * resourceVersion is the list's, so a watch from it misses nothing. A continue token that
 * expired (410 Gone, after etcd compacted) restarts the list whole, as client-go's pager does.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

/** client-go's pager's default page size. */
export const PAGE_SIZE = 500;

/** The list call's paging parameters, named as client-node's list methods name them. */
export interface ListPage {
  readonly limit?: number;
  readonly _continue?: string;
}

function expired(err: unknown): boolean {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  return e?.code === 410 || e?.statusCode === 410;
}

/** Every item of the list, trimmed, with the list's resourceVersion. */
export async function listInPages<T extends KubernetesObject>(
  list: (page: ListPage) => Promise<KubernetesListObject<T>>,
  trim: (obj: T) => T,
  pageSize = PAGE_SIZE,
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let token: string | undefined;
  for (;;) {
    let page: KubernetesListObject<T>;
    try {
      page = await list(token === undefined ? { limit: pageSize } : { limit: pageSize, _continue: token });
    } catch (err) {
      if (token === undefined || !expired(err)) throw err;
      // The snapshot the pages came from is gone: one whole list instead.
      const whole = await list({});
      return { metadata: { resourceVersion: whole.metadata?.resourceVersion ?? '' }, items: whole.items.map(trim) };
    }
    for (const item of page.items) items.push(trim(item));
    token = page.metadata?._continue || undefined;
    if (token === undefined) return { metadata: { resourceVersion: page.metadata?.resourceVersion ?? '' }, items };
  }
}
