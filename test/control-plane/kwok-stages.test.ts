import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { kwokStagesYaml, withStatusHeartbeat } from '../../src/sandbox/control-plane/kwok.js';

describe('KWOK stages: a YAML asset shipped in the package', () => {
  it('the compiled code finds assets/kwok/stages.yaml and it holds the six Stages', () => {
    const docs = parseAllDocuments(kwokStagesYaml());
    assert.deepEqual(
      docs.map((d) => d.errors.length),
      [0, 0, 0, 0, 0, 0],
    );
    const stages = docs.map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    assert.deepEqual(
      stages.map((s) => `${s.kind}/${s.metadata.name}`),
      [
        'Stage/node-initialize',
        'Stage/node-heartbeat-with-lease',
        'Stage/pod-ready',
        'Stage/pod-complete',
        'Stage/pod-delete',
        'Stage/pod-ready-again',
      ],
    );
  });

  it('package.json ships assets/', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      files: string[];
    };
    assert.ok(pkg.files.includes('assets'), `files is ${JSON.stringify(pkg.files)}`);
  });

  it("withStatusHeartbeat changes the heartbeat stage's delay and nothing else", () => {
    type Stage = {
      metadata: { name: string };
      spec: { delay?: { durationMilliseconds: number; jitterDurationMilliseconds: number } };
    };
    const stages = (yaml: string) => parseAllDocuments(yaml).map((d) => d.toJS() as Stage);
    const before = stages(kwokStagesYaml());
    const after = stages(withStatusHeartbeat(kwokStagesYaml(), 1800));
    assert.deepEqual(after.find((s) => s.metadata.name === 'node-heartbeat-with-lease')?.spec.delay, {
      durationMilliseconds: 1_800_000,
      jitterDurationMilliseconds: 1_830_000,
    });
    const others = (all: Stage[]) => all.filter((s) => s.metadata.name !== 'node-heartbeat-with-lease');
    assert.deepEqual(others(after), others(before));
    assert.equal(after.length, before.length);
  });
});
