/**
 * A stateful stand-in for the part of the Compute Engine API drydock uses: zonal managed
 * instance groups, global instance templates, instances and operations, in the documented
 * REST shapes. Unlike an answer table it keeps state: a group's target size and template,
 * instances the group creates on its current template (names stable, CREATING → RUNNING over
 * time) and deletes (DELETING, then gone), operations that stay RUNNING for a few waits, and
 * a burst of 429s with Retry-After on demand. Errors come in the API's own body.
 */
import { startHttpRecorder, type Answer, type RecordedRequest } from './http-recorder.js';

export const GCP_API = 'https://www.googleapis.com/compute/v1';

/** A static credential for the GCP provider: like google-auth-library's clients, its fetch adds the Authorization header. */
export const staticGcpAuth = {
  getRequestHeaders: async () => new Headers({ authorization: 'Bearer test-token' }),
  fetch: (url: string | URL, init: RequestInit) => {
    const headers = new Headers(init.headers ?? {});
    headers.set('authorization', 'Bearer test-token');
    return fetch(url, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body ? { body: init.body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  },
};

export interface GcpFakeOptions {
  /** Waits (or gets) an operation answers RUNNING before DONE; default 3. */
  readonly pollsPerOperation?: number;
  /** How long operations.wait holds a RUNNING answer, as the real one blocks; default 50 ms. */
  readonly waitMs?: number;
  /** From creation to RUNNING; default 1 s. */
  readonly bootMs?: number;
  /** From deleteInstances to gone; default 500 ms. */
  readonly deleteMs?: number;
}

export interface FakeManagedInstance {
  readonly name: string;
  readonly id: string;
  /** Path form, projects/<p>/global/instanceTemplates/<name>. */
  readonly template: string;
  readonly createdAt: number;
  deletingSince?: number;
}

interface FakeGroup {
  readonly project: string;
  readonly zone: string;
  readonly name: string;
  targetSize: number;
  template: string;
  readonly instances: FakeManagedInstance[];
}

interface FakeOperation {
  readonly name: string;
  readonly zone?: string;
  readonly project: string;
  readonly operationType: string;
  readonly targetLink: string;
  readonly insertTime: string;
  polls: number;
}

export interface GcpFake {
  readonly url: string;
  /** Every request, as the recorder saw it. */
  readonly requests: RecordedRequest[];
  createTemplate(project: string, name: string, image: string): string;
  /** A zonal group of `size` instances on `template` (path form); returns its groupId. */
  createGroup(project: string, zone: string, name: string, template: string, size: number): string;
  /** The group's state as the fake holds it (live objects: read, do not change). */
  group(groupId: string): { targetSize: number; template: string; instances: readonly FakeManagedInstance[] };
  /** The boot image of a template, path form. */
  templateImage(template: string): string;
  /** The instances of every group that are RUNNING and not leaving, with their project and zone. */
  running(): { project: string; zone: string; groupId: string; name: string; image: string }[];
  /** The next `count` requests (of those `only` picks; default all) are answered 429 with Retry-After. */
  throttle(count: number, retryAfterSeconds?: number, only?: (r: RecordedRequest) => boolean): void;
  /** 429s answered so far. */
  readonly throttled: number;
  close(): Promise<void>;
}

const full = (path: string): string => `${GCP_API}/${path}`;
const pathOf = (url: string): string => url.replace(/^https?:\/\/[^/]+\/compute\/v1\//, '');

/** The Compute API's error body: {"error": {"code", "message", "errors": [{"message", "domain", "reason"}]}}. */
export function gcpError(
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): Answer {
  const domain = status === 429 ? 'usageLimits' : 'global';
  return { status, headers, body: { error: { code: status, message, errors: [{ message, domain, reason }] } } };
}

const notFound = (path: string): Answer => gcpError(404, 'notFound', `The resource '${path}' was not found`);

export async function startGcpFake(options: GcpFakeOptions = {}): Promise<GcpFake> {
  const polls = options.pollsPerOperation ?? 3;
  const waitMs = options.waitMs ?? 50;
  const bootMs = options.bootMs ?? 1_000;
  const deleteMs = options.deleteMs ?? 500;
  const server = await startHttpRecorder();
  const templates = new Map<string, Record<string, unknown>>();
  const groups = new Map<string, FakeGroup>();
  const operations = new Map<string, FakeOperation>();
  let burst: { left: number; retryAfter: number; only?: (r: RecordedRequest) => boolean } = {
    left: 0,
    retryAfter: 1,
  };
  let throttled = 0;
  let serial = 0;
  const nextId = (): string => String(4_000_000_000_000_000 + ++serial);

  const templateImage = (template: string): string => {
    const t = templates.get(template) as { properties?: { disks?: { initializeParams?: { sourceImage?: string } }[] } };
    return pathOf(t?.properties?.disks?.[0]?.initializeParams?.sourceImage ?? '');
  };

  /** Brings every group to its target size and lets finished deletions go: the group's own loop. */
  const settle = (): void => {
    const now = Date.now();
    for (const g of groups.values()) {
      const gone = g.instances.filter((i) => i.deletingSince !== undefined && now - i.deletingSince >= deleteMs);
      for (const i of gone) g.instances.splice(g.instances.indexOf(i), 1);
      const staying = g.instances.filter((i) => i.deletingSince === undefined);
      for (let n = staying.length; n < g.targetSize; n++) {
        // A MIG names instances <baseInstanceName>-<4 random characters>; a counter keeps them stable.
        const suffix = (++serial).toString(36).padStart(4, '0').slice(-4);
        g.instances.push({ name: `${g.name}-${suffix}`, id: nextId(), template: g.template, createdAt: now });
      }
      for (const extra of staying.slice(g.targetSize)) extra.deletingSince = now;
    }
  };

  const stateOf = (i: FakeManagedInstance): { currentAction: string; instanceStatus: string } => {
    if (i.deletingSince !== undefined) return { currentAction: 'DELETING', instanceStatus: 'STOPPING' };
    const age = Date.now() - i.createdAt;
    if (age < bootMs / 2) return { currentAction: 'CREATING', instanceStatus: 'PROVISIONING' };
    if (age < bootMs) return { currentAction: 'VERIFYING', instanceStatus: 'STAGING' };
    return { currentAction: 'NONE', instanceStatus: 'RUNNING' };
  };

  const operation = (project: string, zone: string | undefined, type: string, target: string): Answer => {
    const op: FakeOperation = {
      name: `operation-${Date.now()}-${(++serial).toString(16).padStart(8, '0')}`,
      project,
      ...(zone !== undefined ? { zone } : {}),
      operationType: type,
      targetLink: full(target),
      insertTime: new Date().toISOString(),
      polls: 0,
    };
    operations.set(op.name, op);
    return { body: operationBody(op) };
  };

  const operationBody = (op: FakeOperation): Record<string, unknown> => {
    const done = op.polls >= polls;
    const scope = op.zone !== undefined ? `projects/${op.project}/zones/${op.zone}` : `projects/${op.project}/global`;
    return {
      kind: 'compute#operation',
      id: nextId(),
      name: op.name,
      operationType: op.operationType,
      targetLink: op.targetLink,
      status: done ? 'DONE' : 'RUNNING',
      progress: done ? 100 : 0,
      insertTime: op.insertTime,
      startTime: op.insertTime,
      ...(done ? { endTime: new Date().toISOString() } : {}),
      selfLink: full(`${scope}/operations/${op.name}`),
      ...(op.zone !== undefined ? { zone: full(`projects/${op.project}/zones/${op.zone}`) } : {}),
    };
  };

  const managerBody = (g: FakeGroup): Record<string, unknown> => {
    const counts = { creating: 0, deleting: 0, none: 0, verifying: 0 };
    for (const i of g.instances) {
      const a = stateOf(i).currentAction.toLowerCase() as keyof typeof counts;
      counts[a] += 1;
    }
    const link = `projects/${g.project}/zones/${g.zone}/instanceGroupManagers/${g.name}`;
    return {
      kind: 'compute#instanceGroupManager',
      name: g.name,
      zone: full(`projects/${g.project}/zones/${g.zone}`),
      baseInstanceName: g.name,
      instanceTemplate: full(g.template),
      versions: [{ instanceTemplate: full(g.template), targetSize: { calculated: g.targetSize } }],
      targetSize: g.targetSize,
      currentActions: counts,
      status: { isStable: counts.none === g.instances.length },
      updatePolicy: { type: 'OPPORTUNISTIC', minimalAction: 'REPLACE', maxSurge: { fixed: 1 } },
      selfLink: full(link),
    };
  };

  const managedBody = (g: FakeGroup, i: FakeManagedInstance): Record<string, unknown> => ({
    instance: full(`projects/${g.project}/zones/${g.zone}/instances/${i.name}`),
    id: i.id,
    name: i.name,
    ...stateOf(i),
    version: { instanceTemplate: full(i.template) },
  });

  const group = (m: RegExpExecArray): FakeGroup | undefined =>
    groups.get(`projects/${m[1]}/zones/${m[2]}/instanceGroupManagers/${m[3]}`);
  const groupPath = (m: RegExpExecArray): string => `projects/${m[1]}/zones/${m[2]}/instanceGroupManagers/${m[3]}`;
  const query = (r: RecordedRequest): URLSearchParams => new URL(r.path, 'http://x').searchParams;
  const IGM = '/compute/v1/projects/([^/]+)/zones/([^/]+)/instanceGroupManagers/([^/?]+)';

  // First: the burst, for any request.
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE'])
    server.route(method, /./, (r) => {
      if (burst.left <= 0 || (burst.only && !burst.only(r))) return undefined;
      burst.left -= 1;
      throttled += 1;
      return gcpError(429, 'rateLimitExceeded', 'Rate Limit Exceeded', { 'retry-after': String(burst.retryAfter) });
    });
  // Every other route sees the group as its own loop left it.
  for (const method of ['GET', 'POST'])
    server.route(method, /./, () => {
      settle();
      return undefined;
    });

  server.route('GET', new RegExp(`^${IGM}(\\?|$)`), (r) => {
    const m = new RegExp(IGM).exec(r.path);
    const g = m && group(m);
    return g ? { body: managerBody(g) } : notFound(m ? groupPath(m) : r.path);
  });
  server.route('POST', new RegExp(`^${IGM}/listManagedInstances`), (r) => {
    const m = new RegExp(IGM).exec(r.path);
    const g = m && group(m);
    if (!g) return notFound(m ? groupPath(m) : r.path);
    const q = query(r);
    const max = Number(q.get('maxResults') ?? 500);
    const start = Number(q.get('pageToken') ?? 0);
    const page = g.instances.slice(start, start + max).map((i) => managedBody(g, i));
    const next = start + max < g.instances.length ? { nextPageToken: String(start + max) } : {};
    return { body: { managedInstances: page, ...next } };
  });
  server.route('POST', new RegExp(`^${IGM}/resize`), (r) => {
    const m = new RegExp(IGM).exec(r.path);
    const g = m && group(m);
    if (!m || !g) return notFound(m ? groupPath(m) : r.path);
    const size = Number(query(r).get('size'));
    if (!Number.isInteger(size) || size < 0)
      return gcpError(400, 'invalid', `Invalid value for field 'size': '${query(r).get('size') ?? ''}'.`);
    g.targetSize = size;
    settle();
    return operation(g.project, g.zone, 'compute.instanceGroupManagers.resize', groupPath(m));
  });
  server.route('POST', new RegExp(`^${IGM}/setInstanceTemplate`), (r) => {
    const m = new RegExp(IGM).exec(r.path);
    const g = m && group(m);
    if (!m || !g) return notFound(m ? groupPath(m) : r.path);
    const url = pathOf(String((r.body as { instanceTemplate?: string } | undefined)?.instanceTemplate ?? ''));
    if (!templates.has(url)) return notFound(url);
    g.template = url;
    return operation(g.project, g.zone, 'compute.instanceGroupManagers.setInstanceTemplate', groupPath(m));
  });
  server.route('POST', new RegExp(`^${IGM}/deleteInstances`), (r) => {
    const m = new RegExp(IGM).exec(r.path);
    const g = m && group(m);
    if (!m || !g) return notFound(m ? groupPath(m) : r.path);
    const body = r.body as { instances?: string[]; skipInstancesOnValidationError?: boolean } | undefined;
    const names = (body?.instances ?? []).map((u) => u.split('/').pop() ?? '');
    const members = names.map((n) => g.instances.find((i) => i.name === n));
    if (members.some((i) => i === undefined) && body?.skipInstancesOnValidationError !== true)
      return gcpError(
        400,
        'invalid',
        `Instance '${names[members.indexOf(undefined)] ?? ''}' is not a member of the group.`,
      );
    for (const i of members) {
      if (!i || i.deletingSince !== undefined) continue;
      i.deletingSince = Date.now();
      g.targetSize -= 1;
    }
    return operation(g.project, g.zone, 'compute.instanceGroupManagers.deleteInstances', groupPath(m));
  });

  const TEMPLATE = /^\/compute\/v1\/projects\/([^/]+)\/global\/instanceTemplates\/([^/?]+)/;
  server.route('GET', TEMPLATE, (r) => {
    const m = TEMPLATE.exec(r.path);
    const key = `projects/${m?.[1] ?? ''}/global/instanceTemplates/${m?.[2] ?? ''}`;
    const t = templates.get(key);
    return t ? { body: t } : notFound(key);
  });
  const TEMPLATES = /^\/compute\/v1\/projects\/([^/]+)\/global\/instanceTemplates(\?|$)/;
  server.route('POST', TEMPLATES, (r) => {
    const project = TEMPLATES.exec(r.path)?.[1] ?? '';
    const body = (r.body ?? {}) as Record<string, unknown>;
    const name = typeof body.name === 'string' ? body.name : '';
    if (name === '') return gcpError(400, 'required', "Required field 'resource.name' not specified");
    const key = `projects/${project}/global/instanceTemplates/${name}`;
    if (templates.has(key)) return gcpError(409, 'alreadyExists', `The resource '${key}' already exists`);
    templates.set(key, { kind: 'compute#instanceTemplate', id: nextId(), ...body, selfLink: full(key) });
    return operation(project, undefined, 'insert', key);
  });

  const INSTANCE = /^\/compute\/v1\/projects\/([^/]+)\/zones\/([^/]+)\/instances\/([^/?]+)/;
  server.route('GET', INSTANCE, (r) => {
    const [, project = '', zone = '', name = ''] = INSTANCE.exec(r.path) ?? [];
    for (const g of groups.values()) {
      const i = g.project === project && g.zone === zone ? g.instances.find((x) => x.name === name) : undefined;
      if (i) {
        return {
          body: {
            kind: 'compute#instance',
            id: i.id,
            name: i.name,
            creationTimestamp: new Date(i.createdAt).toISOString(),
            status: stateOf(i).instanceStatus,
            zone: full(`projects/${project}/zones/${zone}`),
            disks: [{ boot: true, source: full(`projects/${project}/zones/${zone}/disks/${i.name}`) }],
          },
        };
      }
    }
    return notFound(`projects/${project}/zones/${zone}/instances/${name}`);
  });

  const OPERATION = /^\/compute\/v1\/projects\/([^/]+)\/(?:zones\/([^/]+)|global)\/operations\/([^/?]+)(\/wait)?/;
  const answerOperation = async (r: RecordedRequest): Promise<Answer> => {
    const [, project = '', , name = '', wait] = OPERATION.exec(r.path) ?? [];
    const op = operations.get(name);
    if (!op || op.project !== project) return notFound(`projects/${project}/operations/${name}`);
    op.polls += 1;
    // operations.wait blocks while the operation runs; this one for a moment only.
    if (wait && op.polls < polls) await new Promise((res) => setTimeout(res, waitMs));
    return { body: operationBody(op) };
  };
  server.route('GET', OPERATION, answerOperation);
  server.route('POST', OPERATION, answerOperation);

  return {
    url: server.url,
    requests: server.requests,
    createTemplate(project, name, image) {
      const key = `projects/${project}/global/instanceTemplates/${name}`;
      templates.set(key, {
        kind: 'compute#instanceTemplate',
        id: nextId(),
        name,
        selfLink: full(key),
        properties: {
          machineType: 'e2-standard-4',
          disks: [{ boot: true, autoDelete: true, initializeParams: { sourceImage: full(image), diskSizeGb: '50' } }],
        },
      });
      return key;
    },
    createGroup(project, zone, name, template, size) {
      const id = `projects/${project}/zones/${zone}/instanceGroupManagers/${name}`;
      groups.set(id, { project, zone, name, targetSize: size, template, instances: [] });
      settle();
      return id;
    },
    group(groupId) {
      settle();
      const g = groups.get(groupId);
      if (!g) throw new Error(`no group ${groupId}`);
      return g;
    },
    templateImage,
    running() {
      settle();
      return [...groups.entries()].flatMap(([groupId, g]) =>
        g.instances
          .filter((i) => stateOf(i).instanceStatus === 'RUNNING' && i.deletingSince === undefined)
          .map((i) => ({ project: g.project, zone: g.zone, groupId, name: i.name, image: templateImage(i.template) })),
      );
    },
    throttle(count, retryAfterSeconds = 1, only) {
      burst = { left: count, retryAfter: retryAfterSeconds, ...(only ? { only } : {}) };
    },
    get throttled() {
      return throttled;
    },
    close: () => server.close(),
  };
}
