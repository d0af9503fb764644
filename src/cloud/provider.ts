/**
 * The one interface drydock needs from a cloud: scaling groups, the image their new
 * instances get, surge and targeted removal. Every provider (sim, aws, gcp, azure) implements it.
 */
import type { Provider } from '../spec/model.js';
import { CodedError } from '../errors.js';

export type InstanceState = 'pending' | 'running' | 'terminating';

export interface Instance {
  /** Provider's instance id. */
  readonly id: string;
  /** The providerID the instance's Node carries (spec.providerID), e.g. sim://workers/i-0003. */
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

/**
 * What a caller should do next, by code:
 * - NotFound: the group or instance does not exist; a person must fix the spec (no retry).
 * - Throttled: wait `retryAfterSeconds`, then retry.
 * - Transient: retry with backoff (5xx, timeouts, connection errors).
 * - Permanent: the request itself is wrong (empty image, bad count); no retry.
 * - QuotaExceeded: the group or account is at its instance limit; retrying only helps once
 *   instances have gone (a surge must wait, or a person raises the quota).
 */
export type CloudErrorCode = 'NotFound' | 'Throttled' | 'Transient' | 'Permanent' | 'QuotaExceeded';

export const CLOUD_ERROR_CODES = [
  'NotFound',
  'Throttled',
  'Transient',
  'Permanent',
  'QuotaExceeded',
] as const satisfies readonly CloudErrorCode[];

export interface CloudErrorData {
  readonly groupId?: string;
  readonly instanceId?: string;
  /** Throttled: how long to wait before the next call. */
  readonly retryAfterSeconds?: number;
  /** QuotaExceeded: which limit was hit and by how much. */
  readonly quota?: {
    readonly scope: 'group' | 'total';
    readonly limit: number;
    readonly inUse: number;
    readonly requested: number;
  };
}

/** Typed cloud error: callers decide what to do by `code`, never by message text. */
export class CloudError extends CodedError<CloudErrorCode, CloudErrorData> {
  override readonly name = 'CloudError';
  constructor(code: CloudErrorCode, message: string, data: CloudErrorData = {}) {
    super(code, message, data);
  }
}

export function isCloudErrorCode(value: unknown): value is CloudErrorCode {
  return typeof value === 'string' && (CLOUD_ERROR_CODES as readonly string[]).includes(value);
}

/** Whether repeating the same call later can succeed without a person changing anything. */
export function isRetryable(code: CloudErrorCode): boolean {
  return code === 'Throttled' || code === 'Transient';
}
