/**
 * One case per rule of the loader: the input, and the finding it must produce (code, file,
 * line, column). Positions are counted by hand from the inputs.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource } from '../../src/spec/index.js';
import { doc, GROUP, IMAGE, memorySource, type MemoryEntry } from './support.js';

interface Case {
  readonly name: string;
  readonly files: Readonly<Record<string, MemoryEntry>>;
  /** [code, file, line, column] of a finding that must be among the errors. */
  readonly expect: readonly [string, string, number, number];
  /** A fragment the message or hint must contain. */
  readonly says?: RegExp;
}

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\n';
const WINDOW = (spec: string): string => doc('MaintenanceWindow', 'nights', spec);

const cases: readonly Case[] = [
  // Schema: shape of documents.
  {
    name: 'unknown field (typo) with a suggestion',
    files: { 'i.yaml': IMAGE + '  strategey: replace\n' },
    expect: ['schema', 'i.yaml', 7, 3],
    says: /did you mean "strategy"/,
  },
  {
    name: 'unknown top-level field',
    files: { 'i.yaml': IMAGE + 'status: {}\n' },
    expect: ['schema', 'i.yaml', 7, 1],
    says: /unknown field "status"/,
  },
  {
    name: 'unknown field in metadata',
    files: { 'i.yaml': IMAGE.replace('  name: worker\n', '  name: worker\n  namespace: x\n') },
    expect: ['schema', 'i.yaml', 5, 3],
  },
  {
    name: 'missing required field',
    files: { 'g.yaml': doc('ScalingGroup', 'g', 'provider: sim\nnodeImage: worker') },
    expect: ['schema', 'g.yaml', 5, 1],
    says: /missing required field "groupId"/,
  },
  {
    name: 'missing metadata.name',
    files: { 'i.yaml': 'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata: {}\nspec: {image: x}\n' },
    expect: ['schema', 'i.yaml', 3, 1],
    says: /"name"/,
  },
  {
    name: 'wrong type',
    files: { 'g.yaml': GROUP + '  autoscaling: "yes"\n' },
    expect: ['schema', 'g.yaml', 9, 16],
    says: /must be a boolean/,
  },
  {
    name: 'enum value',
    files: { 'g.yaml': GROUP + '  role: Worker\n' },
    expect: ['schema', 'g.yaml', 9, 9],
    says: /did you mean "worker"/,
  },
  {
    name: 'invalid name',
    files: { 'i.yaml': IMAGE.replace('name: worker', 'name: Worker_1') },
    expect: ['schema', 'i.yaml', 4, 9],
  },
  {
    name: 'duration that does not parse',
    files: { 'i.yaml': IMAGE + '  rollout:\n    joinTimeout: 10 minutes\n' },
    expect: ['schema', 'i.yaml', 8, 18],
    says: /duration/i,
  },
  {
    name: 'percentage over 100%',
    files: { 'i.yaml': IMAGE + '  rollout:\n    maxUnavailable: 150%\n' },
    expect: ['schema', 'i.yaml', 8, 21],
  },
  {
    name: 'negative count',
    files: { 'i.yaml': IMAGE + '  rollout:\n    maxSurge: -1\n' },
    expect: ['schema', 'i.yaml', 8, 15],
  },
  {
    name: 'percentage in drydock.yaml budget',
    files: { 'drydock.yaml': CONFIG + 'budget: {maxUnavailable: 101%}\n' },
    expect: ['schema', 'drydock.yaml', 3, 26],
  },
  {
    name: 'unknown field in drydock.yaml',
    files: { 'drydock.yaml': CONFIG + 'cluser: x\n' },
    expect: ['schema', 'drydock.yaml', 3, 1],
    says: /did you mean "cluster"/,
  },
  {
    name: 'a bad cron in a drydock.yaml budget window',
    files: {
      'drydock.yaml': CONFIG + 'budget:\n  windows:\n    - {maxUnavailable: 3, schedule: "0 25 * * *", duration: 8h}\n',
    },
    expect: ['invalid-value', 'drydock.yaml', 5, 37],
    says: /cron expression "0 25 \* \* \*" is not valid/,
  },
  {
    name: 'a percentage over 100 in a drydock.yaml budget window',
    files: {
      'drydock.yaml':
        CONFIG + 'budget:\n  windows:\n    - {maxUnavailable: 150%, schedule: "0 22 * * *", duration: 8h}\n',
    },
    expect: ['schema', 'drydock.yaml', 5, 24],
  },
  {
    name: 'a budget window of 0s',
    files: {
      'drydock.yaml': CONFIG + 'budget:\n  windows:\n    - {maxUnavailable: 3, schedule: "0 22 * * *", duration: 0s}\n',
    },
    expect: ['invalid-value', 'drydock.yaml', 5, 61],
    says: /never active/,
  },
  {
    name: 'maxFailures that disagrees with stopOnFailure beside it',
    files: { 'i.yaml': IMAGE + '  rollout: {stopOnFailure: true, maxFailures: 3}\n' },
    expect: ['invalid-value', 'i.yaml', 7, 47],
    says: /maxFailures 3 disagrees with stopOnFailure: true/,
  },
  {
    name: "maxFailures that disagrees with a NodeOp's own stopOnFailure",
    files: {
      'o.yaml': doc('NodeOp', 'patch', 'command: [/bin/true]\nstopOnFailure: false\nrollout: {maxFailures: 2}'),
    },
    expect: ['invalid-value', 'o.yaml', 8, 26],
    says: /disagrees with spec.stopOnFailure: false/,
  },
  {
    name: 'maxFailures 0',
    files: { 'i.yaml': IMAGE + '  rollout: {maxFailures: 0}\n' },
    expect: ['invalid-value', 'i.yaml', 7, 26],
    says: /halts before the first failure/,
  },
  {
    name: 'a maxFailures percentage over 100',
    files: { 'i.yaml': IMAGE + '  rollout: {maxFailures: 101%}\n' },
    expect: ['schema', 'i.yaml', 7, 26],
  },
  // Kinds.
  {
    name: 'document without kind',
    files: { 'x.yaml': 'apiVersion: drydock.dev/v1alpha1\nmetadata: {name: x}\n' },
    expect: ['missing-kind', 'x.yaml', 1, 1],
  },
  {
    name: 'document without apiVersion',
    files: { 'x.yaml': 'kind: NodeImage\nmetadata: {name: x}\n' },
    expect: ['missing-kind', 'x.yaml', 1, 1],
    says: /apiVersion/,
  },
  {
    name: 'non-drydock kind (ConfigMap)',
    files: { 'x.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' },
    expect: ['unknown-kind', 'x.yaml', 2, 7],
    says: /drydock\.dev\/v1alpha1: ScalingGroup/,
  },
  {
    name: 'misspelt kind',
    files: { 'x.yaml': IMAGE.replace('kind: NodeImage', 'kind: NodeImages') },
    expect: ['unknown-kind', 'x.yaml', 2, 7],
    says: /did you mean NodeImage/,
  },
  {
    name: 'wrong apiVersion of a known kind',
    files: { 'x.yaml': IMAGE.replace('drydock.dev/v1alpha1', 'drydock.dev/v1') },
    expect: ['unknown-kind', 'x.yaml', 1, 13],
    says: /use apiVersion drydock\.dev\/v1alpha1/,
  },
  {
    name: 'PendingNode is refused, pointing at status',
    files: {
      'p.yaml':
        'apiVersion: update.edgeless.systems/v1alpha1\nkind: PendingNode\nmetadata: {name: p}\nspec: {nodeName: n, goal: Join}\n',
    },
    expect: ['refused-kind', 'p.yaml', 2, 7],
    says: /extra\.pending in the NodeImage’s status \(status\/NodeImage\/<name>\.yaml/,
  },
  { name: 'RepoConfig outside drydock.yaml', files: { 'c.yaml': CONFIG }, expect: ['refused-kind', 'c.yaml', 2, 7] },
  { name: 'a list instead of a mapping', files: { 'l.yaml': '- a\n- b\n' }, expect: ['not-an-object', 'l.yaml', 1, 1] },
  // Values the schema cannot judge.
  {
    name: 'cron with six fields',
    files: { 'w.yaml': WINDOW('timeZone: UTC\nschedules:\n  - {cron: "0 0 22 * * 1", duration: 1h}') },
    expect: ['invalid-value', 'w.yaml', 8, 14],
    says: /6 fields/,
  },
  {
    name: 'cron out of range',
    files: { 'w.yaml': WINDOW('timeZone: UTC\nschedules:\n  - {cron: "61 22 * * 1", duration: 1h}') },
    expect: ['invalid-value', 'w.yaml', 8, 14],
  },
  {
    name: 'unknown time zone',
    files: { 'w.yaml': WINDOW('timeZone: Europe/Berlinn\nschedules:\n  - {cron: "0 22 * * 1", duration: 1h}') },
    expect: ['invalid-value', 'w.yaml', 6, 13],
    says: /IANA/,
  },
  {
    name: 'exclusion ending before it starts',
    files: {
      'w.yaml': WINDOW(
        'timeZone: UTC\nschedules:\n  - {cron: "0 22 * * 1", duration: 1h}\nexclusions:\n  - start: "2026-02-01T00:00:00Z"\n    end: "2026-01-01T00:00:00Z"',
      ),
    },
    expect: ['invalid-value', 'w.yaml', 11, 12],
  },
  {
    name: 'exclusion that is not a date-time',
    files: {
      'w.yaml': WINDOW(
        'timeZone: UTC\nschedules:\n  - {cron: "0 22 * * 1", duration: 1h}\nexclusions:\n  - start: tomorrow\n    end: "2026-01-01T00:00:00Z"',
      ),
    },
    expect: ['schema', 'w.yaml', 10, 14],
  },
  {
    name: 'inPlace without nodeSelector',
    files: { 'i.yaml': IMAGE + '  strategy: inPlace\n' },
    expect: ['invalid-value', 'i.yaml', 7, 13],
  },
  {
    name: 'selector operator In without values',
    files: {
      'o.yaml': doc(
        'NodeOp',
        'o',
        'command: ["true"]\nnodeSelector:\n  matchExpressions:\n    - {key: a, operator: In}',
      ),
    },
    expect: ['invalid-value', 'o.yaml', 9, 9],
  },
  {
    name: 'NodeOp drain without cordon',
    files: { 'o.yaml': doc('NodeOp', 'o', 'command: ["true"]\ndrainOptions: {enabled: true}') },
    expect: ['invalid-value', 'o.yaml', 7, 27],
  },
  {
    name: 'NodeOp concurrency in rollout',
    files: { 'o.yaml': doc('NodeOp', 'o', 'command: ["true"]\nrollout: {concurrency: 2}') },
    expect: ['invalid-value', 'o.yaml', 7, 26],
    says: /spec\.concurrency/,
  },
  {
    name: 'approval of a NodeImage without image',
    files: { 'i.yaml': IMAGE, 'a.yaml': doc('Approval', 'a', 'target: {kind: NodeImage, name: worker}\nstage: start') },
    expect: ['invalid-value', 'a.yaml', 6, 3],
  },
  {
    name: 'drydock ScalingGroup with a plain groupId and no provider',
    files: { 'g.yaml': doc('ScalingGroup', 'g', 'groupId: my-asg\nnodeImage: worker') },
    expect: ['ambiguous-provider', 'g.yaml', 6, 12],
  },
  {
    name: 'provider contradicting the groupId format',
    files: {
      'g.yaml': doc(
        'ScalingGroup',
        'g',
        'provider: aws\ngroupId: projects/my-project-1/zones/europe-west3-a/instanceGroupManagers/w\nnodeImage: worker',
      ),
    },
    expect: ['invalid-group-id', 'g.yaml', 7, 12],
    says: /gcp/,
  },
  {
    name: 'drydock.yaml path outside the repository',
    files: { 'drydock.yaml': CONFIG + 'paths: [../other]\n' },
    expect: ['config', 'drydock.yaml', 3, 9],
  },
  {
    name: 'drydock.yaml path that does not exist',
    files: { 'drydock.yaml': CONFIG + 'paths:\n  - specs\n' },
    expect: ['config', 'drydock.yaml', 4, 5],
  },
  {
    name: 'drydock.yaml webhook receiver without a signing key',
    files: {
      'drydock.yaml':
        CONFIG +
        'notifications:\n  receivers:\n    - name: a\n      type: webhook\n      urlFrom: {file: a-url}\n      events: [started]\n',
    },
    expect: ['config', 'drydock.yaml', 5, 7],
    says: /secretFrom/,
  },
  {
    name: 'drydock.yaml Slack receiver with a signing key',
    files: {
      'drydock.yaml':
        CONFIG +
        'notifications:\n  receivers:\n    - name: a\n      type: slack\n      urlFrom: {file: a-url}\n      secretFrom: {env: DRYDOCK_NOTIFY_KEY}\n      events: [started]\n',
    },
    expect: ['config', 'drydock.yaml', 8, 19],
    says: /webhook only/,
  },
  {
    name: 'drydock.yaml receiver named twice',
    files: {
      'drydock.yaml':
        CONFIG +
        'notifications:\n  receivers:\n    - {name: a, type: slack, urlFrom: {file: a}, events: [halted]}\n    - {name: a, type: teams, urlFrom: {file: b}, events: [halted]}\n',
    },
    expect: ['config', 'drydock.yaml', 6, 14],
    says: /named twice/,
  },
  {
    name: 'drydock.yaml secret file that leaves the secrets directory',
    files: {
      'drydock.yaml':
        CONFIG +
        'notifications:\n  receivers:\n    - {name: a, type: slack, urlFrom: {file: ../token}, events: [halted]}\n',
    },
    expect: ['schema', 'drydock.yaml', 5, 46],
  },
  {
    name: 'drydock.yaml secret variable outside DRYDOCK_NOTIFY_',
    files: {
      'drydock.yaml':
        CONFIG +
        'notifications:\n  receivers:\n    - {name: a, type: slack, urlFrom: {env: AWS_SECRET_ACCESS_KEY}, events: [halted]}\n',
    },
    expect: ['schema', 'drydock.yaml', 5, 45],
  },
  // The set as a whole.
  {
    name: 'ScalingGroup naming a missing NodeImage',
    files: { 'g.yaml': GROUP },
    expect: ['dangling-reference', 'g.yaml', 8, 14],
    says: /no NodeImage named "worker"/,
  },
  {
    name: 'ScalingGroup naming an inPlace NodeImage',
    files: { 'g.yaml': GROUP, 'i.yaml': IMAGE + '  strategy: inPlace\n  nodeSelector: {matchLabels: {a: b}}\n' },
    expect: ['dangling-reference', 'g.yaml', 8, 14],
    says: /strategy inPlace/,
  },
  {
    name: 'rollout.window naming a missing MaintenanceWindow',
    files: { 'i.yaml': IMAGE + '  rollout:\n    window: nightz\n' },
    expect: ['dangling-reference', 'i.yaml', 8, 13],
  },
  {
    name: "drydock.yaml's default window missing",
    files: { 'drydock.yaml': CONFIG + 'defaults:\n  rollout:\n    window: nights\n' },
    expect: ['dangling-reference', 'drydock.yaml', 5, 13],
  },
  {
    name: 'Approval of a missing target',
    files: { 'a.yaml': doc('Approval', 'a', 'target: {kind: NodeImage, name: nope}\nimage: x\nstage: start') },
    expect: ['dangling-reference', 'a.yaml', 6, 35],
  },
  {
    name: 'UpgradeGate naming a missing spec',
    files: {
      'u.yaml': doc(
        'UpgradeGate',
        'u',
        'appliesTo:\n  targets:\n    - {kind: NodeOp, name: nope}\nbefore:\n  - spec: {template: {}}',
      ),
    },
    expect: ['dangling-reference', 'u.yaml', 8, 30],
  },
  {
    name: 'duplicate name in one kind',
    files: { 'a.yaml': IMAGE, 'b.yaml': IMAGE },
    expect: ['duplicate-name', 'b.yaml', 4, 9],
    says: /a\.yaml:4:9/,
  },
  {
    name: 'NodeOp clashing with the one a NodeOpUpgrade generates',
    files: { 'o.yaml': doc('NodeOp', 'up', 'command: ["true"]'), 'u.yaml': doc('NodeOpUpgrade', 'up', 'image: x') },
    expect: ['duplicate-name', 'u.yaml', 4, 9],
    says: /generated by NodeOpUpgrade\/up/,
  },
  {
    name: 'two ScalingGroups for one cloud group',
    files: { 'i.yaml': IMAGE, 'g.yaml': GROUP + '---\n' + GROUP.replace('name: workers', 'name: workers-2') },
    expect: ['duplicate-group', 'g.yaml', 16, 12],
  },
  {
    name: 'two NodeMaintenances for one node',
    files: {
      'm.yaml': doc('NodeMaintenance', 'a', 'nodeName: n1') + '---\n' + doc('NodeMaintenance', 'b', 'nodeName: n1'),
    },
    expect: ['duplicate-maintenance', 'm.yaml', 13, 13],
  },
];

describe('spec loader: one finding per rule', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const r = await loadFromSource(memorySource(c.files));
      assert.equal(r.ok, false, 'expected findings');
      if (r.ok) return;
      const [code, file, line, column] = c.expect;
      const hit = r.errors.find((e) => e.code === code && e.file === file && e.line === line && e.column === column);
      assert.ok(
        hit,
        `no ${code} at ${file}:${line}:${column}; got:\n${r.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.code} ${e.message}`).join('\n')}`,
      );
      assert.ok(hit.hint.length > 0, 'every finding has a hint');
      if (c.says) assert.match(`${hit.message} ${hit.hint}`, c.says);
    });
  }

  it('reports every error of a repository, not the first', async () => {
    const r = await loadFromSource(
      memorySource({ 'a.yaml': IMAGE + '  bogus: 1\n', 'b.yaml': GROUP + '  role: x\n', 'c.yaml': 'kind: X\n' }),
    );
    assert.equal(r.ok, false);
    if (!r.ok) assert.deepEqual([...new Set(r.errors.map((e) => e.file))], ['a.yaml', 'b.yaml', 'c.yaml']);
  });
});
