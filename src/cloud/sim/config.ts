/**
 * The simulated cloud's configuration (groups.yaml): which scaling groups exist, how they
 * start, how long instances take to boot and to go away, quotas and injected faults.
 * Validated with ajv against one JSON Schema (the source of truth for the shape), then
 * checked for what a schema cannot say (duplicate ids, Kubernetes label syntax, quotas).
 */
import { CodedError } from '../../errors.js';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { NodeRole } from '../../spec/model.js';
import { GroupIdError, parseGroupId } from '../group-id.js';

export interface SimResources {
  readonly cpu: string;
  readonly memory: string;
  readonly pods: string;
}

export interface SimGroupConfig {
  readonly id: string;
  readonly role: NodeRole;
  /** Instances created when the group is first seen (later the persisted state wins). */
  readonly size: number;
  /** Image of those first instances and of new ones until setGroupImage changes it. */
  readonly image: string;
  /** Extra labels every Node of this group carries. */
  readonly labels: Readonly<Record<string, string>>;
  readonly resources: SimResources;
  readonly bootDelaySeconds?: number;
  /** The group's nodes play Bottlerocket hosts (src/sim-host/bottlerocket.ts). */
  readonly bottlerocket?: SimBottlerocketConfig;
}

/** A fault of a Bottlerocket host's update, on the nodes named or every node of the group. */
export interface SimBottlerocketFault {
  readonly kind: 'noUpdate' | 'prepareFails' | 'bootsOldVersion';
  readonly nodes?: readonly string[];
  /** prepareFails: the failed command's stderr. */
  readonly stderr?: string;
}

/** A group of Bottlerocket hosts: the version they boot, their variant and their update repository. */
export interface SimBottlerocketConfig {
  readonly version: string;
  readonly variant: string;
  /** The versions the update repository offers at start (more can be published at run time). */
  readonly available: readonly string[];
  readonly faults: readonly SimBottlerocketFault[];
}

export interface SimFaultConfig {
  readonly seed: number;
  /** Probability that a booted instance never joins the cluster. */
  readonly bootFailureRate: number;
  /** Probability that an API call is throttled. */
  readonly throttleRate: number;
  readonly retryAfterSeconds: number;
  /** Probability that an API call fails with a 5xx-style transient error. */
  readonly transientRate: number;
  /** Added to every API call, drawn uniformly from [min, max]. */
  readonly latencyMs: { readonly min: number; readonly max: number };
}

export interface SimQuota {
  /** Instances (pending, running or terminating) one group may hold; undefined = no limit. */
  readonly maxInstancesPerGroup?: number;
  /** Instances all groups together may hold; undefined = no limit. */
  readonly maxInstancesTotal?: number;
}

/** How the simulated hosts behave when drydock runs Jobs and reboot pods on them (host.ts). */
export interface SimHostConfig {
  /** Seconds a rebooting node stays NotReady. */
  readonly rebootSeconds: number;
  /** Seconds a Job pod runs when its sim.drydock.dev/run-seconds annotation does not say. */
  readonly jobRunSeconds: number;
  /** Nodes on which every Job pod fails (the label sim.drydock.dev/fail-jobs=true does the same). */
  readonly failJobsOnNodes: readonly string[];
}

export const DEFAULT_HOST: SimHostConfig = { rebootSeconds: 5, jobRunSeconds: 2, failJobsOnNodes: [] };

/** The simulated Machine Config Operator of an OpenShift test world (src/sim-host/mco.ts). */
export interface SimMcoConfig {
  /** Whether the simulator also plays the MCO for the MachineConfigPools of its cluster. */
  readonly enabled: boolean;
  /** Nodes that go Degraded when told to update (the label sim.drydock.dev/mco-degrade=true does the same). */
  readonly degradedNodes: readonly string[];
  /** The machineconfiguration.openshift.io/reason a Degraded node reports. */
  readonly degradedReason: string;
  /**
   * Seconds the control plane takes to reach a new release: ClusterVersion's history says
   * Partial until then, and only then are the pools rendered (0: Completed and rendered at once).
   */
  readonly controlPlaneSeconds: number;
}

export const DEFAULT_MCO: SimMcoConfig = {
  enabled: false,
  degradedNodes: [],
  degradedReason: 'simulated failure applying the machine config',
  controlPlaneSeconds: 0,
};

export interface SimCloudConfig {
  readonly bootDelaySeconds: number;
  readonly terminateDelaySeconds: number;
  readonly groups: readonly SimGroupConfig[];
  readonly quota: SimQuota;
  readonly faults: SimFaultConfig;
  readonly host: SimHostConfig;
  readonly mco: SimMcoConfig;
}

