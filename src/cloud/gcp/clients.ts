/** The Compute Engine clients drydock uses, made once per provider over the REST transport. */
import type * as Compute from '@google-cloud/compute';
import { defaultAuthClient, typedErrors, type GcpAuthClient } from './auth.js';

export interface Clients {
  readonly zonal: Compute.InstanceGroupManagersClient;
  readonly regional: Compute.RegionInstanceGroupManagersClient;
  readonly templates: Compute.InstanceTemplatesClient;
  readonly instances: Compute.InstancesClient;
  readonly zoneOps: Compute.ZoneOperationsClient;
  readonly regionOps: Compute.RegionOperationsClient;
  readonly globalOps: Compute.GlobalOperationsClient;
}

/** Imported on first use: the client library is large and only GCP fleets need it. */
export async function createClients(options: { endpoint?: string; authClient?: GcpAuthClient }): Promise<Clients> {
  const compute = await import('@google-cloud/compute');
  const authClient = typedErrors(options.authClient ?? (await defaultAuthClient()));
  const opts = { fallback: true, authClient, ...endpointOptions(options.endpoint) } as ConstructorParameters<
    typeof Compute.InstanceGroupManagersClient
  >[0];
  return {
    zonal: new compute.InstanceGroupManagersClient(opts),
    regional: new compute.RegionInstanceGroupManagersClient(opts),
    templates: new compute.InstanceTemplatesClient(opts),
    instances: new compute.InstancesClient(opts),
    zoneOps: new compute.ZoneOperationsClient(opts),
    regionOps: new compute.RegionOperationsClient(opts),
    globalOps: new compute.GlobalOperationsClient(opts),
  };
}

function endpointOptions(endpoint: string | undefined): Record<string, unknown> {
  if (endpoint === undefined) return {};
  const u = new URL(endpoint);
  return {
    apiEndpoint: u.hostname,
    port: Number(u.port || (u.protocol === 'http:' ? 80 : 443)),
    protocol: u.protocol.replace(':', ''),
  };
}
