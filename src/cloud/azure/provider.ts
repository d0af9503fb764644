/**
 * Azure virtual machine scale sets, uniform and flexible orchestration, through
 * @azure/arm-compute with @azure/identity's DefaultAzureCredential (a workload identity in AKS,
 * a managed identity, AZURE_* variables).
 *
 * - image: the model's storageProfile.imageReference; setGroupImage updates the model, and
 *   existing instances keep theirs (the scale set's upgrade policy must be Manual);
 * - surge: sku.capacity + count (the scale set names its new instances, so no ids);
 * - removal: deleteInstances of that instance, which lowers the capacity;
 * - long-running operations are polled to completion by the client, within a deadline.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TokenCredential } from '@azure/identity';
import type { ComputeManagementClient, VirtualMachineScaleSet } from '@azure/arm-compute';
import { parseGroupId } from '../group-id.js';
import {
  CloudError,
  type CloudErrorData,
  type CloudProvider,
  type GroupDescription,
  type Instance,
  type InstanceState,
} from '../provider.js';
import { byId, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_OPERATION_TIMEOUT_MS, FirstSeen, withDeadline } from '../calls.js';
import { azureCloudError } from './errors.js';
import { imageReference, imageString } from './image.js';
import { azureProviderID, parseAzureProviderID } from './provider-id.js';

export interface AzureProviderOptions {
  /** Another Resource Manager endpoint (a sovereign cloud, a test server); default: Azure's public cloud. */
  readonly endpoint?: string;
  /** Default: DefaultAzureCredential. */
  readonly credential?: TokenCredential;
  /** CA certificates to trust for the endpoint (PEM), e.g. a proxy's or a test server's. */
  readonly ca?: string;
  /** Per call; default 30 s. */
  readonly timeoutMs?: number;
  /** Per long-running operation; default 10 min. */
  readonly operationTimeoutMs?: number;
  /** How often a long-running operation is polled when the answer gives no Retry-After; default 5 s. */
  readonly pollIntervalMs?: number;
  /** The subscription listGroups lists (groupIds name their own subscription; only listing needs one). */
  readonly subscriptionId?: string;
}

interface ScaleSet {
  readonly groupId: string;
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
}

export class AzureProvider implements CloudProvider {
  readonly name = 'azure' as const;
  private readonly timeoutMs: number;
  private readonly clients = new Map<string, Promise<ComputeManagementClient>>();
  private credential: TokenCredential | undefined;
  /**
   * The error of a failed long-running operation, per call: the client's own error carries it
   * only in its message text, the operation's status answer has it as data.
   */
  private readonly callRecord = new AsyncLocalStorage<{ failed?: { code?: string; message?: string } }>();
  /** For VMs whose answer has no timeCreated (older API versions, a VM still being created). */
  private readonly firstSeen = new FirstSeen();
  /** Flexible VM id (lowercase) → scale set, as last described: such a providerID does not name its scale set. */
  private readonly membership = new Map<string, string>();

  constructor(private readonly options: AzureProviderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.credential = options.credential;
  }

