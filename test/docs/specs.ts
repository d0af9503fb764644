/**
 * docs/reference/specs.md from schemas/: every kind drydock reads (the registry in
 * src/spec/kinds.ts says which schema checks which apiVersion/kind), drydock.yaml and the
 * simulated cloud's configuration, each field as a dotted path with its type, whether it is
 * required, its default and its description. Definitions shared through common.schema.json
 * are listed once, at the end, and linked from the fields that use them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KINDS } from '../../src/spec/kinds.js';
import { SCHEMA_BASE } from '../../src/spec/schemas.js';
import { ROOT, byText, code, generatedNote, table } from './markdown.js';

/** The part of JSON Schema these schemas use. */
interface Schema {
  readonly $id?: string;
  readonly $ref?: string;
  readonly title?: string;
  readonly description?: string;
  readonly type?: string | readonly string[];
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly examples?: readonly unknown[];
  readonly format?: string;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly items?: Schema;
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly definitions?: Readonly<Record<string, Schema>>;
}

const SCHEMAS = path.join(ROOT, 'schemas');
const COMMON = 'common.schema.json';

/** One row of a field table. */
interface Field {
  readonly path: string;
  readonly type: string;
  readonly required: boolean;
  readonly default: string;
  readonly description: string;
}

/** Every schema under schemas/, by its path there ("seeds/kairos-node-op.schema.json"). */
function loadSchemas(): Map<string, Schema> {
  const out = new Map<string, Schema>();
  const walk = (dir: string, prefix: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => byText(a.name, b.name))) {
      if (e.isDirectory()) walk(path.join(dir, e.name), `${prefix}${e.name}/`);
      else if (e.name.endsWith('.schema.json'))
        out.set(`${prefix}${e.name}`, JSON.parse(readFileSync(path.join(dir, e.name), 'utf8')) as Schema);
    }
  };
  walk(SCHEMAS, '');
  return out;
}

class SchemaSet {
  constructor(private readonly schemas: Map<string, Schema>) {}

  file(name: string): Schema {
    const s = this.schemas.get(name);
    if (!s) throw new Error(`schemas/${name} does not exist`);
    return s;
  }

  /** The schema a $ref written in `from` points at, and the shared definition's name when it is one. */
  resolve(ref: string, from: string): { schema: Schema; definition?: string } {
    const [file, pointer = ''] = ref.split('#');
    const target = file ? path.posix.normalize(path.posix.join(path.posix.dirname(from), file)) : from;
    let node: unknown = this.file(target);
    const parts = pointer.split('/').filter((p) => p !== '');
    for (const p of parts) node = (node as Record<string, unknown>)[p];
    if (node === undefined) throw new Error(`schemas/${from}: $ref ${ref} points at nothing`);
    const definition = target === COMMON && parts[0] === 'definitions' ? parts[1] : undefined;
    return { schema: node as Schema, ...(definition ? { definition } : {}) };
  }
}

/** The anchor of a shared definition's section. */
function definitionLink(name: string, schema: Schema): string {
  const title = schema.title ?? name;
  return `[${title}](#${title.toLowerCase()})`;
}

function json(v: unknown): string {
  return code(JSON.stringify(v));
}

/** "1–253 characters", "at least 1", "0–2147483647": a schema's bounds in words. */
function bounds(min: number | undefined, max: number | undefined, unit: string): string | undefined {
  const u = unit ? ` ${unit}` : '';
  if (min !== undefined && max !== undefined) return `${min}–${max}${u}`;
  if (min !== undefined) return `at least ${min}${u}`;
  if (max !== undefined) return `at most ${max}${u}`;
  return undefined;
}

