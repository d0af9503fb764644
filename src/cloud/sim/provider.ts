/**
 * The simulated cloud as a CloudProvider, in the same process: what tests and the sequence
 * simulation use. Over the network the same cloud is reached through SimHttpProvider.
 */
import type { CloudProvider, GroupDescription } from '../provider.js';
import type { SimCloud } from './cloud.js';
import { parseSimProviderID } from './nodes.js';

export class SimProvider implements CloudProvider {
  readonly name = 'sim' as const;

  constructor(readonly cloud: SimCloud) {}

  listGroups(): Promise<readonly string[]> {
    return this.cloud.listGroups();
  }

  describeGroup(groupId: string): Promise<GroupDescription> {
    return this.cloud.describeGroup(groupId);
  }

  setGroupImage(groupId: string, image: string): Promise<void> {
    return this.cloud.setGroupImage(groupId, image);
  }

  addCapacity(groupId: string, count: number): Promise<readonly string[]> {
    return this.cloud.addCapacity(groupId, count);
  }

  removeInstance(groupId: string, instanceId: string): Promise<void> {
    return this.cloud.removeInstance(groupId, instanceId);
  }

  instanceForProviderID(providerID: string): { groupId: string; instanceId: string } | undefined {
    return parseSimProviderID(providerID);
  }
}
