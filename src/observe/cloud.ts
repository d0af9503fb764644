/**
 * The cloud half of observation: one describeGroup per ScalingGroup per reconcile, through the
 * provider. (Clouds offer no watch; for the sim cloud that is a cheap in-process or loopback
 * call, and it never touches the Kubernetes API.) A failed read becomes an ObserveProblem so
 * the planner waits instead of guessing.
 */
import { CloudError, type CloudProvider } from '../cloud/provider.js';
import type { DesiredState, Provider } from '../spec/model.js';
import type { ObserveProblem, ObservedCloudGroup } from './types.js';

/** The provider serving ScalingGroups of a given provider name, if configured. */
export type ProviderLookup = (provider: Provider) => CloudProvider | undefined;

export async function observeCloud(
  desired: Pick<DesiredState, 'scalingGroups'>,
  providers: ProviderLookup,
): Promise<{ groups: ObservedCloudGroup[]; problems: ObserveProblem[] }> {
  const groups: ObservedCloudGroup[] = [];
  const problems: ObserveProblem[] = [];
  const sorted = [...desired.scalingGroups].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  await Promise.all(
    sorted.map(async (sg) => {
      const provider = providers(sg.provider);
      if (!provider) {
        problems.push({
          source: `cloud/${sg.name}`,
          code: 'NoProvider',
          message: `no ${sg.provider} provider is configured for ScalingGroup ${sg.name}; start drydock with --provider ${sg.provider}${sg.provider === 'sim' ? ' --cloud-endpoint URL' : ''}`,
        });
        return;
      }
      try {
        groups.push({ scalingGroup: sg.name, description: await provider.describeGroup(sg.groupId) });
      } catch (err) {
        if (err instanceof CloudError) {
          problems.push({
            source: `cloud/${sg.name}`,
            code: err.code,
            message: `describing group ${sg.groupId}: ${err.message}`,
            ...(err.data.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.data.retryAfterSeconds } : {}),
          });
        } else {
          problems.push({
            source: `cloud/${sg.name}`,
            code: 'Transient',
            message: `describing group ${sg.groupId}: ${err instanceof Error ? err.message : String(err)}`,
          });
        }
      }
    }),
  );
  groups.sort((a, b) => (a.scalingGroup < b.scalingGroup ? -1 : a.scalingGroup > b.scalingGroup ? 1 : 0));
  problems.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  return { groups, problems };
}

/**
 * When this process first saw each instance, by its own clock. An instance's age is counted
 * from the later of the cloud's createdAt and that sighting, so a cloud clock behind drydock's
 * (or a drydock clock that jumped forward) never makes a fresh instance look old enough to be
 * removed for not joining; a restart only gives pending instances a fresh joinTimeout.
 */
export class InstanceSightings {
  /** groupId → instance id → first sighting (ms). */
  private readonly seen = new Map<string, Map<string, number>>();

  stamp(groups: readonly ObservedCloudGroup[], now: number): ObservedCloudGroup[] {
    return groups.map((g) => {
      const before = this.seen.get(g.description.groupId);
      // A group that answered keeps only its live instances; one that did not is not in
      // `groups` and keeps its sightings.
      const after = new Map<string, number>();
      const instances = g.description.instances.map((inst) => {
        const first = before?.get(inst.id) ?? now;
        after.set(inst.id, first);
        const created = Date.parse(inst.createdAt);
        return Number.isFinite(created) && created >= first
          ? inst
          : { ...inst, createdAt: new Date(first).toISOString() };
      });
      this.seen.set(g.description.groupId, after);
      return { ...g, description: { ...g.description, instances } };
    });
  }
}