/** A field's type in words, with its constraints; a shared definition is a link to its section. */
function typeOf(s: Schema, set: SchemaSet, from: string): string {
  if (s.$ref) {
    const r = set.resolve(s.$ref, from);
    return r.definition ? definitionLink(r.definition, r.schema) : typeOf(r.schema, set, from);
  }
  if (s.const !== undefined) return json(s.const);
  if (s.enum) return s.enum.map(json).join(', ');
  const alternatives = s.oneOf ?? s.anyOf;
  if (alternatives) return alternatives.map((a) => typeOf(a, set, from)).join(' or ');
  const types = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : [];
  const base = types.join(' or ') || 'any';
  const notes: string[] = [];
  if (types.includes('array') && s.items) notes.push(`of ${typeOf(s.items, set, from)}`);
  if (types.includes('object') && !s.properties && typeof s.additionalProperties === 'object')
    notes.push(`of ${typeOf(s.additionalProperties, set, from)} by key`);
  const length = bounds(s.minLength, s.maxLength, 'characters');
  const range = bounds(s.minimum, s.maximum, '');
  const items = bounds(s.minItems, s.maxItems, 'items');
  for (const n of [length, range, items]) if (n) notes.push(n);
  if (s.format) notes.push(`format ${s.format}`);
  if (s.pattern) notes.push(`pattern ${code(s.pattern)}`);
  if (notes.length === 0) return base;
  const [first, ...rest] = notes;
  return first?.startsWith('of ') ? `${base} ${[first, ...rest].join(', ')}` : `${base}, ${notes.join(', ')}`;
}

function describe(s: Schema, set: SchemaSet, from: string): string {
  const own = s.description ?? (s.$ref ? set.resolve(s.$ref, from).schema.description : undefined) ?? '';
  const examples = s.examples?.length ? ` Examples: ${s.examples.map(json).join(', ')}.` : '';
  return `${own}${examples}`;
}

/**
 * The fields under `s`, as dotted paths below `prefix`: nested objects written in place are
 * walked, array items as `name[]`; a $ref to a shared definition stops the walk (its fields
 * are in its own section).
 */
function fields(s: Schema, set: SchemaSet, from: string, prefix: string): Field[] {
  const out: Field[] = [];
  const required = new Set(s.required ?? []);
  for (const [name, p] of Object.entries(s.properties ?? {})) {
    const at = prefix ? `${prefix}.${name}` : name;
    out.push({
      path: at,
      type: typeOf(p, set, from),
      required: required.has(name),
      default: p.default === undefined ? '' : json(p.default),
      description: describe(p, set, from),
    });
    out.push(...nested(p, set, from, at));
  }
  return out;
}

function nested(p: Schema, set: SchemaSet, from: string, at: string): Field[] {
  if (p.$ref) return [];
  if (p.properties) return fields(p, set, from, at);
  if (p.items && !p.items.$ref && p.items.properties) return fields(p.items, set, from, `${at}[]`);
  if (typeof p.additionalProperties === 'object' && p.additionalProperties.properties)
    return fields(p.additionalProperties, set, from, `${at}.<key>`);
  return [];
}

function fieldTable(rows: readonly Field[]): string {
  if (rows.length === 0) return '_No fields of its own._';
  return table(
    ['Field', 'Type', 'Required', 'Default', 'Description'],
    rows.map((f) => [code(f.path), f.type, f.required ? 'yes' : '', f.default, f.description]),
  );
}

/** The first file of examples-repo/ holding a document of this apiVersion and kind. */
function exampleOf(examples: readonly { file: string; text: string; docs: unknown[] }[], api: string, kind: string) {
  return examples.find((e) =>
    e.docs.some((d) => {
      const doc = d as { apiVersion?: unknown; kind?: unknown } | null;
      return doc?.apiVersion === api && doc.kind === kind;
    }),
  );
}

function loadExamples(): { file: string; text: string; docs: unknown[] }[] {
  const dir = path.join(ROOT, 'examples-repo');
  const out: { file: string; text: string; docs: unknown[] }[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => byText(a.name, b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory() && !e.name.startsWith('.')) walk(r);
      else if (/\.ya?ml$/.test(e.name)) {
        const text = readFileSync(path.join(dir, r), 'utf8');
        out.push({ file: `examples-repo/${r}`, text, docs: parseAllDocuments(text).map((d) => d.toJS() as unknown) });
      }
    }
  };
  walk('');
  return out;
}

/** The counts the page's introduction gives, and that a caller may report. */
export interface SpecsSummary {
  readonly kinds: number;
  readonly fields: number;
  readonly definitions: number;
}

