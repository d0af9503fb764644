/**
 * Validates one document against its kind's schema and turns ajv's errors into located,
 * actionable findings: the field path people write (spec.rollout.maxSurge), the line:column
 * of the offending key or value, and a hint taken from the field's own description.
 */
import type { ErrorObject } from 'ajv';
import { specError, type CodedSpecError } from './errors.js';
import type { ParsedDocument, PathSegment } from './parse.js';
import { validatorFor } from './schemas.js';
import { FORMAT_HINTS, FORMATS, INT32_MAX } from './formats.js';
import { closest, lookalike } from './suggest.js';

function segments(instancePath: string): PathSegment[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** spec.schedules[0].cron */
export function fieldPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const s of path) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out === '' ? 'the document' : out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return `${typeof value} ${value}`;
  return typeof value;
}

type SchemaLike = { description?: string; title?: string; properties?: Record<string, unknown>; enum?: unknown[] };

function schemaOf(e: ErrorObject): SchemaLike {
  return (typeof e.parentSchema === 'object' && e.parentSchema !== null ? e.parentSchema : {}) as SchemaLike;
}

const TYPE_HINT: Record<string, string> = {
  boolean: 'write true or false, without quotes',
  integer: 'write a whole number, without quotes',
  string: 'quote the value',
  object: 'write a mapping of field: value lines, indented under the key',
  array: 'write a list: one "- item" per line, indented under the key',
};

function one(doc: ParsedDocument, e: ErrorObject): CodedSpecError {
  const path = segments(e.instancePath);
  const where = fieldPath(path);
  const schema = schemaOf(e);
  const about = schema.description ?? '';
  switch (e.keyword) {
    case 'additionalProperties': {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys(schema.properties ?? {});
      const odd = lookalike(extra, known);
      const guess = odd === undefined ? closest(extra, known) : undefined;
      return specError(
        'schema',
        doc.locate([...path, extra], true),
        `unknown field ${JSON.stringify(extra)} in ${where}${odd !== undefined ? `: ${odd.holds}` : ''}`,
        (odd !== undefined ? `${odd.fix}; ` : guess ? `did you mean ${JSON.stringify(guess)}? ` : '') +
          `fields allowed here: ${known.join(', ')}`,
      );
    }
    case 'required': {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      const prop = schema.properties?.[missing] as SchemaLike | undefined;
      return specError(
        'schema',
        path.length === 0 ? doc.start : doc.locate(path, true),
        `missing required field ${JSON.stringify(missing)} in ${where}`,
        `add ${missing}` + (prop?.description ? `: ${prop.description}` : ''),
      );
    }
    case 'type': {
      const want = String((e.params as { type: string }).type);
      return specError(
        'schema',
        doc.locate(path),
        `${where} must be ${/^[aeiou]/.test(want) ? 'an' : 'a'} ${want}, not ${describe(e.data)}`,
        `${TYPE_HINT[want] ?? ''}${about ? `${TYPE_HINT[want] ? '; ' : ''}${where}: ${about}` : ''}`,
      );
    }
    case 'enum':
    case 'const': {
      const allowed =
        e.keyword === 'enum'
          ? ((e.params as { allowedValues: unknown[] }).allowedValues ?? [])
          : [(e.params as { allowedValue: unknown }).allowedValue];
      const guess = typeof e.data === 'string' ? closest(e.data, allowed.map(String)) : undefined;
      return specError(
        'schema',
        doc.locate(path),
        `${where} must be ${allowed.length === 1 ? JSON.stringify(allowed[0]) : `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`}, not ${describe(e.data)}`,
        (guess ? `did you mean ${JSON.stringify(guess)}? ` : '') + about,
      );
    }
    case 'format': {
      const format = String((e.params as { format: string }).format);
      const value = e.propertyName ?? e.data;
      const problem = typeof value === 'string' ? FORMATS[format]?.(value) : undefined;
      const subject =
        e.propertyName !== undefined
          ? `key ${JSON.stringify(e.propertyName)} in ${where}`
          : `${where} ${JSON.stringify(e.data)}`;
      const at = e.propertyName !== undefined ? doc.locate([...path, e.propertyName], true) : doc.locate(path);
      return specError(
        'schema',
        at,
        `${subject}: ${problem ?? 'is not valid'}`,
        about || FORMAT_HINTS[format] || 'see the schema in schemas/',
      );
    }
    case 'maximum':
      if ((e.params as { limit: number }).limit === INT32_MAX) {
        return specError(
          'schema',
          doc.locate(path),
          `${where} is ${String(e.data)}, above ${INT32_MAX}`,
          `Kubernetes stores it as a 32-bit integer; use a smaller number${about ? `; ${where}: ${about}` : ''}`,
        );
      }
      return specError(
        'schema',
        doc.locate(path),
        `${where} ${e.message ?? 'is not valid'}`,
        about || 'see the schema in schemas/',
      );
    case 'pattern':
    case 'minLength':
    case 'maxLength':
    case 'minimum':
    case 'minItems':
    case 'maxItems':
    case 'oneOf':
    default: {
      const what =
        e.keyword === 'pattern' || e.keyword === 'format' || e.keyword === 'oneOf'
          ? `${where} is not valid: ${describe(e.data)}`
          : `${where} ${e.message ?? 'is not valid'}`;
      return specError('schema', doc.locate(path), what, about || 'see the schema in schemas/');
    }
  }
}

export interface SchemaFindings {
  readonly errors: CodedSpecError[];
  /** Findings past `max` that were counted but not built. */
  readonly omitted: number;
}

/**
 * Every schema finding of one document, or none; at most `max` are built (a document of many
 * thousands of unknown fields would otherwise spend its time on messages nobody reads).
 */
export function validateDocument(doc: ParsedDocument, schemaPath: string, max = Infinity): SchemaFindings {
  const validate = validatorFor(schemaPath);
  if (validate(doc.value)) return { errors: [], omitted: 0 };
  const errors = validate.errors ?? [];
  // A oneOf failure reports each branch too; keep the oneOf's own finding only.
  const oneOfAt = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath));
  const kept = errors.filter(
    (e) => e.keyword !== 'propertyNames' && (e.keyword === 'oneOf' || !oneOfAt.has(e.instancePath)),
  );
  const seen = new Set<string>();
  const out: CodedSpecError[] = [];
  let i = 0;
  for (; i < kept.length && out.length < max; i++) {
    const f = one(doc, kept[i]!);
    const key = `${f.line}:${f.column}:${f.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(f);
    }
  }
  return { errors: out, omitted: kept.length - i };
}