  /** Every scale set of the configured subscription, as groupIds. */
  async listGroups(): Promise<readonly string[]> {
    const subscriptionId = this.options.subscriptionId;
    if (subscriptionId === undefined)
      throw new CloudError(
        'Permanent',
        'azure: list scale sets: no subscription configured; create the provider with a subscriptionId',
      );
    const client = await this.client({ groupId: '', subscriptionId, resourceGroup: '', name: '' });
    return this.call(`list scale sets of subscription ${subscriptionId}`, {}, async (abortSignal) => {
      const ids: string[] = [];
      for await (const vmss of client.virtualMachineScaleSets.listAll({ abortSignal })) if (vmss.id) ids.push(vmss.id);
      return ids.sort();
    });
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    const s = parseScaleSet(groupId);
    const vmss = await this.scaleSet(s);
    const image = imageString(vmss.virtualMachineProfile?.storageProfile?.imageReference);
    const instances: Instance[] = [];
    const client = await this.client(s);
    const flexible = vmss.orchestrationMode === 'Flexible';
    await this.call(`list instances of scale set ${groupId}`, { groupId }, async (abortSignal) => {
      if (!flexible) {
        for await (const vm of client.virtualMachineScaleSetVMs.list(s.resourceGroup, s.name, { abortSignal })) {
          instances.push(
            toInstance(
              vm.instanceId ?? '',
              vm.id ?? '',
              imageString(vm.storageProfile?.imageReference),
              vm.provisioningState,
              vm.timeCreated?.toISOString() ?? this.firstSeen.at(vm.id ?? ''),
            ),
          );
        }
      } else {
        const filter = `'virtualMachineScaleSet/id' eq '${vmss.id ?? ''}'`;
        for await (const vm of client.virtualMachines.list(s.resourceGroup, { filter, abortSignal })) {
          this.membership.set((vm.id ?? '').toLowerCase(), groupId);
          instances.push(
            toInstance(
              vm.name ?? '',
              vm.id ?? '',
              imageString(vm.storageProfile?.imageReference),
              vm.provisioningState,
              vm.timeCreated?.toISOString() ?? this.firstSeen.at(vm.id ?? ''),
            ),
          );
        }
      }
    });
    return { groupId, image, targetSize: Number(vmss.sku?.capacity ?? 0), instances: instances.sort(byId) };
  }

  async setGroupImage(groupId: string, image: string): Promise<void> {
    const ref = imageReference(image);
    if (!ref) {
      throw new CloudError(
        'Permanent',
        `azure: set image of scale set ${groupId}: ${JSON.stringify(image)} is not an image id (/subscriptions/…/galleries/…/versions/…, /CommunityGalleries/…) or a Marketplace URN publisher:offer:sku:version`,
        { groupId },
      );
    }
    const s = parseScaleSet(groupId);
    const vmss = await this.scaleSet(s);
    const mode = vmss.upgradePolicy?.mode ?? 'Manual';
    if (mode !== 'Manual') {
      throw new CloudError(
        'Permanent',
        `azure: scale set ${groupId} has upgrade policy ${mode}, so Azure would replace instances itself; set upgradePolicy.mode to Manual and let drydock roll`,
        { groupId },
      );
    }
    if (imageString(vmss.virtualMachineProfile?.storageProfile?.imageReference) === image) return;
    await this.update(
      s,
      { virtualMachineProfile: { storageProfile: { imageReference: ref } } },
      `set image of scale set ${groupId}`,
    );
  }

  async addCapacity(groupId: string, count: number): Promise<readonly string[]> {
    if (!Number.isInteger(count) || count < 1)
      throw new CloudError(
        'Permanent',
        `azure: add capacity to scale set ${groupId}: count ${count} is not a positive integer`,
        { groupId },
      );
    const s = parseScaleSet(groupId);
    const vmss = await this.scaleSet(s);
    const capacity = Number(vmss.sku?.capacity ?? 0) + count;
    await this.update(s, { sku: { ...vmss.sku, capacity } }, `set capacity of scale set ${groupId} to ${capacity}`);
    return [];
  }

  async removeInstance(groupId: string, instanceId: string): Promise<void> {
    const s = parseScaleSet(groupId);
    const { instances } = await this.describeGroup(groupId);
    const member = instances.find((i) => i.id === instanceId);
    // Gone, or already on its way out: nothing to do (and never touch another scale set's VM).
    if (!member || member.state === 'terminating') return;
    const client = await this.client(s);
    const ids = { groupId, instanceId };
    await this.call(
      `delete instance ${instanceId} of scale set ${groupId}`,
      ids,
      (abortSignal) =>
        client.virtualMachineScaleSets.beginDeleteInstancesAndWait(
          s.resourceGroup,
          s.name,
          { instanceIds: [instanceId] },
          { abortSignal, updateIntervalInMs: this.options.pollIntervalMs ?? 5_000 },
        ),
      this.options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
    );
  }

  /** Uniform: read off the providerID. Flexible: the scale set that last listed the VM. */
  instanceForProviderID(providerID: string): { groupId: string; instanceId: string } | undefined {
    const parsed = parseAzureProviderID(providerID);
    if (!parsed) return undefined;
    if (parsed.scaleSetId !== undefined) return { groupId: parsed.scaleSetId, instanceId: parsed.instanceId };
    const groupId = this.membership.get(providerID.slice('azure://'.length).toLowerCase());
    return groupId !== undefined ? { groupId, instanceId: parsed.instanceId } : undefined;
  }

