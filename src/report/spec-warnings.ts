/**
 * The warnings `drydock validate` prints for a repository, in one place so `drydock plan`
 * shows the same ones: the loader's own (a listed path a commit emptied), the valid specs this
 * build does not act on, and where a spec's Jobs run when what is written would surprise.
 */
import { notActedOn, notActedOnReason } from '../plan/unsupported.js';
import { jobNamespaceWarnings, writtenNamespaceWarnings } from '../spec/namespaces.js';
import type { LoadResult, SpecError } from '../spec/model.js';

/** Every warning of a load, the loader's first; a refused load has only the loader's. */
export function specWarnings(load: LoadResult): SpecError[] {
  const loaded = load.warnings ?? [];
  if (!load.ok) return [...loaded];
  const d = load.desired;
  return [
    ...loaded,
    ...notActedOn(d).map((n) => ({
      ...n.source,
      code: 'not-supported',
      message: `${n.kind}/${n.name}: ${notActedOnReason(n)}`,
      hint: n.hint,
    })),
    ...writtenNamespaceWarnings(d),
    ...jobNamespaceWarnings(d),
  ];
}
