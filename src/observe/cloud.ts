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
          message: `no ${sg.provider} provider is configured for ScalingGroup ${sg.name}; start drydock with --provider ${sg.provider}`,
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
