/**
 * One write drydock made, and the version the API server gave the object: what the next round
 * waits to see in the watch caches before it plans (src/observe/seen-writes.ts).
 */
export interface Written {
  /** The watched collection the object belongs to: nodes, pods, jobs or deployments. */
  readonly collection: 'nodes' | 'pods' | 'jobs' | 'deployments';
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion: string;
}

/** What a write answers with: the object written, its metadata carrying the new version. */
export interface WriteAnswer {
  readonly metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** Who is told of each write: ActionDeps and JobDeps carry it as `wrote`; none: nobody is. */
export type WriteListener = ((w: Written) => void) | undefined;

/** Tells `wrote` of the object a write answered with, if it carries a version. */
export function noteWrite(wrote: WriteListener, collection: Written['collection'], obj: WriteAnswer | undefined): void {
  const w = receiptOf(collection, obj);
  if (w !== undefined) wrote?.(w);
}

/** The receipt of a write whose answer is the object written; none when it carries no version. */
export function receiptOf(collection: Written['collection'], obj: WriteAnswer | undefined): Written | undefined {
  const m = obj?.metadata;
  if (m?.name === undefined || m.resourceVersion === undefined || m.resourceVersion === '') return undefined;
  return {
    collection,
    name: m.name,
    resourceVersion: m.resourceVersion,
    ...(m.namespace !== undefined && m.namespace !== '' ? { namespace: m.namespace } : {}),
  };
}
