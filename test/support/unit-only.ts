/**
 * DRYDOCK_UNIT_ONLY=1 runs the suites that need no external process (no control plane, no
 * moto, no sandbox): scripts/test.sh sets it for the second run under the current Node LTS,
 * which checks the runtime, not the cluster, and so keeps CI time down.
 */
export function unitOnly(): boolean {
  return process.env['DRYDOCK_UNIT_ONLY'] === '1';
}
