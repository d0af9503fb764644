/**
 * The providerID the Azure cloud controller manager gives a Node: azure:// followed by the VM's
 * resource id — .../virtualMachineScaleSets/<vmss>/virtualMachines/<instance id> for a uniform
 * scale set, .../virtualMachines/<name> for a flexible one.
 */
const VMSS_VM =
  /^azure:\/\/(\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/[^/]+)\/virtualMachines\/([^/]+)$/i;
const VM =
  /^azure:\/\/(\/subscriptions\/[^/]+\/resourceGroups\/[^/]+)\/providers\/Microsoft\.Compute\/virtualMachines\/([^/]+)$/i;

export function azureProviderID(resourceId: string): string {
  return `azure://${resourceId}`;
}

/** The instance a providerID names: for a uniform scale set also the scale set's id. */
export function parseAzureProviderID(providerID: string): { scaleSetId?: string; instanceId: string } | undefined {
  const u = VMSS_VM.exec(providerID);
  if (u) return { scaleSetId: u[1] ?? '', instanceId: u[2] ?? '' };
  const f = VM.exec(providerID);
  if (f) return { instanceId: f[2] ?? '' };
  return undefined;
}
