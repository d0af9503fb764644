/**
 * A stateful stand-in for the part of Azure Resource Manager drydock uses: uniform virtual
 * machine scale sets and their VMs, in the documented REST shapes, over HTTPS (the client sends
 * bearer tokens over TLS only). It keeps state: the model (sku.capacity, image reference),
 * VMs the scale set creates on its current model (instance ids stable, Creating → Succeeded
 * over time) and deletes (Deleting, then gone), long-running operations polled through
 * Azure-AsyncOperation (and Location for POST) that stay InProgress for a few polls, and a
 * burst of 429s with Retry-After on demand. Errors come in ARM's own body.
 */
import { selfSignedCertificate, startHttpRecorder, type Answer, type RecordedRequest } from './http-recorder.js';

export interface AzureFakeOptions {
  /** Polls an operation answers InProgress before Succeeded; default 3. */
  readonly pollsPerOperation?: number;
  /** Retry-After of a long-running operation's first answer, seconds; default 0. */
  readonly operationRetryAfterSeconds?: number;
  /** From creation to Succeeded; default 1 s. */
  readonly bootMs?: number;
  /** From deleteInstances to gone; default 500 ms. */
  readonly deleteMs?: number;
  /** VMs per page of a list; default 2, so every list has more than one page. */
  readonly pageSize?: number;
}

export interface FakeScaleSetVm {
  readonly instanceId: string;
  readonly imageReference: Record<string, string>;
  readonly createdAt: number;
  deletingSince?: number;
}

interface FakeScaleSet {
  readonly id: string;
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
  readonly location: string;
  capacity: number;
  imageReference: Record<string, string>;
  readonly vms: FakeScaleSetVm[];
  nextInstanceId: number;
}

interface FakeOperation {
  readonly name: string;
  readonly startTime: string;
  polls: number;
}

export interface AzureFake {
  readonly url: string;
  /** The server's certificate, for the client's tlsOptions.ca. */
  readonly ca: string;
  readonly requests: RecordedRequest[];
  /** A uniform scale set with upgrade policy Manual and `capacity` VMs on `imageReference`; returns its id. */
  createScaleSet(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    imageReference: Record<string, string>,
    capacity: number,
  ): string;
  scaleSet(id: string): {
    capacity: number;
    imageReference: Record<string, string>;
    vms: readonly FakeScaleSetVm[];
  };
  /** The VMs of every scale set that are Succeeded and not leaving, with their resource id and computer name. */
  running(): { scaleSetId: string; id: string; computerName: string; imageReference: Record<string, string> }[];
  /** The next `count` requests (of those `only` picks; default all) are answered 429 with Retry-After. */
  throttle(count: number, retryAfterSeconds?: number, only?: (r: RecordedRequest) => boolean): void;
  readonly throttled: number;
  close(): Promise<void>;
}

/** ARM's error body: {"error": {"code", "message"}}. */
export function armError(status: number, code: string, message: string, headers: Record<string, string> = {}): Answer {
  return { status, headers, body: { error: { code, message } } };
}

const API_VERSION = '2024-11-01';
const VMSS_PATH =
  /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/?]+)/i;

/** Uniform VMs are named <computerNamePrefix><instance id in base 36, 6 digits>. */
const computerName = (s: FakeScaleSet, vm: FakeScaleSetVm): string =>
  `${s.name}${Number(vm.instanceId).toString(36).padStart(6, '0')}`;

