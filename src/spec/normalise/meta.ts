/** The fields every spec carries; the revision is filled in once the spec is complete. */
import type { SpecKind, SpecMeta, WrittenNamespace } from '../model.js';
import type { ParsedDocument } from '../parse.js';

/** A schema-validated document as its generated type (ajv has checked the shape). */
export function raw<T>(doc: ParsedDocument): T {
  return doc.value as T;
}

export function meta<K extends SpecKind>(doc: ParsedDocument, kind: K): SpecMeta<K> {
  const m = doc.value['metadata'] as { name: string };
  return { kind, name: m.name, apiVersion: String(doc.value['apiVersion']), source: doc.start, revision: '' };
}

/** metadata.namespace and where it is written, when the document has one. */
export function writtenNamespace(doc: ParsedDocument): { writtenNamespace?: WrittenNamespace } {
  const ns = (doc.value['metadata'] as { namespace?: unknown }).namespace;
  if (typeof ns !== 'string') return {};
  return { writtenNamespace: { name: ns, at: doc.locate(['metadata', 'namespace']) } };
}
