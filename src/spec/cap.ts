/**
 * How many findings are shown: at most a limit per file, then a limit in all, each cut
 * summarised by one finding that counts what it left out. A file of thousands of mistakes is
 * usually one mistake repeated; the first ones say what it is.
 */
import { compareErrors, fileStart, specError, type CodedSpecError } from './errors.js';
import { plural } from '../words.js';

export interface ErrorCaps {
  readonly maxErrors: number;
  readonly maxErrorsPerFile: number;
}

/** Findings that say why checking stopped are always shown, whatever their position. */
const ALWAYS: ReadonlySet<string> = new Set(['too-many-documents', 'source-limit']);

/**
 * `errors` sorted and capped. `omitted` counts findings per file that were never built (see
 * validateDocument); `complete` is false when loading stopped early, so the total is unknown.
 */
export function capErrors(
  errors: readonly CodedSpecError[],
  omitted: ReadonlyMap<string, number>,
  caps: ErrorCaps,
  complete: boolean,
): CodedSpecError[] {
  const sorted = [...errors].sort(compareErrors);
  const out: CodedSpecError[] = [];
  let i = 0;
  while (i < sorted.length) {
    const file = sorted[i]!.file;
    let kept = 0;
    let left = omitted.get(file) ?? 0;
    for (; i < sorted.length && sorted[i]!.file === file; i++) {
      if (kept < caps.maxErrorsPerFile || ALWAYS.has(sorted[i]!.code)) {
        out.push(sorted[i]!);
        kept++;
      } else left++;
    }
    if (left > 0) {
      const last = out[out.length - 1]!;
      out.push({
        ...specError(
          'too-many-errors',
          last,
          `${plural(left, 'more error')} in ${file} not shown`,
          `fix these ${kept} and validate again`,
        ),
        notShown: left,
      });
    }
  }
  const files = new Set(out.map((e) => e.file));
  for (const [file, n] of omitted) {
    if (!files.has(file) && n > 0)
      out.push({
        ...specError(
          'too-many-errors',
          fileStart(file),
          `${plural(n, 'more error')} in ${file} not shown`,
          'fix the file and validate again',
        ),
        notShown: n,
      });
  }
  if (out.length <= caps.maxErrors) return out;
  const shown = out.slice(0, caps.maxErrors);
  const cut = out.slice(caps.maxErrors);
  const rest = cut.reduce((sum, e) => sum + (e.notShown ?? 1), 0);
  shown.push({
    ...specError(
      'too-many-errors',
      fileStart(shown[shown.length - 1]?.file ?? '.'),
      complete
        ? `${plural(rest, 'more error')} not shown`
        : `${plural(rest, 'more error')} not shown, and files after this one were not checked`,
      'fix these and validate again',
    ),
    notShown: rest,
  });
  return shown;
}