export async function startAzureFake(options: AzureFakeOptions = {}): Promise<AzureFake> {
  const polls = options.pollsPerOperation ?? 3;
  const bootMs = options.bootMs ?? 1_000;
  const deleteMs = options.deleteMs ?? 500;
  const pageSize = options.pageSize ?? 2;
  const tls = selfSignedCertificate();
  const server = await startHttpRecorder(tls);
  const sets = new Map<string, FakeScaleSet>();
  const operations = new Map<string, FakeOperation>();
  let burst: { left: number; retryAfter: number; only?: (r: RecordedRequest) => boolean } = {
    left: 0,
    retryAfter: 1,
  };
  let throttled = 0;
  let serial = 0;

  const key = (id: string): string => id.toLowerCase();

  /** The scale set's own loop: VMs up to capacity on the current model, finished deletions gone. */
  const settle = (): void => {
    const now = Date.now();
    for (const s of sets.values()) {
      const gone = s.vms.filter((v) => v.deletingSince !== undefined && now - v.deletingSince >= deleteMs);
      for (const v of gone) s.vms.splice(s.vms.indexOf(v), 1);
      const staying = s.vms.filter((v) => v.deletingSince === undefined);
      for (let n = staying.length; n < s.capacity; n++)
        s.vms.push({ instanceId: String(s.nextInstanceId++), imageReference: s.imageReference, createdAt: now });
      for (const extra of staying.slice(s.capacity)) extra.deletingSince = now;
    }
  };

  const provisioningState = (v: FakeScaleSetVm): string =>
    v.deletingSince !== undefined ? 'Deleting' : Date.now() - v.createdAt < bootMs ? 'Creating' : 'Succeeded';

  const scaleSetBody = (s: FakeScaleSet): Record<string, unknown> => ({
    id: s.id,
    name: s.name,
    type: 'Microsoft.Compute/virtualMachineScaleSets',
    location: s.location,
    sku: { name: 'Standard_D4s_v5', tier: 'Standard', capacity: s.capacity },
    properties: {
      provisioningState: 'Succeeded',
      orchestrationMode: 'Uniform',
      overprovision: false,
      upgradePolicy: { mode: 'Manual' },
      virtualMachineProfile: {
        osProfile: { computerNamePrefix: s.name, adminUsername: 'azureuser' },
        storageProfile: { imageReference: s.imageReference, osDisk: { createOption: 'FromImage' } },
      },
    },
  });

  const vmBody = (s: FakeScaleSet, v: FakeScaleSetVm): Record<string, unknown> => ({
    id: `${s.id}/virtualMachines/${v.instanceId}`,
    name: `${s.name}_${v.instanceId}`,
    type: 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines',
    location: s.location,
    instanceId: v.instanceId,
    sku: { name: 'Standard_D4s_v5', tier: 'Standard' },
    properties: {
      latestModelApplied: JSON.stringify(v.imageReference) === JSON.stringify(s.imageReference),
      provisioningState: provisioningState(v),
      timeCreated: new Date(v.createdAt).toISOString(),
      osProfile: { computerName: computerName(s, v) },
      storageProfile: { imageReference: v.imageReference },
    },
  });

  const operationUrl = (s: FakeScaleSet, name: string): string =>
    `${server.url}/subscriptions/${s.subscriptionId}/providers/Microsoft.Compute/locations/${s.location}/operations/${name}`;

  /** Starts a long-running operation: the headers ARM answers it with. */
  const operation = (s: FakeScaleSet, withLocation: boolean): Record<string, string> => {
    const name = `${(++serial).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
    operations.set(name, { name, startTime: new Date().toISOString(), polls: 0 });
    return {
      'azure-asyncoperation': `${operationUrl(s, name)}?api-version=${API_VERSION}`,
      ...(withLocation ? { location: `${operationUrl(s, name)}?monitor=true&api-version=${API_VERSION}` } : {}),
      'retry-after': String(options.operationRetryAfterSeconds ?? 0),
    };
  };

  const find = (r: RecordedRequest): { s?: FakeScaleSet; path: string } => {
    const m = VMSS_PATH.exec(r.path);
    const path = m?.[0] ?? r.path.split('?')[0] ?? '';
    return { ...(m ? { s: sets.get(key(m[0])) } : {}), path };
  };
  const notFound = (r: RecordedRequest): Answer => {
    const m = VMSS_PATH.exec(r.path);
    return armError(
      404,
      'ResourceNotFound',
      `The Resource 'Microsoft.Compute/virtualMachineScaleSets/${m?.[3] ?? ''}' under resource group '${m?.[2] ?? ''}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    );
  };

  for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'])
    server.route(method, /./, (r) => {
      if (burst.left <= 0 || (burst.only && !burst.only(r))) return undefined;
      burst.left -= 1;
      throttled += 1;
      return armError(
        429,
        'TooManyRequests',
        "The request is being throttled as the limit has been reached for operation group 'Microsoft.Compute/VMScaleSetVMs'.",
        { 'retry-after': String(burst.retryAfter) },
      );
    });
  for (const method of ['GET', 'POST', 'PATCH'])
    server.route(method, /./, () => {
      settle();
      return undefined;
    });

  server.route('GET', new RegExp(`${VMSS_PATH.source}/virtualMachines(\\?|$)`, 'i'), (r) => {
    const { s } = find(r);
    if (!s) return notFound(r);
    const start = Number(new URL(r.path, 'https://x').searchParams.get('$skiptoken') ?? 0);
    const value = s.vms.slice(start, start + pageSize).map((v) => vmBody(s, v));
    const next = start + pageSize < s.vms.length;
    return {
      body: {
        value,
        ...(next
          ? {
              nextLink: `${server.url}${s.id}/virtualMachines?api-version=${API_VERSION}&$skiptoken=${start + pageSize}`,
            }
          : {}),
      },
    };
  });
  server.route('GET', new RegExp(`${VMSS_PATH.source}(\\?|$)`, 'i'), (r) => {
    const { s } = find(r);
    return s ? { body: scaleSetBody(s) } : notFound(r);
  });
  server.route('PATCH', new RegExp(`${VMSS_PATH.source}(\\?|$)`, 'i'), (r) => {
    const { s } = find(r);
    if (!s) return notFound(r);
    const body = (r.body ?? {}) as {
      sku?: { capacity?: number };
      properties?: { virtualMachineProfile?: { storageProfile?: { imageReference?: Record<string, string> } } };
    };
    const capacity = body.sku?.capacity;
    if (capacity !== undefined) {
      if (!Number.isInteger(capacity) || capacity < 0)
        return armError(
          400,
          'InvalidParameter',
          `The value ${String(capacity)} of parameter 'sku.capacity' is invalid.`,
        );
      s.capacity = capacity;
    }
    const image = body.properties?.virtualMachineProfile?.storageProfile?.imageReference;
    if (image) s.imageReference = image;
    settle();
    // The update answers 200 with the model, still Updating, and an operation to poll.
    const model = scaleSetBody(s);
    const properties = { ...(model.properties as Record<string, unknown>), provisioningState: 'Updating' };
    return { status: 200, headers: operation(s, false), body: { ...model, properties } };
  });
  server.route('POST', new RegExp(`${VMSS_PATH.source}/delete(\\?|$)`, 'i'), (r) => {
    const { s } = find(r);
    if (!s) return notFound(r);
    const ids = (r.body as { instanceIds?: string[] } | undefined)?.instanceIds ?? [];
    const members = ids.map((id) => s.vms.find((v) => v.instanceId === id));
    const missing = ids.find((_, i) => members[i] === undefined);
    if (missing !== undefined)
      return armError(404, 'NotFound', `The entity was not found in this Azure location. Instance ID ${missing}.`);
    for (const v of members) {
      if (!v || v.deletingSince !== undefined) continue;
      v.deletingSince = Date.now();
      s.capacity -= 1;
    }
    return { status: 202, headers: operation(s, true) };
  });

  const OPERATION = /^\/subscriptions\/[^/]+\/providers\/Microsoft\.Compute\/locations\/[^/]+\/operations\/([^/?]+)/i;
  server.route('GET', OPERATION, (r) => {
    const name = OPERATION.exec(r.path)?.[1] ?? '';
    const op = operations.get(name);
    if (!op) return armError(404, 'NotFound', `The operation ${name} was not found.`);
    const monitor = new URL(r.path, 'https://x').searchParams.get('monitor') === 'true';
    // The Location URL answers 202 until the operation is over, then 200 without a body.
    if (monitor) return op.polls >= polls ? { status: 200 } : { status: 202, headers: { 'retry-after': '0' } };
    op.polls += 1;
    const done = op.polls >= polls;
    return {
      body: {
        name: op.name,
        status: done ? 'Succeeded' : 'InProgress',
        startTime: op.startTime,
        ...(done ? { endTime: new Date().toISOString() } : {}),
      },
    };
  });

  return {
    url: server.url,
    ca: tls.cert,
    requests: server.requests,
    createScaleSet(subscriptionId, resourceGroup, name, imageReference, capacity) {
      const id = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
      sets.set(key(id), {
        id,
        subscriptionId,
        resourceGroup,
        name,
        location: 'westeurope',
        capacity,
        imageReference,
        vms: [],
        nextInstanceId: 0,
      });
      settle();
      return id;
    },
    scaleSet(id) {
      settle();
      const s = sets.get(key(id));
      if (!s) throw new Error(`no scale set ${id}`);
      return s;
    },
    running() {
      settle();
      return [...sets.values()].flatMap((s) =>
        s.vms
          .filter((v) => provisioningState(v) === 'Succeeded')
          .map((v) => ({
            scaleSetId: s.id,
            id: `${s.id}/virtualMachines/${v.instanceId}`,
            computerName: computerName(s, v),
            imageReference: v.imageReference,
          })),
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
