/**
 * The Kairos operator runs a NodeOp's Jobs in the NodeOp's own namespace and pulls its image with
 * the imagePullSecrets found there; drydock runs every node Job in its own namespace (drydock run
 * --namespace), whatever metadata.namespace says. validate says so at the namespace's line, so a
 * migrating user puts the secrets where the Jobs will look for them.
 */
import type { DesiredState, SpecError } from './model.js';

export function writtenNamespaceWarnings(d: DesiredState): SpecError[] {
  const specs = [...d.nodeOps.filter((o) => o.generatedBy === undefined), ...d.nodeOpUpgrades];
  return specs.flatMap((s) => {
    const ns = s.writtenNamespace;
    if (ns === undefined) return [];
    const secrets = s.imagePullSecrets;
    return [
      {
        ...ns.at,
        code: 'namespace-ignored',
        message: `${s.kind}/${s.name}: its Jobs run in drydock's namespace (drydock run --namespace, default kube-system), not in metadata.namespace ${ns.name}`,
        hint:
          secrets.length > 0
            ? `create the imagePullSecrets it names (${secrets.join(', ')}) in drydock's namespace`
            : "a secret its image pull needs goes in drydock's namespace",
      },
    ];
  });
}
