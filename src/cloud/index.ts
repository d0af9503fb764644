/**
 * drydock's cloud layer: one provider interface, the groupId formats of every provider, and
 * the providers this build has. `sim` is the embedded default (a simulated cloud, in-process
 * or over HTTP); aws, gcp and azure reach the real clouds through their SDKs, loaded on first use.
 */
import type { Provider } from '../spec/model.js';
import type { CloudProvider } from './provider.js';
import type { SimCloud } from './sim/cloud.js';
import { SimHttpProvider } from './sim/http-client.js';
import { SimProvider } from './sim/provider.js';
import { AwsProvider, type AwsProviderOptions } from './aws/provider.js';
import { GcpProvider, type GcpProviderOptions } from './gcp/provider.js';
import { AzureProvider, type AzureProviderOptions } from './azure/provider.js';
import { CodedError } from '../errors.js';

export * from './provider.js';
export {
  GROUP_ID_FORMATS,
  GroupIdError,
  inferProvider,
  parseGroupId,
  type GroupIdErrorData,
  type GroupIdParts,
} from './group-id.js';
export { ManualClock, realClock, type Clock, type TimerCallback, type TimerHandle } from './sim/clock.js';
export { SimCloud, type SimCloudOptions } from './sim/cloud.js';
export {
  DEFAULT_FAULTS,
  DEFAULT_RESOURCES,
  loadSimConfig,
  parseSimConfig,
  parseSimConfigText,
  SimConfigError,
  simCloudConfigSchema,
  type SimCloudConfig,
  type SimConfigProblem,
  type SimFaultConfig,
  type SimGroupConfig,
  type SimQuota,
  type SimResources,
} from './sim/config.js';
export { FaultInjector, type FaultState, type InjectableApiFault } from './sim/faults.js';
export { SimHttpProvider, type SimFaultKind, type SimHttpProviderOptions } from './sim/http-client.js';
export {
  buildNode,
  CONTROL_PLANE_TAINT,
  imageLabelValue,
  KubeNodeRegistry,
  KWOK_ANNOTATION,
  MemoryNodeRegistry,
  nodeNameFor,
  parseSimProviderID,
  providerIDFor,
  SIM_IMAGE_ANNOTATION,
  SIM_LABELS,
  type NodeRegistry,
  type SimNodeInput,
} from './sim/nodes.js';
export { SimProvider } from './sim/provider.js';
export { AwsProvider, type AwsProviderOptions } from './aws/provider.js';
export { awsProviderID, parseAwsProviderID } from './aws/provider-id.js';
export { awsCloudError, awsErrorCode } from './aws/errors.js';
export { GcpProvider, type GcpProviderOptions } from './gcp/provider.js';
export { derivedTemplateName } from './gcp/resources.js';
export { gceProviderID, parseGceProviderID } from './gcp/provider-id.js';
export type { GcpAuthClient } from './gcp/auth.js';
export { AzureProvider, type AzureProviderOptions } from './azure/provider.js';
export { azureProviderID, parseAzureProviderID } from './azure/provider-id.js';
export { imageReference as azureImageReference, imageString as azureImageString } from './azure/image.js';
export { SeededRandom } from './sim/random.js';
export { startSimServer, type SimServer, type SimServerOptions } from './sim/server.js';
export {
  FileStateStore,
  MemoryStateStore,
  SimStateError,
  STATE_FILE,
  type SimState,
  type StateStore,
} from './sim/state.js';

/** How drydock reaches a provider. */
export type ProviderConfig =
  /** The simulated cloud in this process (tests, sequence simulation). */
  | { readonly provider: 'sim'; readonly cloud: SimCloud }
  /** The simulated cloud over HTTP (`drydock sim-cloud`), as the service reaches a real cloud. */
  | { readonly provider: 'sim'; readonly url: string; readonly timeoutMs?: number }
  /** AWS Auto Scaling groups; credentials and region from the SDK's default chain unless given. */
  | ({ readonly provider: 'aws' } & AwsProviderOptions)
  /** GCP managed instance groups; Application Default Credentials unless given. */
  | ({ readonly provider: 'gcp' } & GcpProviderOptions)
  /** Azure VM scale sets; DefaultAzureCredential unless given. */
  | ({ readonly provider: 'azure' } & AzureProviderOptions);

export type ProviderConfigErrorCode = 'ProviderNotAvailable' | 'InvalidProviderConfig';

/** A provider that cannot be created: not built in, or configured wrongly. */
export class ProviderConfigError extends CodedError<ProviderConfigErrorCode, { readonly provider: string }> {
  override readonly name = 'ProviderConfigError';
}

export const AVAILABLE_PROVIDERS = ['sim', 'aws', 'gcp', 'azure'] as const satisfies readonly Provider[];

export function createProvider(config: ProviderConfig): CloudProvider {
  switch (config.provider) {
    case 'sim':
      if ('cloud' in config) return new SimProvider(config.cloud);
      if ('url' in config && typeof config.url === 'string') {
        return new SimHttpProvider(config.url, config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs });
      }
      throw new ProviderConfigError(
        'InvalidProviderConfig',
        'provider sim needs the simulated cloud: its URL (e.g. http://127.0.0.1:7070) or an in-process SimCloud',
        {
          provider: 'sim',
        },
      );
    case 'aws': {
      const { provider: _, ...options } = config;
      return new AwsProvider(options);
    }
    case 'gcp': {
      const { provider: _, ...options } = config;
      return new GcpProvider(options);
    }
    case 'azure': {
      const { provider: _, ...options } = config;
      return new AzureProvider(options);
    }
    default: {
      const unknown: unknown = (config as { provider?: unknown }).provider;
      throw new ProviderConfigError(
        'InvalidProviderConfig',
        `unknown provider ${JSON.stringify(unknown)}; use one of sim, aws, gcp, azure`,
        {
          provider: String(unknown),
        },
      );
    }
  }
}
