import { strict as assert } from 'node:assert';
import { startPolling } from '../../src/service/polling.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('service polling (--interval on node-cron)', function () {
  this.timeout(15_000);

  it('fetches on a 1s schedule and stops when told', async () => {
    let fetches = 0;
    const polling = startPolling({
      interval: '1s',
      tick: async () => {
        fetches += 1;
      },
    });
    await sleep(3_200);
    await polling.stop();
    assert.ok(fetches >= 2, `expected at least 2 fetches in ~3s, got ${fetches}`);
    const atStop = fetches;
    await sleep(2_200);
    assert.equal(fetches, atStop, 'no fetch after stop()');
  });

  it('skips a tick while the previous fetch still runs', async () => {
    let running = 0;
    let overlap = false;
    let fetches = 0;
    const polling = startPolling({
      interval: '1s',
      tick: async () => {
        running += 1;
        if (running > 1) overlap = true;
        fetches += 1;
        await sleep(1_500);
        running -= 1;
      },
    });
    await sleep(3_500);
    await polling.stop();
    assert.ok(fetches >= 1);
    assert.equal(overlap, false);
  });

  it('an interval no cron step expresses (1500ms, like 90s) is polled on a timer instead of refused', async () => {
    let fetches = 0;
    const polling = startPolling({
      interval: '1500ms',
      tick: async () => {
        fetches += 1;
      },
    });
    await sleep(3_400);
    await polling.stop();
    assert.ok(fetches >= 2, `expected 2 fetches in ~3.4s, got ${fetches}`);
    assert.ok(fetches <= 3, `expected no more than 3 fetches in ~3.4s, got ${fetches}`);
  });

  it('a cron schedule (--poll-schedule) runs as given, over --interval', async () => {
    let fetches = 0;
    const polling = startPolling({
      schedule: '* * * * * *',
      interval: '1h',
      tick: async () => {
        fetches += 1;
      },
    });
    await sleep(2_600);
    await polling.stop();
    assert.ok(fetches >= 2, `expected at least 2 fetches in ~2.6s on an every-second schedule, got ${fetches}`);
  });
});
