/**
 * The simulated cloud's state transitions as pure functions over the persisted records:
 * lookups and checks that throw typed errors, and the new state a change produces. SimCloud
 * decides when they run and persists what they return.
 */
import { CloudError, type GroupDescription, type Instance } from '../provider.js';
import type { SimCloudConfig, SimGroupConfig, SimQuota } from './config.js';
import { providerIDFor } from './nodes.js';
import type { GroupRecord, InstanceRecord, SimState } from './state.js';

export const MAX_SURGE_PER_CALL = 1000;
export const MAX_IMAGE_LENGTH = 1024;

export function findGroup(state: SimState, groupId: string): GroupRecord {
  const group = state.groups.find((g) => g.id === groupId);
  if (!group) {
    const known = state.groups.map((g) => g.id).join(', ') || 'none';
    throw new CloudError('NotFound', `sim cloud: group "${groupId}" does not exist (known groups: ${known})`, {
      groupId,
    });
  }
  return group;
}

export function checkCount(groupId: string, count: unknown): asserts count is number {
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_SURGE_PER_CALL) {
    throw new CloudError(
      'Permanent',
      `sim cloud: cannot add ${JSON.stringify(count)} instances to group "${groupId}": count must be a whole number from 1 to ${MAX_SURGE_PER_CALL}`,
      { groupId },
    );
  }
}

export function checkInstanceId(groupId: string, instanceId: unknown): asserts instanceId is string {
  if (typeof instanceId !== 'string' || !/^i-\d{4,}$/.test(instanceId)) {
    throw new CloudError(
      'Permanent',
      `sim cloud: ${JSON.stringify(instanceId)} is not an instance id of group "${groupId}"; sim instance ids look like i-0001 (a Node's name is <group>-<instance id>)`,
      { groupId },
    );
  }
}

export function checkImage(groupId: string, image: unknown): asserts image is string {
  if (typeof image !== 'string' || image.trim() === '') {
    throw new CloudError('Permanent', `sim cloud: image for group "${groupId}" is empty; give the image's name`, {
      groupId,
    });
  }
  if (image !== image.trim() || image.length > MAX_IMAGE_LENGTH || /\p{Cc}/u.test(image)) {
    throw new CloudError(
      'Permanent',
      `sim cloud: image ${JSON.stringify(image.slice(0, 80))} for group "${groupId}" is not a valid image name (no surrounding spaces or control characters, at most ${MAX_IMAGE_LENGTH} characters)`,
      { groupId },
    );
  }
}

/** Throws QuotaExceeded when `requested` more instances would break a limit. */
export function checkQuota(state: SimState, quota: SimQuota, group: GroupRecord, requested: number): void {
  const { maxInstancesPerGroup, maxInstancesTotal } = quota;
  // Terminating instances still hold quota until they are gone, as in a real cloud.
  const inGroup = group.instances.length;
  if (maxInstancesPerGroup !== undefined && inGroup + requested > maxInstancesPerGroup) {
    throw new CloudError(
      'QuotaExceeded',
      `sim cloud: cannot add ${requested} instances to group "${group.id}": quota of ${maxInstancesPerGroup} instances per group, ${inGroup} in use`,
      { groupId: group.id, quota: { scope: 'group', limit: maxInstancesPerGroup, inUse: inGroup, requested } },
    );
  }
  const total = state.groups.reduce((n, g) => n + g.instances.length, 0);
  if (maxInstancesTotal !== undefined && total + requested > maxInstancesTotal) {
    throw new CloudError(
      'QuotaExceeded',
      `sim cloud: cannot add ${requested} instances to group "${group.id}": quota of ${maxInstancesTotal} instances in total, ${total} in use`,
      { groupId: group.id, quota: { scope: 'total', limit: maxInstancesTotal, inUse: total, requested } },
    );
  }
}

/** The group with `count` new pending instances on its current image, booting after its delay. */
export function createInstances(
  group: GroupRecord,
  count: number,
  now: number,
  defaultBootDelaySeconds: number,
): GroupRecord {
  const bootAt = now + (group.bootDelaySeconds ?? defaultBootDelaySeconds) * 1000;
  const created: InstanceRecord[] = [];
  for (let n = 0; n < count; n++) {
    created.push({
      id: instanceId(group.nextInstance + n),
      image: group.image,
      state: 'pending',
      createdAt: now,
      bootAt,
      joins: false,
      registered: false,
    });
  }
  return { ...group, nextInstance: group.nextInstance + count, instances: [...group.instances, ...created] };
}

/**
 * Adds configured groups not yet in the state (with their initial instances); for known
 * groups the configuration's definition (role, labels, resources) wins and the state's image
 * and instances stay. `orphans`: groups in the state the configuration no longer names (kept).
 */
export function mergeConfig(
  state: SimState,
  config: SimCloudConfig,
  now: number,
): { state: SimState; orphans: string[] } {
  let groups = [...state.groups];
  for (const def of config.groups) {
    if (groups.some((g) => g.id === def.id)) {
      groups = groups.map((g) => (g.id === def.id ? { ...g, ...definition(def) } : g));
    } else {
      const empty: GroupRecord = { id: def.id, image: def.image, nextInstance: 1, instances: [], ...definition(def) };
      groups.push(def.size > 0 ? createInstances(empty, def.size, now, config.bootDelaySeconds) : empty);
    }
  }
  const orphans = groups.filter((g) => !config.groups.some((d) => d.id === g.id)).map((g) => g.id);
  return { state: { ...state, groups: groups.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) }, orphans };
}

function definition(def: SimGroupConfig): Pick<GroupRecord, 'role' | 'labels' | 'resources' | 'bootDelaySeconds'> {
  return {
    role: def.role,
    labels: def.labels,
    resources: def.resources,
    ...(def.bootDelaySeconds === undefined ? {} : { bootDelaySeconds: def.bootDelaySeconds }),
  };
}

export function describe(group: GroupRecord): GroupDescription {
  const instances: Instance[] = [...group.instances]
    .sort((a, b) => compareIds(a.id, b.id))
    .map((i) => ({
      id: i.id,
      providerID: providerIDFor(group.id, i.id),
      image: i.image,
      state: i.state,
      createdAt: new Date(i.createdAt).toISOString(),
    }));
  return {
    groupId: group.id,
    image: group.image,
    targetSize: group.instances.filter((i) => i.state !== 'terminating').length,
    instances,
  };
}

export function replaceGroup(state: SimState, group: GroupRecord): SimState {
  return { ...state, groups: state.groups.map((g) => (g.id === group.id ? group : g)) };
}

export function replaceInstance(state: SimState, groupId: string, inst: InstanceRecord): SimState {
  return {
    ...state,
    groups: state.groups.map((g) =>
      g.id === groupId ? { ...g, instances: g.instances.map((i) => (i.id === inst.id ? inst : i)) } : g,
    ),
  };
}

/** i-0001, i-0002, …: short, and in creation order when sorted. */
export function instanceId(n: number): string {
  return `i-${String(n).padStart(4, '0')}`;
}

/** Orders instance ids so that i-10000 sorts after i-9999. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