export function specsPage(): { markdown: string; summary: SpecsSummary } {
  const set = new SchemaSet(loadSchemas());
  const examples = loadExamples();
  const sections: string[] = [];
  let fieldCount = 0;
  let kindCount = 0;

  const section = (heading: string, level: string, file: string, intro: string[], api?: string, kind?: string) => {
    const schema = set.file(file);
    const rows = fields(schema, set, file, '');
    fieldCount += rows.length;
    const lines = [`${level} ${heading}`, '', ...intro, '', schema.description ?? '', '', fieldTable(rows)];
    const example = api && kind ? exampleOf(examples, api, kind) : undefined;
    if (example) lines.push('', `Example, from ${code(example.file)}:`, '', '```yaml', example.text.trimEnd(), '```');
    sections.push(lines.join('\n'));
  };

  const [drydockApi, ...seedApis] = Object.keys(KINDS);
  if (!drydockApi) throw new Error('src/spec/kinds.ts registers no apiVersion');
  sections.push(`## ${drydockApi}`);
  for (const [kind, handler] of Object.entries(KINDS[drydockApi] ?? {})) {
    kindCount++;
    section(
      kind,
      '###',
      handler.schema,
      [`${code(`apiVersion: ${drydockApi}`)}, ${code(`kind: ${kind}`)}; schema ${code(`schemas/${handler.schema}`)}.`],
      drydockApi,
      kind,
    );
  }
  sections.push(
    [
      '## Repository and simulator files',
      '',
      'Two files that are not specs: `drydock.yaml` at the root of the specs repository, and the groups file of the simulated cloud (`drydock sim-cloud --config`, the sandbox).',
    ].join('\n'),
  );
  kindCount++;
  section(
    'drydock.yaml (RepoConfig)',
    '###',
    'repo-config.schema.json',
    [`Schema ${code('schemas/repo-config.schema.json')}.`],
    drydockApi,
    'RepoConfig',
  );
  section('Simulated cloud configuration', '###', 'sim-cloud-config.schema.json', [
    `Schema ${code('schemas/sim-cloud-config.schema.json')}.`,
  ]);

  sections.push(
    [
      '## Seed formats',
      '',
      'Manifests of other systems that drydock reads as they are and maps onto its own kinds, so that a fleet repository written for them loads unchanged. Each is checked by its own schema under `schemas/seeds/`.',
    ].join('\n'),
  );
  const seen = new Set<string>();
  for (const api of seedApis) {
    for (const [kind, handler] of Object.entries(KINDS[api] ?? {})) {
      kindCount++;
      const also = Object.entries(KINDS)
        .filter(([other, kinds]) => other !== api && kinds[kind]?.schema === handler.schema)
        .map(([other]) => code(other));
      if (seen.has(handler.schema)) continue;
      seen.add(handler.schema);
      const apis = [code(api), ...also].join(' or ');
      section(`${kind} (${api})`, '###', handler.schema, [
        `apiVersion ${apis}, ${code(`kind: ${kind}`)}; schema ${code(`schemas/${handler.schema}`)}.`,
      ]);
    }
  }

  const common = set.file(COMMON);
  const definitions = Object.entries(common.definitions ?? {});
  const shared = [
    '## Shared definitions',
    '',
    `${common.description ?? ''} From ${code(`schemas/${COMMON}`)}; fields above link here.`,
  ];
  for (const [name, def] of definitions) {
    const rows = fields(def, set, COMMON, '');
    fieldCount += rows.length;
    shared.push('', `### ${def.title ?? name}`, '', def.description ?? '', '');
    shared.push(rows.length > 0 ? fieldTable(rows) : `Type: ${typeOf(def, set, COMMON)}.`);
  }
  sections.push(shared.join('\n'));

  const summary = { kinds: kindCount, fields: fieldCount, definitions: definitions.length };
  const markdown = [
    generatedNote('schemas/ and src/spec/kinds.ts'),
    '',
    '# Spec reference',
    '',
    `Every document drydock reads from the fleet repository, field by field, as its JSON Schema (under \`schemas/\`, id prefix ${code(SCHEMA_BASE)}) checks it: ${summary.kinds} kinds, ${summary.fields} fields, and ${summary.definitions} definitions shared between kinds. A field path with \`[]\` is a field of each item of a list. Defaults that drydock fills in when a field is left out are given in the description where the schema itself carries no default.`,
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
  return { markdown, summary };
}
