/**
 * The providerID the GCE cloud controller manager gives a Node: gce://<project>/<zone>/<instance name>.
 */
const GCE_PROVIDER_ID = /^gce:\/\/([^/]+)\/([a-z]+(?:-[a-z]+)*\d+-[a-z])\/([a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)$/;

export function gceProviderID(project: string, zone: string, name: string): string {
  return `gce://${project}/${zone}/${name}`;
}

export function parseGceProviderID(providerID: string): { project: string; zone: string; name: string } | undefined {
  const m = GCE_PROVIDER_ID.exec(providerID);
  if (!m) return undefined;
  return { project: m[1] ?? '', zone: m[2] ?? '', name: m[3] ?? '' };
}

/** The last `/zones/<zone>/instances/<name>` of an instance URL. */
export function parseInstanceUrl(url: string): { project: string; zone: string; name: string } | undefined {
  const m = /projects\/([^/]+)\/zones\/([^/]+)\/instances\/([^/]+)$/.exec(url);
  return m ? { project: m[1] ?? '', zone: m[2] ?? '', name: m[3] ?? '' } : undefined;
}

const COMPUTE_PREFIX = /^https?:\/\/[^/]+\/compute\/(?:v1|beta|alpha)\//;

/** A Compute resource URL in its path form, projects/…: the form drydock reports and compares images in. */
export function resourcePath(url: string): string {
  return url.replace(COMPUTE_PREFIX, '');
}
