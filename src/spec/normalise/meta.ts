/** The fields every spec carries; the revision is filled in once the spec is complete. */
import type { SpecKind, SpecMeta } from '../model.js';
import type { ParsedDocument } from '../parse.js';

/** A schema-validated document as its generated type (ajv has checked the shape). */
export function raw<T>(doc: ParsedDocument): T {
  return doc.value as T;
}

export function meta<K extends SpecKind>(doc: ParsedDocument, kind: K): SpecMeta<K> {
  const m = doc.value['metadata'] as { name: string };
  return { kind, name: m.name, apiVersion: String(doc.value['apiVersion']), source: doc.start, revision: '' };
}
