/**
 * Where a spec's Jobs run, when what is written there would surprise: validate's warnings at
 * the line.
 *
 * The Kairos operator runs a NodeOp's Jobs in the NodeOp's own namespace and pulls its image with
 * the imagePullSecrets found there; drydock runs every node Job in its own namespace (drydock run
 * --namespace), whatever metadata.namespace says. validate says so at the namespace's line, so a
 * migrating user puts the secrets where the Jobs will look for them.
 */
import type { DesiredState, SpecError } from './model.js';
import { isMutexRule } from './normalise/mutex.js';

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

/**
 * The one namespace deploy/rbac.yaml's Role lets drydock create and delete Jobs in (its own);
 * test/service/rbac.test.ts checks that the two agree.
 */
export const RBAC_JOB_NAMESPACE = 'drydock-system';

/**
 * A gate Job namespace written outside RBAC_JOB_NAMESPACE: the mutex operator's docs say its
 * jobNamespace "does not create the appropriate RBAC", and neither does drydock, so without a
 * Role there the API server refuses the Job and the node waits. validate says so at the line.
 */
export function jobNamespaceWarnings(d: DesiredState): SpecError[] {
  return d.upgradeGates.flatMap((g) => {
    const kind = isMutexRule(g) ? 'MutexRule' : 'UpgradeGate';
    const field = isMutexRule(g) ? 'jobNamespace' : 'the Job namespace';
    return (g.writtenJobNamespaces ?? []).flatMap((ns) => {
      if (ns.name === RBAC_JOB_NAMESPACE) return [];
      return [
        {
          ...ns.at,
          code: 'job-namespace-rbac',
          message:
            `${kind}/${g.name}: its Jobs run in namespace ${ns.name}, where deploy/rbac.yaml does not let drydock ` +
            `create Jobs (its Role grants them in ${RBAC_JOB_NAMESPACE} only): the API server would refuse them ` +
            'and the nodes they gate would wait',
          hint:
            `grant drydock's ServiceAccount a Role in ${ns.name} (jobs: create, get, delete; pods: list) ` +
            `and a RoleBinding, or set ${field} to ${RBAC_JOB_NAMESPACE}`,
        },
      ];
    });
  });
}
