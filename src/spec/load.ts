/**
 * The loader: a tree of files (a directory, or a commit) → a validated, normalised
 * DesiredState, or every error with file, line, column and a hint. All-or-nothing: one
 * invalid document makes the whole result invalid, so a commit is applied whole or not at all.
 */
import { capErrors } from './cap.js';
import { fileStart, specError, SpecSourceError, type CodedSpecError } from './errors.js';
import { decodeSpecFile } from './decode.js';
import { acceptedKinds, DRYDOCK_API, KINDS, REFUSED } from './kinds.js';
import type { DesiredState, LoadResult, RepoConfig, Spec } from './model.js';
import { normaliseContext } from './normalise/context.js';
import { linkMutexRuns } from './normalise/mutex.js';
import { DEFAULT_CONFIG, repoConfig } from './normalise/config.js';
import { parseSpecText, type ParsedDocument } from './parse.js';
import { checkReferences, type LoadedSpec } from './references.js';
import { revisionOf } from './revision.js';
import { directorySource, type SpecFileSource } from './source.js';
import { closest, lookalike } from './suggest.js';
import { validateDocument } from './validate.js';
import { collectSpecFiles, drydockIgnore } from './walk.js';

export interface LoadLimits {
  /** Largest spec file, in bytes (1 MiB). */
  readonly maxFileBytes: number;
  /** All spec files together, in bytes (32 MiB). */
  readonly maxTotalBytes: number;
  readonly maxFiles: number;
  /** Directory entries looked at while searching for specs. */
  readonly maxEntries: number;
  readonly maxDirDepth: number;
  /** Nesting of mappings and sequences inside a document. */
  readonly maxDepth: number;
  /** YAML documents per file. */
  readonly maxDocuments: number;
  readonly maxAliasCount: number;
  /** Errors reported; the rest are summarised in one. */
  readonly maxErrors: number;
  /** Errors reported per file; the rest are counted in one. */
  readonly maxErrorsPerFile: number;
}

export const DEFAULT_LIMITS: LoadLimits = {
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 32 * 1024 * 1024,
  maxFiles: 2000,
  maxEntries: 50_000,
  maxDirDepth: 32,
  maxDepth: 64,
  maxDocuments: 500,
  maxAliasCount: 100,
  maxErrors: 1000,
  maxErrorsPerFile: 100,
};

export interface LoadOptions {
  readonly limits?: Partial<LoadLimits>;
}

const CONFIG_FILES = ['drydock.yaml', 'drydock.yml'] as const;
const IGNORE_FILE = '.drydockignore';

interface FileText {
  readonly text?: string;
  readonly error?: CodedSpecError;
}

async function readText(source: SpecFileSource, file: string, limits: LoadLimits): Promise<FileText> {
  let bytes: Uint8Array;
  try {
    bytes = await source.readFile(file, limits.maxFileBytes);
  } catch (err) {
    if (!(err instanceof SpecSourceError)) throw err;
    return {
      error: specError(
        'read-failed',
        fileStart(file),
        `cannot read file: ${err.message}`,
        "check the file's permissions",
      ),
    };
  }
  const decoded = decodeSpecFile(file, bytes, limits.maxFileBytes);
  return decoded.ok ? { text: decoded.text } : { error: decoded.error };
}

function kindOf(doc: ParsedDocument): { apiVersion?: unknown; kind?: unknown } {
  return { apiVersion: doc.value['apiVersion'], kind: doc.value['kind'] };
}

