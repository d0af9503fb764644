/**
 * The metric gates' observer against a real Prometheus and Alertmanager: firing alerts hold,
 * pending ones do not, a silence in Alertmanager lifts its alert, a query past its threshold
 * names its value, and a Prometheus that does not answer is its own reading. The bearer token
 * is sent and never shown.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { metricGatesKey, MetricSightings, observeMetrics, type MetricReading } from '../../src/observe/metrics.js';
import type { DesiredState, MetricGates, RepoConfig } from '../../src/spec/model.js';
import { eventually } from '../support/control-plane.js';
import { usePrometheus } from '../support/prometheus.js';

function desiredWith(g: MetricGates): Partial<DesiredState> {
  return { config: { defaults: { rollout: { metricGates: g } } } as unknown as RepoConfig };
}

async function read(g: MetricGates, sightings?: MetricSightings, now = Date.now()): Promise<MetricReading | undefined> {
  const out = await observeMetrics(desiredWith(g), now, sightings);
  return out?.[metricGatesKey(g)];
}

/** Each breach in words; the scraped endpoint's port (in the instance label) varies by run. */
const breaches = (r: MetricReading | undefined): string[] =>
  r?.reachable === true
    ? r.breaches.map((b) => `${b.what} ${b.value}`.replace(/instance="127\.0\.0\.1:\d+"/, 'instance="gauges"'))
    : [`unreachable: ${r?.problem ?? 'no reading'}`];
const FIRING = 'alert WorldUnwell{instance="gauges",job="world",severity="page"} firing';

describe('observe: metric gates against a real Prometheus and Alertmanager', function () {
  this.timeout(90_000);
  const prom = usePrometheus();
  const gates = (o: Partial<MetricGates> = {}): MetricGates => ({
    prometheus: prom().prometheus,
    alertmanager: prom().alertmanager,
    timeoutSeconds: 2,
    onBreach: 'hold',
    alerts: [
      { name: 'WorldUnwell', labels: { severity: 'page' } },
      { name: 'WorldSlow', labels: {} },
    ],
    queries: [{ name: 'errors', query: 'max(world_errors)', op: 'above', value: 0.5 }],
    ...o,
  });

  it('nothing wrong: a reading without breaches', async () => {
    assert.deepEqual(await read(gates()), { reachable: true, breaches: [] });
  });

  it('a firing alert breaches with its labels and activeAt; a pending one does not; other labels do not match', async () => {
    prom().set('world_unwell', 1);
    prom().set('world_slow', 1);
    await prom().alertState('WorldUnwell', 'firing');
    await prom().alertState('WorldSlow', 'pending');
    const r = await read(gates({ alertmanager: undefined }));
    assert.deepEqual(breaches(r), [FIRING]);
    assert.ok(r?.reachable === true && Date.parse(r.breaches[0]?.since ?? '') <= Date.now());
    const other = await read(gates({ alerts: [{ name: 'WorldUnwell', labels: { severity: 'ticket' } }] }));
    assert.deepEqual(breaches(other), []);
  });

  it('an active silence in Alertmanager lifts the alert; once expired it holds again', async () => {
    const id = await prom().silence('WorldUnwell');
    assert.deepEqual(breaches(await read(gates())), []);
    await prom().expire(id);
    assert.deepEqual(breaches(await read(gates())), [FIRING]);
    prom().set('world_unwell', 0);
    prom().set('world_slow', 0);
    await prom().alertState('WorldUnwell', 'inactive');
  });

  it('a query past its threshold names its value; since when is kept across rounds', async () => {
    prom().set('world_errors', 2);
    const sightings = new MetricSightings();
    // Round one sees it first (after the next scrape), at "2_000_000"; round two keeps that.
    await eventually('the query past its threshold', async () => {
      const r = await read(gates({ alerts: [] }), sightings, 2_000_000);
      return r?.reachable === true && r.breaches.length > 0;
    });
    const later = await read(gates({ alerts: [] }), sightings, 3_000_000);
    assert.deepEqual(breaches(later), ['query errors 2 > 0.5']);
    assert.equal(later?.reachable === true ? later.breaches[0]?.since : '', new Date(2_000_000).toISOString());
    const below = await read(
      gates({ alerts: [], queries: [{ name: 'e', query: 'max(world_errors)', op: 'below', value: 1 }] }),
    );
    assert.deepEqual(breaches(below), []);
    prom().set('world_errors', 0);
  });

  it('a query Prometheus refuses is a reading of its own, not a pass', async () => {
    const r = await read(gates({ alerts: [], queries: [{ name: 'bad', query: 'sum(', op: 'above', value: 1 }] }));
    assert.equal(r?.reachable, false);
    assert.match(r?.reachable === false ? r.problem : '', /^Prometheus at http:\/\/127\.0\.0\.1:\d+ answered 400/);
  });

  it('sends the bearer token from its file and never shows it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drydock-token-'));
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.statusCode = 401;
      res.end(JSON.stringify({ status: 'error', error: 'bad token' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    const url = `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`;
    try {
      writeFileSync(path.join(dir, 'token'), 'canary-token-7f3a\n');
      const r = await read(
        gates({ prometheus: url, alertmanager: undefined, bearerTokenFile: path.join(dir, 'token') }),
      );
      assert.ok(seen.length > 0 && seen.every((h) => h === 'Bearer canary-token-7f3a'));
      assert.equal(r?.reachable, false);
      assert.match(r?.reachable === false ? r.problem : '', /answered 401 .*bad token/);
      assert.doesNotMatch(JSON.stringify(r), /canary-token/);
      const missing = await read(gates({ bearerTokenFile: path.join(dir, 'nope') }));
      assert.match(
        missing?.reachable === false ? missing.problem : '',
        /cannot read bearerTokenFile .*nope \(ENOENT\)/,
      );
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Prometheus stopped: unreachable, never a pass', async () => {
    await prom().stopPrometheus();
    const r = await read(gates());
    assert.equal(r?.reachable, false);
    assert.match(
      r?.reachable === false ? r.problem : '',
      /^Prometheus at http:\/\/127\.0\.0\.1:\d+ unreachable: fetch failed/,
    );
  });
});
