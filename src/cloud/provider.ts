/**
 * The one interface drydock needs from a cloud: scaling groups, the image their new
 * instances get, surge and targeted removal. Every provider (sim, aws, gcp, azure) implements it.
 */
import type { Provider } from '../spec/model.js';

export type InstanceState = 'pending' | 'running' | 'terminating';

export interface Instance {
  /** Provider's instance id. */
  readonly id: string;
  /** The providerID the instance's Node carries (spec.providerID), e.g. sim://workers/i-3. */
  readonly providerID: string;
  /** Image the instance was created from. */
  readonly image: string;
  readonly state: InstanceState;
  /** ISO 8601. */
  readonly createdAt: string;
}

export interface GroupDescription {
  readonly groupId: string;
  /** Image new instances get. */
  readonly image: string;
  readonly targetSize: number;
  /** Sorted by id. */
  readonly instances: readonly Instance[];
}

export interface CloudProvider {
  readonly name: Provider;
  listGroups(): Promise<readonly string[]>;
  describeGroup(groupId: string): Promise<GroupDescription>;
  /** Sets the image for instances created from now on; existing instances keep theirs. */
  setGroupImage(groupId: string, image: string): Promise<void>;
  /** Raises the target size by `count` (surge); resolves to the ids of the new instances. */
  addCapacity(groupId: string, count: number): Promise<readonly string[]>;
  /** Removes exactly this instance and lowers the target size by one. Idempotent. */
  removeInstance(groupId: string, instanceId: string): Promise<void>;
  /** The instance a Node's providerID names, or undefined when none of this provider's. */
  instanceForProviderID(providerID: string): { groupId: string; instanceId: string } | undefined;
}

export type CloudErrorCode = 'NotFound' | 'Throttled' | 'Transient' | 'Permanent';

/** Typed cloud error: callers decide what to do by `code`, never by message text. */
export class CloudError extends Error {
  override readonly name = 'CloudError';
  constructor(
    readonly code: CloudErrorCode,
    message: string,
    readonly data: { readonly groupId?: string; readonly instanceId?: string; readonly retryAfterSeconds?: number } = {},
  ) {
    super(message);
  }

  toJSON(): { name: string; code: CloudErrorCode; message: string; data: CloudError['data'] } {
    return { name: this.name, code: this.code, message: this.message, data: this.data };
  }
}
