import { strict as assert } from 'node:assert';
import { DEMO_APPS, demoManifests, type Manifest } from '../../src/sandbox/workloads.js';

/** PDB arithmetic as the disruption controller does it, for a fully healthy app. */
function disruptionsAllowed(replicas: number, pdb: Record<string, unknown>): number {
  const resolve = (v: unknown, roundUp: boolean): number => {
    if (typeof v === 'number') return v;
    const pct = Number.parseInt(String(v), 10) / 100;
    return roundUp ? Math.ceil(pct * replicas) : Math.floor(pct * replicas);
  };
  if ('maxUnavailable' in pdb) return resolve(pdb.maxUnavailable, true);
  return replicas - resolve(pdb.minAvailable, true);
}

describe('sandbox demo workloads', () => {
  const objects = demoManifests();
  const byKind = (kind: string): Manifest[] => objects.filter((o) => o.kind === kind);

  it('creates the namespace first, then a Deployment and a PDB per app, then the autoscaler stand-in', () => {
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`),
      [
        'Namespace//demo',
        'Deployment/demo/web',
        'PodDisruptionBudget/demo/web',
        'Deployment/demo/api',
        'PodDisruptionBudget/demo/api',
        'Deployment/demo/queue',
        'PodDisruptionBudget/demo/queue',
        // examples-repo's AutoscalingStrategy names it.
        'Deployment/kube-system/cluster-autoscaler',
      ],
    );
  });

  it("each PDB selects exactly its Deployment's pods", () => {
    for (const d of byKind('Deployment').filter((x) => x.metadata?.namespace === 'demo')) {
      const template = (d.spec?.template as { metadata: { labels: Record<string, string> } }).metadata.labels;
      const pdb = byKind('PodDisruptionBudget').find((p) => p.metadata?.name === d.metadata?.name);
      assert.ok(pdb, `no PDB for ${d.metadata?.name ?? ''}`);
      assert.deepEqual((pdb.spec?.selector as { matchLabels: Record<string, string> }).matchLabels, template);
    }
  });

  // Expected by hand: web 6 pods, maxUnavailable 1; api 3 pods, minAvailable 2; queue 2 pods, minAvailable 50%.
  const expected: [string, number][] = [
    ['web', 1],
    ['api', 1],
    ['queue', 1],
  ];
  for (const [name, allowed] of expected) {
    it(`PDB ${name} allows ${allowed} disruption when healthy, so drains go one at a time`, () => {
      const app = DEMO_APPS.find((a) => a.name === name);
      assert.ok(app);
      const pdb = byKind('PodDisruptionBudget').find((p) => p.metadata?.name === name);
      assert.equal(disruptionsAllowed(app.replicas, (pdb?.spec ?? {}) as Record<string, unknown>), allowed);
    });
  }

  it('keeps the demo pods off control-plane nodes', () => {
    for (const d of byKind('Deployment')) {
      assert.match(JSON.stringify(d.spec), /"key":"node-role.kubernetes.io\/control-plane","operator":"DoesNotExist"/);
    }
  });
});
