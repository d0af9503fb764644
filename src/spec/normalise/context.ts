/**
 * What every normaliser gets: the document being normalised (for positions), a sink for
 * findings, and the repository's defaults.
 */
import { specError, type CodedSpecError, type SpecErrorCode } from '../errors.js';
import type { RolloutPolicy } from '../model.js';
import type { ParsedDocument, PathSegment } from '../parse.js';

export interface NormaliseContext {
  readonly doc: ParsedDocument;
  /** Repo defaults (drydock.yaml's defaults.rollout over the built-ins). */
  readonly rollout: RolloutPolicy;
  report(code: SpecErrorCode, path: readonly PathSegment[], message: string, hint: string): void;
}

export function normaliseContext(
  doc: ParsedDocument,
  rollout: RolloutPolicy,
  sink: CodedSpecError[],
): NormaliseContext {
  return {
    doc,
    rollout,
    report(code, path, message, hint) {
      sink.push(specError(code, doc.locate(path), message, hint));
    },
  };
}
