/**
 * The fleet file (fleet/fleet.yaml, kind Fleet) and its stage approvals (fleet/approvals/*.yaml,
 * kind FleetApproval), read from the root of a repository's tree (or --path) into the planner's
 * FleetPlan, with every finding located at file:line like the specs'. A repository without a
 * fleet file serves one cluster, as before.
 */
import { parseDuration } from '../duration.js';
import type { FleetPlan, FleetStage, StageApproval } from '../plan/fleet.js';
import { CLUSTERS_DIR, FLEET_DIR } from './cluster-view.js';
import { decodeSpecFile } from './decode.js';
import { fileStart, specError, SpecSourceError, type CodedSpecError } from './errors.js';
import type { FleetDocument } from './generated/fleet.schema.js';
import type { FleetApprovalDocument } from './generated/fleet-approval.schema.js';
import { DEFAULT_LIMITS } from './load.js';
import { parseSpecText, type ParsedDocument } from './parse.js';
import type { SpecFileSource } from './source.js';
import { validateDocument } from './validate.js';

export const FLEET_FILE = `${FLEET_DIR}/fleet.yaml`;
const APPROVALS_DIR = `${FLEET_DIR}/approvals`;
const DEFAULT_STALE_MS = 30 * 60_000;

export interface FleetCluster {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface Fleet extends FleetPlan {
  readonly clusters: readonly FleetCluster[];
}

export type FleetLoad =
  | { readonly ok: true; readonly fleet: Fleet; readonly approvals: readonly StageApproval[] }
  | { readonly ok: false; readonly errors: readonly CodedSpecError[] };

async function exists(source: SpecFileSource, dir: string, name: string): Promise<boolean> {
  try {
    return (await source.readDir(dir)).some((e) => e.name === name);
  } catch (err) {
    if (err instanceof SpecSourceError) return false;
    throw err;
  }
}

/** The one document of a fleet file, parsed and checked against its schema, or the findings. */
async function readDocument(
  source: SpecFileSource,
  file: string,
  schema: string,
  errors: CodedSpecError[],
): Promise<ParsedDocument | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await source.readFile(file, DEFAULT_LIMITS.maxFileBytes);
  } catch (err) {
    if (!(err instanceof SpecSourceError)) throw err;
    errors.push(specError('read-failed', fileStart(file), `cannot read file: ${err.message}`, 'make it a plain file'));
    return undefined;
  }
  const decoded = decodeSpecFile(file, bytes, DEFAULT_LIMITS.maxFileBytes);
  if (!decoded.ok) {
    errors.push(decoded.error);
    return undefined;
  }
  const parsed = parseSpecText(file, decoded.text, DEFAULT_LIMITS);
  errors.push(...parsed.errors);
  const [doc, extra] = parsed.documents;
  if (extra) errors.push(specError('config', extra.start, `${file} holds more than one document`, 'keep one'));
  if (!doc) {
    if (parsed.errors.length === 0)
      errors.push(specError('config', fileStart(file), `${file} is empty`, 'write one document'));
    return undefined;
  }
  const found = validateDocument(doc, schema).errors;
  errors.push(...found);
  return found.length > 0 ? undefined : doc;
}

/** The stages with their clusters resolved: names plus selector matches, each cluster in exactly one. */
function stagesOf(doc: ParsedDocument, spec: FleetDocument['spec'], errors: CodedSpecError[]): FleetStage[] {
  const known = new Set(spec.clusters.map((c) => c.name));
  const placed = new Map<string, string>();
  const stages = spec.stages.map((s, i): FleetStage => {
    const at = (...p: (string | number)[]): ReturnType<ParsedDocument['locate']> =>
      doc.locate(['spec', 'stages', i, ...p]);
    (s.clusters ?? []).forEach((name, j) => {
      if (!known.has(name))
        errors.push(
          specError(
            'dangling-reference',
            at('clusters', j),
            `stage ${s.name} names cluster ${name}, which spec.clusters does not list`,
            `add it to spec.clusters or fix the name; clusters: ${[...known].join(', ')}`,
          ),
        );
    });
    const selected = spec.clusters
      .filter((c) => s.selector !== undefined && Object.entries(s.selector).every(([k, v]) => c.labels?.[k] === v))
      .map((c) => c.name);
    const members = [...new Set([...(s.clusters ?? []).filter((n) => known.has(n)), ...selected])];
    if (members.length === 0)
      errors.push(
        specError(
          'config',
          at('name'),
          `stage ${s.name} has no cluster`,
          'name clusters or give a selector that matches some',
        ),
      );
    for (const m of members) {
      const before = placed.get(m);
      if (before !== undefined)
        errors.push(
          specError(
            'config',
            at('name'),
            `cluster ${m} is in stage ${before} and in stage ${s.name}`,
            'put each cluster in exactly one stage',
          ),
        );
      else placed.set(m, s.name);
    }
    const soakMs = s.soak === undefined ? 0 : parseDuration(s.soak, { unitRequired: true });
    if (soakMs === undefined)
      errors.push(
        specError(
          'invalid-value',
          at('soak'),
          `soak ${JSON.stringify(s.soak)} is not a duration`,
          "write e.g. '1h' or '30m'",
        ),
      );
    return {
      name: s.name,
      clusters: members,
      soakMs: soakMs ?? 0,
      approval: s.approval ?? false,
      tolerate: s.tolerate ?? 0,
    };
  });
  spec.clusters.forEach((c, i) => {
    if (!placed.has(c.name))
      errors.push(
        specError(
          'config',
          doc.locate(['spec', 'clusters', i, 'name']),
          `cluster ${c.name} is in no stage`,
          'put every cluster in exactly one stage',
        ),
      );
  });
  return stages;
}

