/**
 * The JSON Schemas in schemas/, compiled once by ajv (allErrors, so one run reports every
 * problem of a document) and cached for the life of the process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { FORMATS } from './formats.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** schemas/ of the package: three levels above dist/src/spec/. */
export const SCHEMA_DIR = fileURLToPath(new URL('../../../schemas/', import.meta.url));
export const SCHEMA_BASE = 'https://drydock.dev/schemas/v1alpha1/';

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function schemaFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...schemaFiles(path.join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.name.endsWith('.schema.json')) out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

function instance(): Ajv {
  if (ajv) return ajv;
  const a = new Ajv({ allErrors: true, strict: true, verbose: true, allowUnionTypes: true });
  addFormats(a, ['date-time']);
  for (const [name, problem] of Object.entries(FORMATS))
    a.addFormat(name, { type: 'string', validate: (s: string) => problem(s) === undefined });
  for (const rel of schemaFiles(SCHEMA_DIR)) {
    a.addSchema(JSON.parse(readFileSync(path.join(SCHEMA_DIR, rel), 'utf8')) as object);
  }
  ajv = a;
  return a;
}

/** The compiled validator of a schema, by its path under schemas/ (e.g. "node-image.schema.json"). */
export function validatorFor(schemaPath: string): ValidateFunction {
  const id = SCHEMA_BASE + schemaPath;
  let v = compiled.get(id);
  if (!v) {
    const found = instance().getSchema(id);
    if (!found) throw new Error(`schema ${schemaPath} is not in schemas/`);
    v = found;
    compiled.set(id, v);
  }
  return v;
}
