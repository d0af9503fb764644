// The OpenShift kinds an OpenShift upgrade is driven and observed by (ClusterVersion,
// MachineConfigPool), installed into a test's real control plane:
//
//   const cp = useControlPlane();
//   before(async function () { this.timeout(60_000); await installOpenShiftCrds(cp().adminKubeConfig()); });
//
// The CustomResourceDefinitions are in test/fixtures/openshift/ (see its README.md).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import {
  ApiextensionsV1Api,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
  type CustomObjectsApi,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';

import { eventually, statusOf } from './control-plane.js';

/** test/fixtures/openshift/ (this file runs from dist/test/support/). */
export const OPENSHIFT_CRD_DIR = fileURLToPath(new URL('../../../test/fixtures/openshift/', import.meta.url));

/** The group/version and plural of each kind, for CustomObjectsApi calls. */
export const CLUSTER_VERSION = { group: 'config.openshift.io', version: 'v1', plural: 'clusterversions' } as const;

/** Creates the cluster's ClusterVersion "version" asking for `version`, as the cluster's installer would. */
export async function createClusterVersion(
  custom: CustomObjectsApi,
  clusterID: string,
  version: string,
): Promise<void> {
  await custom.createClusterCustomObject({
    ...CLUSTER_VERSION,
    body: {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterVersion',
      metadata: { name: 'version' },
      spec: { clusterID, desiredUpdate: { version } },
    },
  });
}

/**
 * Ends the control plane's part of the upgrade to `version` now: the newest entry of
 * ClusterVersion's history, Partial as the simulated cluster-version operator wrote it, becomes
 * Completed (the simulator then renders the pools). For a world whose control plane takes
 * longer than any test (`controlPlaneSeconds`), so the test says when it is done.
 */
export async function completeControlPlane(custom: CustomObjectsApi, version: string): Promise<void> {
  await eventually(`ClusterVersion's history starts the upgrade to ${version}`, async () => {
    const cv = (await custom.getClusterCustomObject({ ...CLUSTER_VERSION, name: 'version' })) as {
      status?: { desired?: { version?: string }; history?: { version?: string }[] };
    };
    return cv.status?.desired?.version === version && cv.status.history?.[0]?.version === version;
  });
  // The test op makes the patch fail rather than complete another release's entry.
  await custom.patchClusterCustomObjectStatus(
    {
      ...CLUSTER_VERSION,
      name: 'version',
      body: [
        { op: 'test', path: '/status/history/0/version', value: version },
        { op: 'replace', path: '/status/history/0/state', value: 'Completed' },
        { op: 'replace', path: '/status/history/0/completionTime', value: new Date().toISOString() },
      ],
    },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
}

export const MACHINE_CONFIG_POOL = {
  group: 'machineconfiguration.openshift.io',
  version: 'v1',
  plural: 'machineconfigpools',
} as const;

/**
 * Every *.crd.yaml of the fixture directory, in file name order, as the client's model: plain
 * parsed YAML would lose every x-kubernetes-* field on the way out, since the client writes the
 * model's property names (xKubernetesPreserveUnknownFields), not the manifest's.
 */
export function openShiftCrds(): V1CustomResourceDefinition[] {
  return readdirSync(OPENSHIFT_CRD_DIR)
    .filter((f) => f.endsWith('.crd.yaml'))
    .sort()
    .map((f) => loadYaml<V1CustomResourceDefinition>(readFileSync(path.join(OPENSHIFT_CRD_DIR, f), 'utf8')));
}

/** Creates the CRD, or replaces the one already there (a second install in one control plane). */
async function apply(api: ApiextensionsV1Api, crd: V1CustomResourceDefinition): Promise<string> {
  const name = crd.metadata?.name ?? '';
  try {
    await api.createCustomResourceDefinition({ body: crd });
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    const current = await api.readCustomResourceDefinition({ name });
    const body = { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion } };
    await api.replaceCustomResourceDefinition({ name, body });
  }
  return name;
}

/**
 * Installs ClusterVersion and MachineConfigPool and waits until the API server serves them
 * (Established=True), so the next request may create one.
 */
export async function installOpenShiftCrds(kc: KubeConfig, timeoutMs = 60_000): Promise<string[]> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const crd of openShiftCrds()) names.push(await apply(api, crd));
  for (const name of names) {
    await eventually(
      `CustomResourceDefinition ${name} Established`,
      async () => {
        const crd = await api.readCustomResourceDefinition({ name });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      },
      { timeoutMs },
    );
  }
  return names;
}