function duplicates(
  doc: ParsedDocument,
  names: readonly string[],
  what: 'clusters' | 'stages',
  errors: CodedSpecError[],
): void {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n))
      errors.push(
        specError(
          'duplicate-name',
          doc.locate(['spec', what, i, 'name']),
          `duplicate ${what === 'clusters' ? 'cluster' : 'stage'} ${JSON.stringify(n)}`,
          'give each its own name',
        ),
      );
    seen.add(n);
  });
}

/** A folder under clusters/ that no cluster of the fleet has: a typo, or a cluster left out. */
async function strayFolders(
  source: SpecFileSource,
  known: ReadonlySet<string>,
  errors: CodedSpecError[],
): Promise<void> {
  let entries;
  try {
    entries = await source.readDir(CLUSTERS_DIR);
  } catch (err) {
    if (err instanceof SpecSourceError) return;
    throw err;
  }
  for (const e of entries) {
    if (e.kind !== 'dir')
      errors.push(
        specError(
          'config',
          fileStart(`${CLUSTERS_DIR}/${e.name}`),
          `${CLUSTERS_DIR}/${e.name}: in a fleet, ${CLUSTERS_DIR}/ holds one folder per cluster and nothing else`,
          `move it to a shared folder, or into ${CLUSTERS_DIR}/<cluster>/ for one cluster`,
        ),
      );
    else if (!known.has(e.name))
      errors.push(
        specError(
          'config',
          fileStart(`${CLUSTERS_DIR}/${e.name}`),
          `${CLUSTERS_DIR}/${e.name} is the folder of no cluster of ${FLEET_FILE}`,
          `add ${e.name} to spec.clusters, or rename the folder`,
        ),
      );
  }
}

async function approvalsOf(
  source: SpecFileSource,
  stages: ReadonlySet<string>,
  errors: CodedSpecError[],
): Promise<StageApproval[]> {
  let entries;
  try {
    entries = await source.readDir(APPROVALS_DIR);
  } catch (err) {
    if (err instanceof SpecSourceError) return [];
    throw err;
  }
  const out: StageApproval[] = [];
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.kind !== 'file' || !/\.ya?ml$/.test(e.name)) continue;
    const file = `${APPROVALS_DIR}/${e.name}`;
    const doc = await readDocument(source, file, 'fleet-approval.schema.json', errors);
    if (!doc) continue;
    const spec = (doc.value as unknown as FleetApprovalDocument).spec;
    if (!stages.has(spec.stage)) {
      errors.push(
        specError(
          'dangling-reference',
          doc.locate(['spec', 'stage']),
          `stage ${spec.stage} is not a stage of ${FLEET_FILE}`,
          `stages: ${[...stages].join(', ')}`,
        ),
      );
      continue;
    }
    out.push({
      stage: spec.stage,
      target: { kind: spec.target.kind, name: spec.target.name },
      revision: spec.revision,
    });
  }
  return out;
}

/** The fleet of a tree, or undefined when it has no fleet file (one cluster, as before). */
export async function loadFleet(source: SpecFileSource): Promise<FleetLoad | undefined> {
  if (!(await exists(source, FLEET_DIR, 'fleet.yaml'))) return undefined;
  const errors: CodedSpecError[] = [];
  const doc = await readDocument(source, FLEET_FILE, 'fleet.schema.json', errors);
  if (!doc) return { ok: false, errors };
  const spec = (doc.value as unknown as FleetDocument).spec;
  duplicates(
    doc,
    spec.clusters.map((c) => c.name),
    'clusters',
    errors,
  );
  duplicates(
    doc,
    spec.stages.map((s) => s.name),
    'stages',
    errors,
  );
  const stages = stagesOf(doc, spec, errors);
  const staleAfterMs =
    spec.staleAfter === undefined ? DEFAULT_STALE_MS : parseDuration(spec.staleAfter, { unitRequired: true });
  if (staleAfterMs === undefined || staleAfterMs <= 0)
    errors.push(
      specError(
        'invalid-value',
        doc.locate(['spec', 'staleAfter']),
        `staleAfter ${JSON.stringify(spec.staleAfter)} is not a duration longer than zero`,
        "write e.g. '30m'",
      ),
    );
  await strayFolders(source, new Set(spec.clusters.map((c) => c.name)), errors);
  const approvals = await approvalsOf(source, new Set(stages.map((s) => s.name)), errors);
  if (errors.length > 0) return { ok: false, errors };
  const clusters = spec.clusters.map((c) => ({ name: c.name, labels: c.labels ?? {} }));
  return { ok: true, fleet: { clusters, stages, staleAfterMs: staleAfterMs ?? DEFAULT_STALE_MS }, approvals };
}
