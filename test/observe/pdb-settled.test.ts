import assert from 'node:assert/strict';
import {
  DISRUPTED_POD_TIMEOUT_MS,
  pdbSettled,
  PdbSettledWaiters,
  type PdbLookup,
} from '../../src/observe/pdb-settled.js';
import type { ObservedPDB, ObservedPod } from '../../src/observe/types.js';

const NOW = new Date('2026-11-28T07:00:00Z');
const KEY = 'web/api';

function pod(name: string, o: Partial<ObservedPod> = {}): ObservedPod {
  return {
    namespace: 'web',
    name,
    uid: `uid-${name}`,
    nodeName: 'n1',
    labels: { app: 'api' },
    ownerKind: 'ReplicaSet',
    phase: 'Running',
    ready: true,
    terminating: false,
    hasEmptyDir: false,
    mirror: false,
    pdbs: [KEY],
    ...o,
  };
}

function pdb(currentHealthy: number, o: Partial<ObservedPDB> = {}): ObservedPDB {
  return {
    namespace: 'web',
    name: 'api',
    disruptionsAllowed: currentHealthy - 2,
    currentHealthy,
    desiredHealthy: 2,
    expectedPods: 3,
    ...o,
  };
}

const three = [pod('a'), pod('b'), pod('c')];

/** The caches' lookup over a list of PDBs and pods, as the cluster cache answers it. */
function lookupIn(view: () => { pdbs: readonly ObservedPDB[]; pods: readonly ObservedPod[] }): PdbLookup {
  return (key) => {
    const v = view();
    const pdb = v.pdbs.find((p) => `${p.namespace}/${p.name}` === key);
    return pdb === undefined ? undefined : { pdb, pods: v.pods.filter((p) => p.pdbs.includes(key)) };
  };
}
const none = new Set<string>();

describe('observe: whether the disruption controller has a write to make to a PDB (pdbSettled)', () => {
  it('a status that counts every Ready pod is settled', () => {
    assert.equal(pdbSettled(pdb(3), three, none, NOW), true);
  });

  it('a pod just evicted, its deletion not yet seen: the controller will count it out, so not settled', () => {
    // The eviction answered; the caches still show pod a Ready and the PDB as before.
    assert.equal(pdbSettled(pdb(3), three, new Set(['uid-a']), NOW), false);
  });

  it("the eviction's own write (disruptedPods names the pod, being deleted): the controller will drop the entry", () => {
    const deleting = [pod('a', { terminating: true }), pod('b'), pod('c')];
    const evictionWrote = pdb(3, { disruptionsAllowed: 0, disruptedPods: { a: NOW.toISOString() } });
    assert.equal(pdbSettled(evictionWrote, deleting, none, NOW), false);
    // Or the pod is gone altogether.
    assert.equal(pdbSettled(evictionWrote, [pod('b'), pod('c')], none, NOW), false);
  });

  it("the controller's write after it: the pod out of disruptedPods and of the healthy count, settled", () => {
    const deleting = [pod('a', { terminating: true }), pod('b'), pod('c')];
    assert.equal(pdbSettled(pdb(2), deleting, new Set(['uid-a']), NOW), true);
    assert.equal(pdbSettled(pdb(2), [pod('b'), pod('c')], new Set(['uid-a']), NOW), true);
  });

  it('the replacement turns Ready: not settled until the controller counts it', () => {
    const replaced = [pod('b'), pod('c'), pod('d')];
    assert.equal(pdbSettled(pdb(2), replaced, new Set(['uid-a']), NOW), false);
    assert.equal(pdbSettled(pdb(3), replaced, new Set(['uid-a']), NOW), true);
    // Not Ready yet: nothing to count.
    assert.equal(pdbSettled(pdb(2), [pod('b'), pod('c'), pod('d', { ready: false })], none, NOW), true);
  });

  it('a pod in disruptedPods whose deletion the controller has not seen stays out of the count, as the controller keeps it', () => {
    // Evicted by someone else a moment ago: still there, not yet being deleted.
    const p = pdb(2, { disruptedPods: { a: new Date(NOW.getTime() - 1000).toISOString() } });
    assert.equal(pdbSettled(p, three, none, NOW), true);
    assert.equal(pdbSettled(pdb(3, { disruptedPods: p.disruptedPods }), three, none, NOW), false);
  });

  it('an entry older than the deletion timeout is one the controller drops: not settled', () => {
    const old = new Date(NOW.getTime() - DISRUPTED_POD_TIMEOUT_MS - 1).toISOString();
    assert.equal(pdbSettled(pdb(2, { disruptedPods: { a: old } }), three, none, NOW), false);
  });

  it('a spec the controller has not observed yet is a write due', () => {
    assert.equal(pdbSettled(pdb(3, { unobserved: true }), three, none, NOW), false);
  });
});

describe('observe: waiting for a PDB to settle (PdbSettledWaiters)', () => {
  it('resolves at once when settled, or when the PDB is not there', async () => {
    const w = new PdbSettledWaiters(
      lookupIn(() => ({ pdbs: [pdb(3)], pods: three })),
      () => NOW,
    );
    assert.equal(await w.when(KEY, none, 1000), true);
    assert.equal(await w.when('web/other', new Set(['uid-a']), 1000), true);
  });

  it('resolves true at the change that settles it, checking only pods the PDB covers', async () => {
    let view = { pdbs: [pdb(3)], pods: [...three, pod('x', { pdbs: [] })] };
    const w = new PdbSettledWaiters(
      lookupIn(() => view),
      () => NOW,
    );
    const waiting = w.when(KEY, new Set(['uid-a']), 5000);
    let resolved = false;
    void waiting.then(() => (resolved = true));
    // A change that settles nothing (the eviction's own write).
    view = { pdbs: [pdb(3, { disruptedPods: { a: NOW.toISOString() } })], pods: view.pods };
    w.changed();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(resolved, false);
    // The controller's write; pod x, under no PDB, is not counted.
    view = { pdbs: [pdb(2)], pods: [pod('a', { terminating: true }), pod('b'), pod('c'), pod('x', { pdbs: [] })] };
    w.changed();
    assert.equal(await waiting, true);
  });

  it('resolves false after the timeout, and at stop', async () => {
    const w = new PdbSettledWaiters(
      lookupIn(() => ({ pdbs: [pdb(3)], pods: three })),
      () => NOW,
    );
    assert.equal(await w.when(KEY, new Set(['uid-a']), 20), false);
    const stopped = w.when(KEY, new Set(['uid-a']), 60_000);
    w.stop();
    assert.equal(await stopped, false);
  });
});
