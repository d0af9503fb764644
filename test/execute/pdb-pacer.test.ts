import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CloudProvider } from '../../src/cloud/provider.js';
import { EvictionPacer, executeActions, InFlight, type KubeApis } from '../../src/execute/index.js';
import { annotate, evict, recordingDeps } from './plan-actions.js';

/** A fake API server (unit test of the executor's pacing): every eviction takes `ms`. */
function world(ms: number, pdbs: Record<string, readonly string[]>) {
  const log: string[] = [];
  const kube = {
    core: {
      patchNode: async () => sleep(1),
      createNamespacedPodEviction: async ({ name }: { name: string }) => {
        log.push(`start ${name}`);
        await sleep(ms);
        log.push(`end ${name}`);
      },
    },
  } as unknown as KubeApis;
  const inFlight = new InFlight();
  const pacer = new EvictionPacer();
  const deps = {
    ...recordingDeps(kube, {} as CloudProvider),
    inFlight,
    evictions: { pacer, podOf: (_ns: string, pod: string) => ({ uid: `uid-${pod}`, pdbs: pdbs[pod] ?? [] }) },
  };
  return { log, deps, inFlight, pacer };
}

/** The most evictions the log shows under way at once. */
function mostAtOnce(log: readonly string[], pods: readonly string[]): number {
  let now = 0;
  let most = 0;
  for (const l of log) {
    const [what, pod] = l.split(' ');
    if (!pods.includes(pod ?? '')) continue;
    now += what === 'start' ? 1 : -1;
    most = Math.max(most, now);
  }
  return most;
}