export const DEFAULT_RESOURCES: SimResources = { cpu: '4', memory: '16Gi', pods: '110' };

export const DEFAULT_FAULTS: SimFaultConfig = {
  seed: 1,
  bootFailureRate: 0,
  throttleRate: 0,
  retryAfterSeconds: 1,
  transientRate: 0,
  latencyMs: { min: 0, max: 0 },
};

/**
 * The configuration's JSON Schema, in schemas/ with the others (and its TypeScript type
 * generated from it like theirs): four levels above dist/src/cloud/sim/.
 */
export const simCloudConfigSchema = JSON.parse(
  readFileSync(new URL('../../../../schemas/sim-cloud-config.schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

export interface SimConfigProblem {
  /** JSON pointer into the configuration, e.g. /groups/0/size. */
  readonly path: string;
  readonly message: string;
  /** 1-based, when the configuration came from YAML text. */
  readonly line?: number;
  readonly column?: number;
}

/** An invalid simulated-cloud configuration; every problem is listed with where it is. */
export class SimConfigError extends CodedError<
  'InvalidSimConfig',
  { readonly file?: string; readonly problems: readonly SimConfigProblem[] }
> {
  override readonly name = 'SimConfigError';
  constructor(data: { readonly file?: string; readonly problems: readonly SimConfigProblem[] }) {
    super(
      'InvalidSimConfig',
      data.problems
        .map(
          (p) =>
            `${data.file ?? 'sim cloud config'}${p.line ? `:${p.line}:${p.column ?? 1}` : ''}: ${p.path ? `${p.path}: ` : ''}${p.message}`,
        )
        .join('\n'),
      data,
    );
  }
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictTypes: false });
const validateSchema = ajv.compile(simCloudConfigSchema);

// Kubernetes label syntax: optional DNS-subdomain prefix, a name of at most 63 characters.
const LABEL_NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_PREFIX = /^[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?$/;
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  if (slash === -1) return LABEL_NAME.test(key);
  return LABEL_PREFIX.test(key.slice(0, slash)) && LABEL_NAME.test(key.slice(slash + 1));
}

export function isLabelValue(value: string): boolean {
  return LABEL_VALUE.test(value);
}

function describeAjvError(e: ErrorObject): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown field ${JSON.stringify(e.params['additionalProperty'])}; remove it or check its spelling`;
    case 'required':
      return `missing required field ${JSON.stringify(e.params['missingProperty'])}`;
    case 'enum':
      return `must be one of ${(e.params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern':
      return e.instancePath.endsWith('/image')
        ? 'must be a non-empty image name without leading or trailing spaces'
        : `${e.message ?? 'has the wrong format'} (a Kubernetes quantity such as "4", "500m", "16Gi")`;
    default:
      return e.message ?? 'is invalid';
  }
}

/**
 * Checks and completes a configuration object (defaults filled in). Throws SimConfigError
 * listing every problem; `locate` maps a JSON pointer to a position in the source text.
 */
export function parseSimConfig(
  input: unknown,
  file?: string,
  locate: (path: string) => { line: number; column: number } | undefined = () => undefined,
): SimCloudConfig {
  const value: unknown = structuredClone(input ?? {});
  const problems: SimConfigProblem[] = [];
  const add = (path: string, message: string): void => {
    problems.push({ path, message, ...locate(path) });
  };
  if (!validateSchema(value)) {
    for (const e of validateSchema.errors ?? []) add(e.instancePath, describeAjvError(e));
    throw new SimConfigError({ ...(file === undefined ? {} : { file }), problems });
  }
  const raw = value as RawConfig;
  const seen = new Set<string>();
  let total = 0;
  raw.groups.forEach((g, i) => {
    try {
      parseGroupId('sim', g.id);
    } catch (err) {
      if (!(err instanceof GroupIdError)) throw err;
      add(`/groups/${i}/id`, err.message);
    }
    if (seen.has(g.id))
      add(`/groups/${i}/id`, `group ${JSON.stringify(g.id)} is defined twice; give each group its own id`);
    seen.add(g.id);
    for (const [k, v] of Object.entries(g.labels)) {
      if (!isLabelKey(k))
        add(`/groups/${i}/labels`, `label key ${JSON.stringify(k)} is not a valid Kubernetes label key`);
      if (!isLabelValue(v))
        add(
          `/groups/${i}/labels`,
          `label ${k}: value ${JSON.stringify(v)} is not a valid Kubernetes label value (at most 63 letters, digits, "-", "_", ".")`,
        );
    }
    const perGroup = raw.quota.maxInstancesPerGroup;
    if (perGroup !== undefined && g.size > perGroup) {
      add(`/groups/${i}/size`, `size ${g.size} exceeds quota.maxInstancesPerGroup ${perGroup}`);
    }
    checkBottlerocket(g.id, g.bottlerocket, (path, message) => add(`/groups/${i}/bottlerocket${path}`, message));
    total += g.size;
  });
  if (raw.quota.maxInstancesTotal !== undefined && total > raw.quota.maxInstancesTotal) {
    add(
      '/quota/maxInstancesTotal',
      `the groups' sizes add up to ${total}, more than maxInstancesTotal ${raw.quota.maxInstancesTotal}`,
    );
  }
  const faults = {
    ...DEFAULT_FAULTS,
    ...raw.faults,
    latencyMs: { ...DEFAULT_FAULTS.latencyMs, ...raw.faults.latencyMs },
  };
  if (faults.latencyMs.min > faults.latencyMs.max) add('/faults/latencyMs', 'min must not be larger than max');
  if (problems.length > 0) throw new SimConfigError({ ...(file === undefined ? {} : { file }), problems });

  return {
    bootDelaySeconds: raw.bootDelaySeconds,
    terminateDelaySeconds: raw.terminateDelaySeconds,
    quota: raw.quota,
    faults,
    host: { ...DEFAULT_HOST, ...raw.host },
    mco: { ...DEFAULT_MCO, ...raw.mco },
    groups: raw.groups.map((g) => ({
      id: g.id,
      role: g.role,
      size: g.size,
      image: g.image,
      labels: g.labels,
      resources: { ...DEFAULT_RESOURCES, ...g.resources },
      ...(g.bootDelaySeconds === undefined ? {} : { bootDelaySeconds: g.bootDelaySeconds }),
      ...(g.bottlerocket === undefined ? {} : { bottlerocket: g.bottlerocket }),
    })),
  };
}

/** What the schema cannot say about a Bottlerocket group's faults. */
function checkBottlerocket(
  groupId: string,
  config: SimBottlerocketConfig | undefined,
  add: (path: string, message: string) => void,
): void {
  config?.faults.forEach((f, j) => {
    if (f.stderr !== undefined && f.kind !== 'prepareFails')
      add(`/faults/${j}/stderr`, `only a prepareFails fault has stderr, not ${f.kind}`);
    for (const node of f.nodes ?? [])
      if (!node.startsWith(`${groupId}-i-`))
        add(
          `/faults/${j}/nodes`,
          `${JSON.stringify(node)} is not a node of group ${JSON.stringify(groupId)} (its nodes are named ${groupId}-i-0001, …)`,
        );
  });
}

interface RawConfig {
  bootDelaySeconds: number;
  terminateDelaySeconds: number;
  groups: Array<Omit<SimGroupConfig, 'resources'> & { resources: Partial<SimResources> }>;
  quota: SimQuota;
  faults: Partial<Omit<SimFaultConfig, 'latencyMs'>> & { latencyMs?: Partial<SimFaultConfig['latencyMs']> };
  host: Partial<SimHostConfig>;
  mco: Partial<SimMcoConfig>;
}

/** Reads and checks a YAML configuration file; errors carry file:line:column. */
export async function loadSimConfig(file: string): Promise<SimCloudConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'file not found'
        : `cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    throw new SimConfigError({
      file,
      problems: [{ path: '', message: `${reason}; pass an existing groups file with --config` }],
    });
  }
  return parseSimConfigText(text, file);
}

export function parseSimConfigText(text: string, file?: string): SimCloudConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new SimConfigError({
      ...(file === undefined ? {} : { file }),
      problems: doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return {
          path: '',
          message: `YAML: ${e.message.split('\n')[0] ?? 'syntax error'}`,
          line: pos.line,
          column: pos.col,
        };
      }),
    });
  }
  const locate = (pointer: string): { line: number; column: number } | undefined => {
    const keys = pointer
      .split('/')
      .slice(1)
      .map((k) => (/^\d+$/.test(k) ? Number(k) : k.replace(/~1/g, '/').replace(/~0/g, '~')));
    for (let n = keys.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(keys.slice(0, n), true);
      if (isNode(node) && node.range) {
        const pos = lineCounter.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return undefined;
  };
  return parseSimConfig(doc.toJS(), file, locate);
}