/** Finding for a document whose apiVersion/kind drydock does not read. */
function unknownKind(doc: ParsedDocument, apiVersion: unknown, kind: unknown): CodedSpecError {
  for (const [field, value] of [
    ['apiVersion', apiVersion],
    ['kind', kind],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== 'string') {
      const what = Array.isArray(value)
        ? 'a list'
        : typeof value === 'object'
          ? 'a mapping'
          : typeof value === 'number' || typeof value === 'boolean'
            ? `the ${typeof value} ${value}`
            : `a ${typeof value}`;
      const example =
        field === 'kind'
          ? `kind: ${Array.isArray(value) && typeof value[0] === 'string' ? value[0] : 'NodeImage'}`
          : `apiVersion: ${DRYDOCK_API}`;
      return specError(
        'missing-kind',
        doc.locate([field]),
        `${field} must be a string, not ${what}`,
        `write it as one plain value, e.g. ${example}`,
      );
    }
  }
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || apiVersion === '' || kind === '') {
    const missing = typeof apiVersion !== 'string' || apiVersion === '' ? 'apiVersion' : 'kind';
    return specError(
      'missing-kind',
      doc.locate([missing === 'apiVersion' ? 'apiVersion' : 'kind']),
      `document has no ${missing}`,
      `every document needs apiVersion and kind; drydock reads ${acceptedKinds()}`,
    );
  }
  const refused = REFUSED[apiVersion]?.[kind];
  if (refused) return specError('refused-kind', doc.locate(['kind']), refused.message, refused.hint);
  const group = KINDS[apiVersion];
  if (group) {
    const odd = lookalike(kind, Object.keys(group));
    const guess = odd === undefined ? closest(kind, Object.keys(group)) : undefined;
    return specError(
      'unknown-kind',
      doc.locate(['kind']),
      `unknown kind ${JSON.stringify(kind)} for ${apiVersion}${odd ? `: ${odd.holds}` : ''}`,
      `${odd ? `${odd.fix}; ` : guess ? `did you mean ${guess}? ` : ''}${apiVersion} kinds: ${Object.keys(group).join(', ')}`,
    );
  }
  const withKind = Object.entries(KINDS)
    .filter(([, kinds]) => kind in kinds)
    .map(([api]) => api);
  if (withKind.length > 0) {
    return specError(
      'unknown-kind',
      doc.locate(['apiVersion']),
      `unknown apiVersion ${JSON.stringify(apiVersion)} for kind ${kind}`,
      `use apiVersion ${withKind.includes(DRYDOCK_API) ? DRYDOCK_API : withKind.join(' or ')}`,
    );
  }
  return specError(
    'unknown-kind',
    doc.locate(['kind']),
    `${kind} (${apiVersion}) is not a kind drydock reads`,
    `drydock reads ${acceptedKinds()}; keep other manifests outside drydock.yaml's paths or list them in .drydockignore`,
  );
}

