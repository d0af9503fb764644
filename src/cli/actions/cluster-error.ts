/** A cluster or cloud read that failed, in one line (never the response headers). */
export function describeClusterError(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'number') {
    // client-node ApiException: the status code says it all; its message embeds headers.
    const code = err.code;
    return code === 403
      ? "the cluster refused a read (HTTP 403): the kubeconfig's user needs get/list on nodes, pods, poddisruptionbudgets, deployments and jobs"
      : `the cluster answered HTTP ${code}`;
  }
  const sys = err && typeof err === 'object' && 'code' in err ? err.code : undefined;
  const first = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  if (typeof sys === 'string' && /^E[A-Z]+$/.test(sys))
    return `cannot reach the cluster (${sys}): ${first}; check --kubeconfig and that the API server is up`;
  return first;
}
