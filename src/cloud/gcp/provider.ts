/**
 * GCP managed instance groups (zonal and regional) with instance templates, through the Node
 * client for Compute Engine over its REST transport.
 *
 * - image: the boot disk's sourceImage of the group's instance template, in path form
 *   (projects/<p>/global/images/<name>); setGroupImage inserts a copy of the current template
 *   with the image replaced (named deterministically, so a retry finds it) and sets it on the group;
 * - surge: resize to targetSize + count (the group names its new instances, so no ids);
 * - removal: deleteInstances of that instance, which lowers the target size;
 * - every long-running operation is waited for (operations.wait) until DONE or its deadline.
 */
import type * as Compute from '@google-cloud/compute';
import {
  CloudError,
  type CloudErrorData,
  type CloudProvider,
  type GroupDescription,
  type Instance,
} from '../provider.js';
import { byId, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_OPERATION_TIMEOUT_MS, FirstSeen, withDeadline } from '../calls.js';
import { GcpHttpFailureError, type GcpAuthClient } from './auth.js';
import { createClients, type Clients } from './clients.js';
import {
  bootImage,
  copyWithImage,
  derivedTemplateName,
  instanceState,
  lastSegment,
  parseGcpGroup,
  parseTemplateUrl,
  templateOf,
  type Group,
} from './resources.js';
import { gcpCloudError, gcpHttpError, gcpOperationError } from './errors.js';
import { gceProviderID, parseGceProviderID, parseInstanceUrl, resourcePath } from './provider-id.js';

type IOperation = Compute.protos.google.cloud.compute.v1.IOperation;
type IManagedInstance = Compute.protos.google.cloud.compute.v1.IManagedInstance;
type IInstanceGroupManager = Compute.protos.google.cloud.compute.v1.IInstanceGroupManager;

export interface GcpProviderOptions {
  /** Another endpoint (a test server), e.g. http://127.0.0.1:8080; default: Compute Engine's. */
  readonly endpoint?: string;
  /** Default: Application Default Credentials. */
  readonly authClient?: GcpAuthClient;
  /** Per call; default 30 s. */
  readonly timeoutMs?: number;
  /** Per long-running operation; default 10 min. */
  readonly operationTimeoutMs?: number;
  /** Managed instances per page; default 500 (the API's maximum). */
  readonly pageSize?: number;
  /** The project listGroups lists (groupIds name their own project; only listing needs one). */
  readonly project?: string;
}

const IMAGE_PATH = /^projects\/[^/]+\/global\/images\/[^/]+$/;

export class GcpProvider implements CloudProvider {
  readonly name = 'gcp' as const;
  private readonly timeoutMs: number;
  private clientsPromise: Promise<Clients> | undefined;
  /** Instance templates never change: each is read once. */
  private readonly templateImages = new Map<string, string>();
  /** Creation times never change: each instance is read once. */
  private readonly createdAt = new Map<string, string>();
  private readonly firstSeen = new FirstSeen();
  /** gce providerID → group, as last described: a providerID does not name its group. */
  private readonly membership = new Map<string, string>();

