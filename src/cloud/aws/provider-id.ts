/**
 * The providerID the AWS cloud controller manager gives a Node: aws:///<availability zone>/<instance id>
 * (the legacy aws://<zone>/<id> form without the third slash is read too).
 */
const AWS_PROVIDER_ID = /^aws:\/\/\/?([a-z]{2}(?:-[a-z]+)+-\d+[a-z](?:-[a-z0-9-]+)?)\/(i-[0-9a-f]{8,17})$/;

export function awsProviderID(zone: string, instanceId: string): string {
  return `aws:///${zone}/${instanceId}`;
}

/** Zone and instance id of an AWS providerID, or undefined when it is not one. */
export function parseAwsProviderID(providerID: string): { zone: string; instanceId: string } | undefined {
  const m = AWS_PROVIDER_ID.exec(providerID);
  if (!m) return undefined;
  return { zone: m[1] ?? '', instanceId: m[2] ?? '' };
}