describe('execute: evictions of one PDB one at a time (EvictionPacer)', () => {
  it("two nodes' drains evict pods of one PDB one after another, and pods of other PDBs beside them", async () => {
    const w = world(40, { a1: ['web/pdb'], b1: ['web/pdb'], c1: ['db/pdb'] });
    const results = await executeActions([evict('a', 'a1'), evict('b', 'b1'), evict('c', 'c1')], {
      ...w.deps,
      inFlight: undefined,
    });
    assert.deepEqual(
      results.map((r) => r.outcome.kind),
      ['done', 'done', 'done'],
    );
    assert.equal(mostAtOnce(w.log, ['a1', 'b1']), 1, w.log.join(', '));
    assert.ok(
      w.log.indexOf('start c1') < w.log.indexOf('end a1'),
      `another PDB's pod is not held: ${w.log.join(', ')}`,
    );
  });

  it("a drain left running past its round still holds the next round's eviction of the same PDB", async () => {
    const w = world(60, { a1: ['web/pdb'], b1: ['web/pdb'] });
    await executeActions([annotate('a', 'Draining'), evict('a', 'a1')], w.deps);
    assert.ok(w.inFlight.has('a'));
    await executeActions([annotate('b', 'Draining'), evict('b', 'b1')], w.deps);
    await w.inFlight.idle();
    assert.ok(w.log.indexOf('end a1') < w.log.indexOf('start b1'), w.log.join(', '));
    assert.equal(w.pacer.busy, 0, 'nothing left queued');
  });

  it('a pod under two PDBs waits for both; pods under none are not held', async () => {
    const pacer = new EvictionPacer();
    const log: string[] = [];
    const call = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await sleep(ms);
      log.push(`end ${name}`);
    };
    await Promise.all([
      pacer.run(['x'], call('x', 30)),
      pacer.run(['y'], call('y', 60)),
      pacer.run(['x', 'y'], call('xy', 5)),
      pacer.run([], call('free', 5)),
    ]);
    assert.ok(log.indexOf('end y') < log.indexOf('start xy'), log.join(', '));
    assert.ok(log.indexOf('end free') < log.indexOf('end x'), log.join(', '));
  });

  it('an eviction waits for the one before it no longer than the bound, then goes beside it', async () => {
    const pacer = new EvictionPacer(30);
    const log: string[] = [];
    let answer!: () => void;
    const slow = pacer.run(['x'], async () => {
      log.push('start slow');
      await new Promise<void>((r) => (answer = r));
      log.push('end slow');
    });
    const next = pacer.run(['x'], async () => {
      log.push('start next');
      await sleep(1);
      log.push('end next');
    });
    await next;
    assert.deepEqual(log, ['start slow', 'start next', 'end next'], 'the next went while the slow one was under way');
    answer();
    await slow;
    assert.equal(pacer.busy, 0);
  });

  it('the next eviction waits for the PDB to settle, told of the pods this pacer evicted', async () => {
    const asked: { pdb: string; evicted: string[]; timeoutMs: number }[] = [];
    let settle!: () => void;
    const settled = (pdb: string, evicted: ReadonlySet<string>, timeoutMs: number) => {
      asked.push({ pdb, evicted: [...evicted], timeoutMs });
      return asked.length === 1 ? Promise.resolve(true) : new Promise<boolean>((r) => (settle = () => r(true)));
    };
    const pacer = new EvictionPacer(500, settled);
    const log: string[] = [];
    const evictA = pacer.run(['x'], () => Promise.resolve('done'), { uid: 'uid-a', evicted: (a) => a === 'done' });
    assert.equal(await evictA, 'done');
    const evictB = pacer.run(['x'], async () => log.push('start b'), { uid: 'uid-b', evicted: () => true });
    await sleep(20);
    assert.deepEqual(log, [], 'held until the PDB settles');
    settle();
    await evictB;
    assert.deepEqual(log, ['start b']);
    assert.deepEqual(
      asked.map((a) => [a.pdb, a.evicted]),
      [
        ['x', []],
        ['x', ['uid-a']],
      ],
    );
    assert.ok(asked.every((a) => a.timeoutMs > 0 && a.timeoutMs <= 500));
  });

  it('a refused eviction is not remembered as a pod being deleted', async () => {
    const asked: string[][] = [];
    const pacer = new EvictionPacer(500, (_pdb, evicted) => {
      asked.push([...evicted]);
      return Promise.resolve(true);
    });
    await pacer.run(['x'], () => Promise.resolve('refused'), { uid: 'uid-a', evicted: (a) => a === 'done' });
    await pacer.run(['x'], () => Promise.resolve('done'), { uid: 'uid-b', evicted: (a) => a === 'done' });
    await pacer.run(['x'], () => Promise.resolve('done'));
    assert.deepEqual(asked, [[], [], ['uid-b']]);
  });

  it('forgets an evicted pod after half a minute, under every PDB', async () => {
    let now = 0;
    const asked: string[][] = [];
    const pacer = new EvictionPacer(
      500,
      (_pdb, evicted) => {
        asked.push([...evicted]);
        return Promise.resolve(true);
      },
      () => now,
    );
    const evicted = { uid: 'uid-a', evicted: () => true };
    await pacer.run(['x'], () => Promise.resolve(), evicted);
    await pacer.run(['y'], () => Promise.resolve(), { uid: 'uid-b', evicted: () => true });
    assert.equal(pacer.remembered, 2);
    now = 29_000;
    await pacer.run(['x'], () => Promise.resolve());
    now = 31_000;
    await pacer.run(['x'], () => Promise.resolve());
    assert.deepEqual(asked, [[], [], ['uid-a'], []]);
    assert.equal(pacer.remembered, 0, 'y, never evicted again, forgot its pod too');
  });

  it('waiting for the eviction before and for the PDB to settle together never passes the bound', async () => {
    const asked: number[] = [];
    const pacer = new EvictionPacer(30, (_pdb, _evicted, timeoutMs) => {
      asked.push(timeoutMs);
      return Promise.resolve(false);
    });
    let answer!: () => void;
    const slow = pacer.run(['x'], () => new Promise<void>((r) => (answer = r)));
    await pacer.run(['x'], () => Promise.resolve());
    // The first asked for the whole bound; the second spent it waiting for the first (which never
    // answered), so it has (next to) nothing left to wait for the PDB with.
    assert.ok(asked[0] !== undefined && asked[0] > 20 && asked[0] <= 30, `asked ${asked.join(', ')}`);
    assert.ok(asked.length === 1 || (asked[1] ?? 0) <= 2, `asked ${asked.join(', ')}`);
    answer();
    await slow;
  });

  it('a refused or failed eviction frees its PDB for the next', async () => {
    const pacer = new EvictionPacer();
    await assert.rejects(
      pacer.run(['x'], () => Promise.reject(new Error('refused'))),
      /refused/,
    );
    assert.equal(await pacer.run(['x'], () => Promise.resolve('next')), 'next');
    assert.equal(pacer.busy, 0);
  });
});
