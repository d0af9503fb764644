/**
 * What a node must report in status.nodeInfo.osImage once an in-place update rebooted it: a
 * spec's `osImage` (exact, or a regular expression between slashes), or for the Bottlerocket
 * updater "Bottlerocket OS <version>" followed by the variant ("Bottlerocket OS 1.20.3
 * (aws-k8s-1.30)"). The planner verifies the update by it, so a node that booted back into its
 * old partition is never counted as updated.
 */

/** `/.../` is a regular expression; anything else is the exact text. */
export function osImagePattern(written: string): RegExp | string {
  if (written.length >= 2 && written.startsWith('/') && written.endsWith('/')) return new RegExp(written.slice(1, -1));
  return written;
}

/** Why `written` is not a usable expectation, or undefined. */
export function osImageProblem(written: string): string | undefined {
  try {
    osImagePattern(written);
    return undefined;
  } catch (e) {
    return `is not a valid regular expression (${(e as Error).message})`;
  }
}

/** Whether the node's osImage meets the expectation as written. */
export function osImageMatches(written: string, reported: string | undefined): boolean {
  if (reported === undefined) return false;
  const p = osImagePattern(written);
  return typeof p === 'string' ? p === reported : p.test(reported);
}

const VERSION = /^v?(\d+\.\d+\.\d+)$/;

/** A Bottlerocket target as written: `latest`, or X.Y.Z without its optional leading v. */
export function bottlerocketTarget(
  image: string,
): { readonly latest: true } | { readonly version: string } | undefined {
  if (image === 'latest') return { latest: true };
  const m = VERSION.exec(image);
  return m?.[1] !== undefined ? { version: m[1] } : undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What a Bottlerocket node on `version` reports: "Bottlerocket OS 1.20.3 (aws-k8s-1.30)". */
export function bottlerocketOsImage(version: string): string {
  return `/^Bottlerocket OS ${escapeRegExp(version)}( |$)/`;
}

/** The Bottlerocket version an osImage names, if it is one. */
export function bottlerocketVersionOf(osImage: string | undefined): string | undefined {
  return /^Bottlerocket OS (\d+\.\d+\.\d+)( |$)/.exec(osImage ?? '')?.[1];
}
