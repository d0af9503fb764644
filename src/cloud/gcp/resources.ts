/** GCP resource names and states, read from the Compute Engine API's objects (pure functions). */
import { createHash } from 'node:crypto';
import type * as Compute from '@google-cloud/compute';
import { parseGroupId } from '../group-id.js';
import { CloudError, type InstanceState } from '../provider.js';
import { resourcePath } from './provider-id.js';

type IManagedInstance = Compute.protos.google.cloud.compute.v1.IManagedInstance;
type IInstanceGroupManager = Compute.protos.google.cloud.compute.v1.IInstanceGroupManager;
type IInstanceTemplate = Compute.protos.google.cloud.compute.v1.IInstanceTemplate;

export interface Group {
  readonly groupId: string;
  readonly project: string;
  readonly scope: 'zone' | 'region';
  readonly location: string;
  readonly name: string;
}

export function parseGcpGroup(groupId: string): Group {
  const p = parseGroupId('gcp', groupId);
  if (p.provider !== 'gcp')
    throw new CloudError('Permanent', `gcp: ${groupId} is not a managed instance group`, { groupId });
  return { groupId, project: p.project, scope: p.scope, location: p.location, name: p.name };
}

export function templateOf(mig: IInstanceGroupManager, g: Group): string {
  const url = mig.versions?.[0]?.instanceTemplate ?? mig.instanceTemplate;
  if (!url)
    throw new CloudError('Permanent', `gcp: group ${g.groupId} has no instance template; give it one`, {
      groupId: g.groupId,
    });
  if ((mig.versions?.length ?? 0) > 1) {
    throw new CloudError(
      'Permanent',
      `gcp: group ${g.groupId} runs ${mig.versions?.length} versions (a canary of its own); leave one version and let drydock roll`,
      { groupId: g.groupId },
    );
  }
  return url;
}

export function parseTemplateUrl(url: string, g: Group): { project: string; name: string } {
  const m = /projects\/([^/]+)\/global\/instanceTemplates\/([^/]+)$/.exec(url);
  if (!m)
    throw new CloudError(
      'Permanent',
      `gcp: group ${g.groupId} uses ${resourcePath(url)}; drydock supports global instance templates only`,
      { groupId: g.groupId },
    );
  return { project: m[1] ?? '', name: m[2] ?? '' };
}

export function bootImage(t: IInstanceTemplate): string {
  const boot = t.properties?.disks?.find((d) => d.boot) ?? t.properties?.disks?.[0];
  return resourcePath(boot?.initializeParams?.sourceImage ?? '');
}

/** `<source without an earlier drydock suffix>-d<8 hex of the image>`, within GCP's 63 characters. */
export function derivedTemplateName(source: string, image: string): string {
  const base = source
    .replace(/-d[0-9a-f]{8}$/, '')
    .slice(0, 53)
    .replace(/-+$/, '');
  return `${base}-d${createHash('sha256').update(image).digest('hex').slice(0, 8)}`;
}

export function copyWithImage(t: IInstanceTemplate, name: string, image: string): IInstanceTemplate {
  const disks = (t.properties?.disks ?? []).map((d, i, all) =>
    d.boot || (i === 0 && !all.some((x) => x.boot))
      ? { ...d, initializeParams: { ...d.initializeParams, sourceImage: image } }
      : d,
  );
  return { name, description: `drydock: ${t.name ?? ''} with image ${image}`, properties: { ...t.properties, disks } };
}

export function lastSegment(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  return url.split('/').pop();
}

const PENDING_ACTIONS = new Set([
  'CREATING',
  'CREATING_WITHOUT_RETRIES',
  'RECREATING',
  'RESTARTING',
  'RESUMING',
  'STARTING',
  'VERIFYING',
  'REFRESHING',
]);
const LEAVING_ACTIONS = new Set(['DELETING', 'ABANDONING', 'STOPPING', 'SUSPENDING']);

export function instanceState(m: IManagedInstance): InstanceState {
  const action = String(m.currentAction ?? 'NONE');
  const status = String(m.instanceStatus ?? '');
  if (LEAVING_ACTIONS.has(action) || ['STOPPING', 'TERMINATED', 'STOPPED', 'SUSPENDING', 'SUSPENDED'].includes(status))
    return 'terminating';
  if (PENDING_ACTIONS.has(action) || status === 'PROVISIONING' || status === 'STAGING' || status === '')
    return 'pending';
  return 'running';
}
