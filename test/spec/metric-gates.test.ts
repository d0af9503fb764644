/**
 * rollout.metricGates as the loader reads it: drydock.yaml's defaults and a spec's own (which
 * replaces them whole), each bad input reported at its line, and the gates left out of the
 * spec's revision.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource } from '../../src/spec/index.js';
import { bad, runCorpus } from './corpus.js';
import { GROUP, IMAGE, memorySource } from './support.js';

const gates = (body: string): string => IMAGE + `  rollout:\n    metricGates:\n${body}`;
const PROM = '      prometheus: http://prometheus.monitoring:9090\n';

describe('spec: metricGates', () => {
  it("reads drydock.yaml's defaults, and a spec's own gates replace them whole", async () => {
    const config =
      'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ndefaults:\n  rollout:\n    metricGates:\n' +
      '      prometheus: http://prom:9090/\n      alerts: [{name: NodeDown, labels: {severity: page}}]\n';
    const own = doc2(
      'other',
      '  rollout:\n    metricGates:\n      prometheus: https://prom.example\n      alertmanager: http://am:9093\n' +
        '      bearerTokenFile: /var/run/secrets/prom/token\n      timeout: 2s\n      onBreach: halt\n' +
        '      queries:\n        - {name: errors, query: "sum(rate(errors[5m]))", above: 0.05}\n        - {query: up, below: 1}\n',
    );
    const r = await loadFromSource(memorySource({ 'drydock.yaml': config, 'image.yaml': IMAGE, 'other.yaml': own }));
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    const byName = new Map(r.desired.nodeImages.map((i) => [i.name, i.rollout.metricGates]));
    assert.deepEqual(byName.get('worker'), {
      prometheus: 'http://prom:9090',
      timeoutSeconds: 5,
      onBreach: 'hold',
      alerts: [{ name: 'NodeDown', labels: { severity: 'page' } }],
      queries: [],
    });
    assert.deepEqual(byName.get('other'), {
      prometheus: 'https://prom.example',
      alertmanager: 'http://am:9093',
      bearerTokenFile: '/var/run/secrets/prom/token',
      timeoutSeconds: 2,
      onBreach: 'halt',
      alerts: [],
      queries: [
        { name: 'errors', query: 'sum(rate(errors[5m]))', op: 'above', value: 0.05 },
        { name: 'up', query: 'up', op: 'below', value: 1 },
      ],
    });
  });

  it('leaves the gates out of the revision: adding one runs nothing again', async () => {
    const load = async (image: string) => {
      const r = await loadFromSource(memorySource({ 'image.yaml': image, 'group.yaml': GROUP }));
      assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
      return r.desired.nodeImages[0]?.revision;
    };
    const plain = await load(IMAGE);
    assert.equal(await load(gates(PROM)), plain);
    assert.notEqual(
      await load(IMAGE + '  rollout:\n    maxUnavailable: 2\n'),
      plain,
      'other rollout fields still count',
    );
  });

  describe('bad input, at its line', () =>
    runCorpus([
      bad(
        'an unparsable Prometheus URL',
        'i.yaml',
        gates('      prometheus: "not a url" # here\n'),
        '# here',
        'invalid-value',
        /"not a url" is not an http or https URL/,
      ),
      bad(
        'a URL that is not http',
        'i.yaml',
        gates(PROM + '      alertmanager: ftp://am:9093 # here\n'),
        '# here',
        'invalid-value',
        /not an http or https URL/,
      ),
      bad(
        'credentials in the URL',
        'i.yaml',
        gates('      prometheus: http://user:secret@prom:9090 # here\n'),
        '# here',
        'invalid-value',
        /carries credentials/,
      ),
      bad(
        'a threshold that is not a number',
        'i.yaml',
        gates(PROM + '      queries:\n        - query: up\n          below: one # here\n'),
        '# here',
        'schema',
      ),
      bad(
        'a query without a threshold',
        'i.yaml',
        gates(PROM + '      queries:\n        - query: up # here\n'),
        '# here',
        'invalid-value',
        /no threshold/,
      ),
      bad(
        'a query with both thresholds',
        'i.yaml',
        gates(PROM + '      queries:\n        - query: up # here\n          above: 1\n          below: 0\n'),
        '# here',
        'invalid-value',
        /both above and below/,
      ),
      bad('an unknown onBreach', 'i.yaml', gates(PROM + '      onBreach: page # here\n'), '# here', 'schema'),
      bad(
        'no Prometheus',
        'i.yaml',
        IMAGE + '  rollout:\n    metricGates: # here\n      alerts: [{name: X}]\n',
        '# here',
        'schema',
      ),
    ]));
});

function doc2(name: string, rollout: string): string {
  return IMAGE.replace('name: worker', `name: ${name}`) + rollout;
}