function sortByName<T extends Spec>(list: T[]): T[] {
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function desiredState(config: RepoConfig, specs: readonly Spec[]): DesiredState {
  const of = <K extends Spec['kind']>(kind: K): Extract<Spec, { kind: K }>[] =>
    sortByName(specs.filter((s): s is Extract<Spec, { kind: K }> => s.kind === kind));
  return {
    config,
    scalingGroups: of('ScalingGroup'),
    nodeImages: of('NodeImage'),
    autoscalingStrategies: of('AutoscalingStrategy'),
    nodeMaintenances: of('NodeMaintenance'),
    nodeOps: of('NodeOp'),
    nodeOpUpgrades: of('NodeOpUpgrade'),
    upgradeGates: of('UpgradeGate'),
    maintenanceWindows: of('MaintenanceWindow'),
    approvals: of('Approval'),
    mutexTargets: of('MutexTarget'),
    mutexRunConfigs: of('MutexRunConfig'),
  };
}

async function loadConfig(
  source: SpecFileSource,
  rootNames: Map<string, string>,
  limits: LoadLimits,
  errors: CodedSpecError[],
  files: string[],
): Promise<{ config: RepoConfig; doc?: ParsedDocument }> {
  const present = CONFIG_FILES.filter((f) => rootNames.has(f));
  if (present.length === 0) return { config: DEFAULT_CONFIG };
  const file = present[0]!;
  if (present.length > 1) {
    errors.push(
      specError(
        'config',
        fileStart(CONFIG_FILES[1]),
        'both drydock.yaml and drydock.yml exist',
        'keep only drydock.yaml',
      ),
    );
  }
  if (rootNames.get(file) !== 'file') {
    errors.push(
      specError(
        rootNames.get(file) === 'symlink' ? 'symlink' : 'config',
        fileStart(file),
        `${file} is not a regular file`,
        `make ${file} a plain file; drydock never follows symlinks`,
      ),
    );
    return { config: DEFAULT_CONFIG };
  }
  files.push(file);
  const read = await readText(source, file, limits);
  if (read.error) {
    errors.push(read.error);
    return { config: DEFAULT_CONFIG };
  }
  const parsed = parseSpecText(file, read.text ?? '', limits);
  errors.push(...parsed.errors);
  if (parsed.errors.length > 0) return { config: DEFAULT_CONFIG };
  const [doc, extra] = parsed.documents;
  if (extra)
    errors.push(
      specError('config', extra.start, `${file} holds more than one document`, 'keep one document in drydock.yaml'),
    );
  if (!doc) return { config: DEFAULT_CONFIG };
  const schemaErrors = validateDocument(doc, 'repo-config.schema.json').errors;
  errors.push(...schemaErrors);
  if (schemaErrors.length > 0) return { config: DEFAULT_CONFIG, doc };
  const ctx = normaliseContext(doc, DEFAULT_CONFIG.defaults.rollout, errors);
  return { config: repoConfig(ctx), doc };
}

/** Loads the specs of any file tree (a directory, a commit). Throws SpecSourceError only when the root cannot be listed. */
export async function loadFromSource(source: SpecFileSource, opts: LoadOptions = {}): Promise<LoadResult> {
  const limits: LoadLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const errors: CodedSpecError[] = [];
  const files: string[] = [];
  const root = await source.readDir('');
  const rootNames = new Map(root.map((e) => [e.name, e.kind] as const));

  const { config, doc: configDoc } = await loadConfig(source, rootNames, limits, errors, files);

  let ignoreText: string | undefined;
  if (rootNames.get(IGNORE_FILE) === 'file') {
    const read = await readText(source, IGNORE_FILE, limits);
    if (read.error) errors.push(read.error);
    ignoreText = read.text;
  }

  const roots = config.paths.map((p, i) => ({
    path: p,
    declaredAt: configDoc?.locate(['paths', i]) ?? fileStart(CONFIG_FILES[0]),
  }));
  const walked = await collectSpecFiles(source, roots, drydockIgnore(ignoreText), limits);
  errors.push(...walked.errors);

  const loaded: LoadedSpec[] = [];
  const invalid = new Set<string>();
  const omitted = new Map<string, number>();
  let complete = true;
  let totalBytes = 0;
  for (const file of walked.files) {
    const read = await readText(source, file, limits);
    if (read.error) {
      errors.push(read.error);
      continue;
    }
    const text = read.text ?? '';
    totalBytes += Buffer.byteLength(text);
    if (totalBytes > limits.maxTotalBytes) {
      errors.push(
        specError(
          'source-limit',
          fileStart(file),
          `spec files together exceed ${limits.maxTotalBytes / (1024 * 1024)} MiB`,
          "narrow drydock.yaml's paths, or exclude large files in .drydockignore",
        ),
      );
      complete = false;
      break;
    }
    files.push(file);
    const parsed = parseSpecText(file, text, limits);
    errors.push(...parsed.errors);
    for (const doc of parsed.documents) {
      const r = loadDocument(doc, config, errors, limits.maxErrorsPerFile);
      loaded.push(...r.loaded);
      if (r.invalid !== undefined) invalid.add(r.invalid);
      if (r.omitted > 0) omitted.set(file, (omitted.get(file) ?? 0) + r.omitted);
    }
    if (errors.length > limits.maxErrors * 2) {
      complete = false;
      break;
    }
  }

  errors.push(...checkReferences(loaded, config, configDoc, invalid));
  files.sort();
  const warnings = walked.warnings.length > 0 ? { warnings: walked.warnings } : {};
  if (errors.length > 0 || omitted.size > 0)
    return { ok: false, errors: capErrors(errors, omitted, limits, complete), files, ...warnings };
  return {
    ok: true,
    desired: desiredState(config, linkMutexRuns(loaded.map((l) => l.spec))),
    files,
    ...warnings,
  };
}

interface DocumentResult {
  readonly loaded: readonly LoadedSpec[];
  /** "Kind/name" of a document refused by its schema, so references to it are not also reported as dangling. */
  readonly invalid?: string;
  readonly omitted: number;
}

function loadDocument(
  doc: ParsedDocument,
  config: RepoConfig,
  errors: CodedSpecError[],
  maxFindings: number,
): DocumentResult {
  const { apiVersion, kind } = kindOf(doc);
  const handler = typeof apiVersion === 'string' && typeof kind === 'string' ? KINDS[apiVersion]?.[kind] : undefined;
  if (!handler) {
    errors.push(unknownKind(doc, apiVersion, kind));
    return { loaded: [], omitted: 0 };
  }
  const schema = validateDocument(doc, handler.schema, maxFindings);
  if (schema.errors.length > 0) {
    errors.push(...schema.errors);
    const name = (doc.value['metadata'] as { name?: unknown } | undefined)?.name;
    return {
      loaded: [],
      omitted: schema.omitted,
      ...(typeof name === 'string' ? { invalid: `${String(kind)}/${name}` } : {}),
    };
  }
  const ctx = normaliseContext(doc, config.defaults.rollout, errors);
  const before = errors.length;
  const specs = handler.normalise(ctx);
  const name = (doc.value['metadata'] as { name: string }).name;
  return {
    loaded: specs.map((spec) => ({ spec: { ...spec, revision: revisionOf(spec) }, doc })),
    omitted: 0,
    ...(specs.length === 0 && errors.length > before ? { invalid: `${String(kind)}/${name}` } : {}),
  };
}

/** Loads the specs of a directory on disk. Throws SpecSourceError NotFound / NotADirectory for a bad `dir`. */
export async function loadFromDirectory(dir: string, opts: LoadOptions = {}): Promise<LoadResult> {
  return loadFromSource(directorySource(dir), opts);
}