  private async scaleSet(s: ScaleSet): Promise<VirtualMachineScaleSet> {
    const client = await this.client(s);
    return this.call(`describe scale set ${s.groupId}`, { groupId: s.groupId }, (abortSignal) =>
      client.virtualMachineScaleSets.get(s.resourceGroup, s.name, { abortSignal }),
    );
  }

  private async update(
    s: ScaleSet,
    patch: Parameters<ComputeManagementClient['virtualMachineScaleSets']['update']>[2],
    what: string,
  ): Promise<void> {
    const client = await this.client(s);
    await this.call(
      what,
      { groupId: s.groupId },
      (abortSignal) =>
        client.virtualMachineScaleSets.beginUpdateAndWait(s.resourceGroup, s.name, patch, {
          abortSignal,
          updateIntervalInMs: this.options.pollIntervalMs ?? 5_000,
        }),
      this.options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
    );
  }

  private client(s: ScaleSet): Promise<ComputeManagementClient> {
    let c = this.clients.get(s.subscriptionId);
    if (!c) {
      c = (async () => {
        const { ComputeManagementClient: Client } = await import('@azure/arm-compute');
        if (!this.credential) {
          const { DefaultAzureCredential } = await import('@azure/identity');
          this.credential = new DefaultAzureCredential();
        }
        const client = new Client(this.credential, s.subscriptionId, {
          ...(this.options.endpoint !== undefined ? { endpoint: this.options.endpoint } : {}),
          ...(this.options.ca !== undefined ? { tlsOptions: { ca: this.options.ca } } : {}),
          // No retries inside a call: a throttle or an outage reaches the planner, which waits.
          retryOptions: { maxRetries: 0 },
        });
        client.pipeline.addPolicy({
          name: 'drydockFailedOperations',
          sendRequest: async (request, next) => {
            const response = await next(request);
            const record = this.callRecord.getStore();
            if (record && response.bodyAsText && /"status"\s*:\s*"Failed"/.test(response.bodyAsText)) {
              const body = parseJson(response.bodyAsText) as
                { status?: string; error?: { code?: string; message?: string } } | undefined;
              if (body?.status === 'Failed' && body.error) record.failed = body.error;
            }
            return response;
          },
        });
        return client;
      })();
      this.clients.set(s.subscriptionId, c);
      c.catch(() => this.clients.delete(s.subscriptionId));
    }
    return c;
  }

  private async call<T>(
    context: string,
    data: CloudErrorData,
    fn: (signal: AbortSignal) => Promise<T>,
    timeoutMs = this.timeoutMs,
  ): Promise<T> {
    try {
      const record: { failed?: { code?: string; message?: string } } = {};
      return await withDeadline(`azure: ${context}`, timeoutMs, data, (signal) =>
        this.callRecord.run(record, async () => {
          try {
            return await fn(signal);
          } catch (err) {
            const failed = record.failed;
            throw failed
              ? Object.assign(new Error(`the operation failed: ${failed.message ?? ''}`), { code: failed.code })
              : err;
          }
        }),
      );
    } catch (err) {
      throw azureCloudError(err, context, data);
    }
  }
}

function parseScaleSet(groupId: string): ScaleSet {
  const p = parseGroupId('azure', groupId);
  if (p.provider !== 'azure') throw new CloudError('Permanent', `azure: ${groupId} is not a scale set`, { groupId });
  return { groupId, subscriptionId: p.subscriptionId, resourceGroup: p.resourceGroup, name: p.name };
}

function toInstance(
  id: string,
  resourceId: string,
  image: string,
  provisioningState: string | undefined,
  createdAt: string,
): Instance {
  return { id, providerID: azureProviderID(resourceId), image, state: instanceState(provisioningState), createdAt };
}

function instanceState(provisioningState: string | undefined): InstanceState {
  if (provisioningState === 'Deleting') return 'terminating';
  if (provisioningState === 'Creating' || provisioningState === undefined) return 'pending';
  return 'running';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