  constructor(private readonly options: GcpProviderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  /** Every managed instance group of the configured project, zonal and regional, as groupIds. */
  async listGroups(): Promise<readonly string[]> {
    const project = this.options.project;
    if (project === undefined)
      throw new CloudError('Permanent', 'gcp: list groups: no project configured; create the provider with a project');
    const c = await this.clients();
    return this.call(`list groups of project ${project}`, {}, async () => {
      const ids: string[] = [];
      for await (const [scope, list] of c.zonal.aggregatedListAsync(
        { project, maxResults: this.options.pageSize ?? 500 },
        { ...this.callOptions(), autoPaginate: false },
      )) {
        for (const m of list.instanceGroupManagers ?? [])
          if (m.name) ids.push(`projects/${project}/${scope}/instanceGroupManagers/${m.name}`);
      }
      return ids.sort();
    });
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    const g = parseGcpGroup(groupId);
    const mig = await this.manager(g);
    const image = await this.templateImage(g, templateOf(mig, g));
    const managed = await this.managedInstances(g);
    const instances: Instance[] = [];
    for (const m of managed) {
      const at = parseInstanceUrl(m.instance ?? '');
      if (!at) continue;
      const providerID = gceProviderID(at.project, at.zone, at.name);
      this.membership.set(providerID, groupId);
      instances.push({
        id: at.name,
        providerID,
        image: m.version?.instanceTemplate ? await this.templateImage(g, m.version.instanceTemplate) : image,
        state: instanceState(m),
        createdAt: await this.creationTime(g, at),
      });
    }
    return { groupId, image, targetSize: Number(mig.targetSize ?? 0), instances: instances.sort(byId) };
  }

  async setGroupImage(groupId: string, image: string): Promise<void> {
    if (!IMAGE_PATH.test(image)) {
      throw new CloudError(
        'Permanent',
        `gcp: set image of group ${groupId}: ${JSON.stringify(image)} is not an image path; write projects/<project>/global/images/<name>`,
        { groupId },
      );
    }
    const g = parseGcpGroup(groupId);
    const mig = await this.manager(g);
    if (mig.updatePolicy?.type === 'PROACTIVE') {
      throw new CloudError(
        'Permanent',
        `gcp: group ${groupId} has a PROACTIVE update policy, so the group would replace instances itself; set updatePolicy.type to OPPORTUNISTIC and let drydock roll`,
        { groupId },
      );
    }
    const currentUrl = templateOf(mig, g);
    const current = parseTemplateUrl(currentUrl, g);
    const c = await this.clients();
    const source = await this.call(`read instance template ${current.name}`, { groupId }, () =>
      c.templates.get({ project: current.project, instanceTemplate: current.name }, this.callOptions()),
    );
    const template = source[0];
    if (bootImage(template) === image) return;
    const name = derivedTemplateName(current.name, image);
    const body = copyWithImage(template, name, image);
    try {
      const [op] = await this.call(`insert instance template ${name}`, { groupId }, () =>
        c.templates.insert({ project: g.project, instanceTemplateResource: body }, this.callOptions()),
      );
      await this.waitFor(g, op.latestResponse as IOperation, `insert instance template ${name}`, { groupId });
    } catch (err) {
      // Made by an earlier attempt that did not finish: the name says it has this image.
      if (!(err instanceof CloudError && /alreadyExists|HTTP 409/.test(err.message))) throw err;
    }
    const url = `projects/${g.project}/global/instanceTemplates/${name}`;
    const what = `set instance template ${name} on group ${groupId}`;
    const [op] =
      g.scope === 'zone'
        ? await this.call(what, { groupId }, () =>
            c.zonal.setInstanceTemplate(
              {
                project: g.project,
                zone: g.location,
                instanceGroupManager: g.name,
                instanceGroupManagersSetInstanceTemplateRequestResource: { instanceTemplate: url },
              },
              this.callOptions(),
            ),
          )
        : await this.call(what, { groupId }, () =>
            c.regional.setInstanceTemplate(
              {
                project: g.project,
                region: g.location,
                instanceGroupManager: g.name,
                regionInstanceGroupManagersSetTemplateRequestResource: { instanceTemplate: url },
              },
              this.callOptions(),
            ),
          );
    await this.waitFor(g, op.latestResponse as IOperation, what, { groupId });
  }

  async addCapacity(groupId: string, count: number): Promise<readonly string[]> {
    if (!Number.isInteger(count) || count < 1)
      throw new CloudError(
        'Permanent',
        `gcp: add capacity to group ${groupId}: count ${count} is not a positive integer`,
        { groupId },
      );
    const g = parseGcpGroup(groupId);
    const mig = await this.manager(g);
    const size = Number(mig.targetSize ?? 0) + count;
    const c = await this.clients();
    const what = `resize group ${groupId} to ${size}`;
    const [op] =
      g.scope === 'zone'
        ? await this.call(what, { groupId }, () =>
            c.zonal.resize(
              { project: g.project, zone: g.location, instanceGroupManager: g.name, size },
              this.callOptions(),
            ),
          )
        : await this.call(what, { groupId }, () =>
            c.regional.resize(
              { project: g.project, region: g.location, instanceGroupManager: g.name, size },
              this.callOptions(),
            ),
          );
    await this.waitFor(g, op.latestResponse as IOperation, what, { groupId });
    return [];
  }

  async removeInstance(groupId: string, instanceId: string): Promise<void> {
    const g = parseGcpGroup(groupId);
    const managed = await this.managedInstances(g);
    const member = managed.find((m) => parseInstanceUrl(m.instance ?? '')?.name === instanceId);
    // Gone, or already on its way out: nothing to do.
    if (!member || instanceState(member) === 'terminating') return;
    const instances = [resourcePath(member.instance ?? '')];
    const c = await this.clients();
    const what = `delete instance ${instanceId} of group ${groupId}`;
    const ids = { groupId, instanceId };
    const [op] =
      g.scope === 'zone'
        ? await this.call(what, ids, () =>
            c.zonal.deleteInstances(
              {
                project: g.project,
                zone: g.location,
                instanceGroupManager: g.name,
                instanceGroupManagersDeleteInstancesRequestResource: {
                  instances,
                  skipInstancesOnValidationError: true,
                },
              },
              this.callOptions(),
            ),
          )
        : await this.call(what, ids, () =>
            c.regional.deleteInstances(
              {
                project: g.project,
                region: g.location,
                instanceGroupManager: g.name,
                regionInstanceGroupManagersDeleteInstancesRequestResource: {
                  instances,
                  skipInstancesOnValidationError: true,
                },
              },
              this.callOptions(),
            ),
          );
    await this.waitFor(g, op.latestResponse as IOperation, what, ids);
  }

  /** The group comes from the last describeGroup that listed the instance. */
  instanceForProviderID(providerID: string): { groupId: string; instanceId: string } | undefined {
    const parsed = parseGceProviderID(providerID);
    const groupId = parsed && this.membership.get(providerID);
    return parsed && groupId !== undefined ? { groupId, instanceId: parsed.name } : undefined;
  }

  private async manager(g: Group): Promise<IInstanceGroupManager> {
    const c = await this.clients();
    const what = `describe group ${g.groupId}`;
    const [mig] =
      g.scope === 'zone'
        ? await this.call(what, { groupId: g.groupId }, () =>
            c.zonal.get({ project: g.project, zone: g.location, instanceGroupManager: g.name }, this.callOptions()),
          )
        : await this.call(what, { groupId: g.groupId }, () =>
            c.regional.get(
              { project: g.project, region: g.location, instanceGroupManager: g.name },
              this.callOptions(),
            ),
          );
    return mig;
  }

  private async managedInstances(g: Group): Promise<IManagedInstance[]> {
    const c = await this.clients();
    const all: IManagedInstance[] = [];
    let pageToken: string | undefined;
    const maxResults = this.options.pageSize ?? 500;
    do {
      const what = `list instances of group ${g.groupId}`;
      const token = pageToken;
      const page =
        g.scope === 'zone'
          ? await this.call(what, { groupId: g.groupId }, () =>
              c.zonal.listManagedInstances(
                {
                  project: g.project,
                  zone: g.location,
                  instanceGroupManager: g.name,
                  maxResults,
                  ...(token ? { pageToken: token } : {}),
                },
                { ...this.callOptions(), autoPaginate: false },
              ),
            )
          : await this.call(what, { groupId: g.groupId }, () =>
              c.regional.listManagedInstances(
                {
                  project: g.project,
                  region: g.location,
                  instanceGroupManager: g.name,
                  maxResults,
                  ...(token ? { pageToken: token } : {}),
                },
                { ...this.callOptions(), autoPaginate: false },
              ),
            );
      all.push(...page[0]);
      pageToken = (page[2] as { nextPageToken?: string | null } | undefined)?.nextPageToken ?? undefined;
    } while (pageToken);
    return all;
  }

  private async templateImage(g: Group, url: string): Promise<string> {
    const key = resourcePath(url);
    const known = this.templateImages.get(key);
    if (known !== undefined) return known;
    const t = parseTemplateUrl(url, g);
    const c = await this.clients();
    const [template] = await this.call(`read instance template ${t.name}`, { groupId: g.groupId }, () =>
      c.templates.get({ project: t.project, instanceTemplate: t.name }, this.callOptions()),
    );
    const image = bootImage(template);
    this.templateImages.set(key, image);
    return image;
  }

  private async creationTime(g: Group, at: { project: string; zone: string; name: string }): Promise<string> {
    const key = `${at.project}/${at.zone}/${at.name}`;
    const known = this.createdAt.get(key);
    if (known !== undefined) return known;
    const c = await this.clients();
    try {
      const [inst] = await this.call(`read instance ${at.name}`, { groupId: g.groupId, instanceId: at.name }, () =>
        c.instances.get({ project: at.project, zone: at.zone, instance: at.name }, this.callOptions()),
      );
      const created = new Date(inst.creationTimestamp ?? 0).toISOString();
      this.createdAt.set(key, created);
      return created;
    } catch (err) {
      // Still being created (no instance resource yet).
      if (err instanceof CloudError && err.code === 'NotFound') return this.firstSeen.at(key);
      throw err;
    }
  }

  private async waitFor(g: Group, op: IOperation, what: string, data: CloudErrorData): Promise<void> {
    const c = await this.clients();
    const limit = Date.now() + (this.options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS);
    let current = op;
    while (String(current.status) !== 'DONE') {
      if (Date.now() > limit)
        throw new CloudError(
          'Transient',
          `gcp: ${what}: operation ${current.name ?? ''} not done in time; it may still finish, retry`,
          data,
        );
      const name = current.name ?? '';
      const zone = lastSegment(current.zone);
      const region = lastSegment(current.region);
      // operations.wait returns when the operation is DONE or after about 2 minutes.
      [current] = zone
        ? await this.call(`${what}: wait`, data, () =>
            c.zoneOps.wait({ project: g.project, zone, operation: name }, this.callOptions()),
          )
        : region
          ? await this.call(`${what}: wait`, data, () =>
              c.regionOps.wait({ project: g.project, region, operation: name }, this.callOptions()),
            )
          : await this.call(`${what}: wait`, data, () =>
              c.globalOps.wait({ project: g.project, operation: name }, this.callOptions()),
            );
    }
    if (current.error?.errors && current.error.errors.length > 0) throw gcpOperationError(current, what, data);
  }

  private clients(): Promise<Clients> {
    this.clientsPromise ??= createClients(this.options);
    this.clientsPromise.catch(() => {
      this.clientsPromise = undefined;
    });
    return this.clientsPromise;
  }

  /** The client's own deadline per call, and no retries of its own: the planner decides when to retry. */
  private callOptions(): { timeout: number; maxRetries: number } {
    return { timeout: this.timeoutMs, maxRetries: 0 };
  }

  private async call<T>(context: string, data: CloudErrorData, fn: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(`gcp: ${context}`, this.timeoutMs + 1_000, data, fn);
    } catch (err) {
      if (err instanceof GcpHttpFailureError) throw gcpHttpError(err.failure, context, data);
      throw gcpCloudError(err, context, data);
    }
  }
}
