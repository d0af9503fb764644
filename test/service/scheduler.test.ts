import assert from 'node:assert/strict';
import { Scheduler } from '../../src/service/scheduler.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `done()`; a loaded machine may take longer than any fixed sleep. */
async function until(what: string, done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(5);
  }
}

describe('Scheduler', () => {
  it('turns a burst of requests into one run', async () => {
    let runs = 0;
    const s = new Scheduler(async () => {
      runs++;
    });
    for (let i = 0; i < 10; i++) s.request(20);
    await sleep(80);
    assert.equal(runs, 1);
    await s.stop();
  });

  it('runs at the earliest requested time', async () => {
    const at: number[] = [];
    const t0 = Date.now();
    const s = new Scheduler(async () => {
      at.push(Date.now() - t0);
    });
    s.request(1000);
    s.request(10);
    await sleep(100);
    assert.equal(at.length, 1);
    assert.ok((at[0] ?? 999) < 100);
    await s.stop();
  });

  it('never runs two jobs at once and remembers a request made during a run', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const s = new Scheduler(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      runs++;
      if (runs === 1) s.request(0);
      await sleep(30);
      active--;
    });
    s.request(0);
    // The run asked for during the first, then a while for any third one to show.
    await until('the second run over', () => runs === 2 && active === 0);
    await sleep(100);
    assert.equal(maxActive, 1);
    assert.equal(runs, 2);
    await s.stop();
  });

  it('stop waits for the run in flight and prevents new ones', async () => {
    let finished = false;
    let runs = 0;
    const s = new Scheduler(async () => {
      runs++;
      await sleep(40);
      finished = true;
    });
    s.request(0);
    await sleep(5);
    await s.stop();
    assert.equal(finished, true);
    s.request(0);
    await sleep(20);
    assert.equal(runs, 1);
  });

  it('survives a job that throws', async () => {
    let runs = 0;
    const s = new Scheduler(async () => {
      runs++;
      throw new Error('boom');
    });
    s.request(0);
    await sleep(10);
    s.request(0);
    await sleep(10);
    assert.equal(runs, 2);
    await s.stop();
  });

  describe('requestSpaced (watch events)', () => {
    it('runs at once after a quiet spell, and a burst makes one run now and one a gap later', async () => {
      const at: number[] = [];
      const t0 = Date.now();
      const s = new Scheduler(async () => {
        at.push(Date.now() - t0);
        await sleep(150); // a run this long allows the whole 1 s gap (9 × 150 ms)
      });
      // Margins wide enough for a loaded machine: "at once" is well inside the 1 s gap.
      for (let i = 0; i < 10; i++) s.requestSpaced(1_000);
      await sleep(300);
      assert.equal(at.length, 1, 'the first event of a quiet spell runs at once');
      s.requestSpaced(1_000);
      s.requestSpaced(1_000);
      await sleep(300);
      assert.equal(at.length, 1, 'events right after a run wait for the gap');
      await sleep(1_000);
      assert.equal(at.length, 2, 'and then make one run');
      assert.ok((at[1] ?? 0) - (at[0] ?? 0) >= 1_000, `the gap was kept: ${at.join(', ')}`);
      await s.stop();
    });

    it('counts the gap from the end of the last run', async () => {
      let now = 1_000;
      const ran: number[] = [];
      const s = new Scheduler(
        async () => {
          ran.push(now);
          now += 500; // a run of 500 ms on this clock
        },
        () => now,
      );
      s.request(0);
      await sleep(20);
      assert.deepEqual(ran, [1_000]);
      now += 100; // 100 ms after the run ended at 1,500
      s.requestSpaced(250);
      await sleep(60);
      assert.deepEqual(ran, [1_000], 'not yet: 150 ms of the gap are left');
      await sleep(150);
      assert.deepEqual(ran, [1_000, 1_600]);
      await s.stop();
    });

    // A fake clock; the due time is read at once (the real timer behind it is seconds away).
    it('keeps a gap of nine times the last run, at least 20 ms, at most the gap allowed', async () => {
      let now = 0;
      let runMs = 1_000;
      let runs = 0;
      const s = new Scheduler(
        async () => {
          runs += 1;
          now += runMs;
        },
        () => now,
      );
      const runNow = async (): Promise<void> => {
        const before = runs;
        s.request(0);
        await until('a run', () => runs === before + 1 && !s.busy);
      };
      await runNow(); // 0 → 1,000
      s.requestSpaced(60_000);
      assert.equal(s.nextAt, 1_000 + 9_000, 'nine times the 1 s run');
      runMs = 0; // a cheap run (nothing to do)
      await runNow();
      s.requestSpaced(60_000);
      assert.equal(s.nextAt, now + 20, 'at least 20 ms');
      runMs = 10_000; // a costly run: the gap allowed, not 90 s
      await runNow();
      s.requestSpaced(60_000);
      assert.equal(s.nextAt, now + 60_000);
      await s.stop();
    });

    it('serves an event that came during a run a gap after that run ends', async () => {
      let now = 0;
      let release: () => void = () => undefined;
      const s = new Scheduler(
        async () => {
          await new Promise<void>((r) => (release = r));
        },
        () => now,
      );
      s.request(0);
      await until('the run', () => s.busy);
      now = 100;
      s.requestSpaced(60_000); // during the run
      now = 1_000; // the run took 1 s
      release();
      await until('the end of the run', () => !s.busy);
      assert.equal(s.nextAt, 1_000 + 9_000);
      await s.stop();
    });
  });
});
