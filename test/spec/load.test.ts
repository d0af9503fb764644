import { strict as assert } from 'node:assert';
import path from 'node:path';
import { loadFromDirectory, loadFromSource, SpecSourceError } from '../../src/spec/index.js';
import { GROUP, IMAGE, memorySource, ROOT } from './support.js';

describe('spec loader: examples-repo and the happy path', () => {
  it('loads examples-repo without errors, every list sorted by name', async () => {
    const r = await loadFromDirectory(path.join(ROOT, 'examples-repo'));
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors, null, 2));
    const d = r.desired;
    assert.equal(d.config.cluster, 'sandbox');
    assert.deepEqual(
      d.scalingGroups.map((g) => [g.name, g.provider, g.groupId, g.nodeImage, g.role]),
      [
        ['control-plane', 'sim', 'control-plane', 'control-plane', 'control-plane'],
        ['workers', 'sim', 'workers', 'worker', 'worker'],
      ],
    );
    assert.deepEqual(
      d.nodeImages.map((i) => [i.name, i.image, i.rollout.window, i.rollout.approval.required]),
      [
        ['control-plane', 'registry.example/node-os:v1.0.0', undefined, 'none'],
        ['worker', 'registry.example/node-os:v1.0.0', undefined, 'none'],
      ],
    );
    for (const list of [
      d.nodeOps,
      d.nodeImages,
      d.upgradeGates,
      d.approvals,
      d.maintenanceWindows,
      d.nodeMaintenances,
    ]) {
      const names = list.map((s) => s.name);
      assert.deepEqual(names, [...names].sort());
    }
    assert.equal(d.autoscalingStrategies.length, 1);
    // The NodeOpUpgrade is a template (templates/edge-upgrade.yaml): in force, it would act on every worker at once.
    assert.equal(d.nodeOpUpgrades.length, 0);
    assert.equal(d.nodeOps.length, 1, 'the NodeOp');
  });

  it("keeps examples-repo's approval pointing at the NodeOp's current revision", async () => {
    const r = await loadFromDirectory(path.join(ROOT, 'examples-repo'));
    assert.ok(r.ok);
    for (const a of r.desired.approvals.filter((x) => x.target.kind === 'NodeOp')) {
      const op: { revision: string } | undefined = r.desired.nodeOps.find((o) => o.name === a.target.name);
      assert.equal(
        a.targetRevision,
        op?.revision,
        `approval ${a.name} is for an older revision; update it to the revision drydock reports`,
      );
    }
  });

  it('works without drydock.yaml, with built-in defaults, reading the whole tree', async () => {
    const r = await loadFromSource(
      memorySource({ 'a/image.yaml': IMAGE, 'b/c/group.yml': GROUP, 'README.md': '# not a spec' }),
    );
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.deepEqual(r.files, ['a/image.yaml', 'b/c/group.yml']);
    assert.equal(r.desired.config.cluster, 'default');
    assert.equal(r.desired.config.statusBranch, 'drydock/status');
    assert.equal(r.desired.config.source, undefined);
    const rollout = r.desired.nodeImages[0]?.rollout;
    assert.deepEqual(
      [rollout?.maxSurge, rollout?.maxUnavailable, rollout?.joinTimeoutSeconds, rollout?.order],
      [1, 1, 900, 'controlPlaneFirst'],
    );
  });

  it("fills defaults from drydock.yaml's defaults.rollout, then the spec's own", async () => {
    const config =
      'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ndefaults:\n  rollout:\n    maxSurge: 25%\n    joinTimeout: 1h30m\n    healthGate: {timeout: 10m}\n    drain:\n      timeoutSeconds: 60\n';
    const image =
      IMAGE +
      '  rollout:\n    maxUnavailable: 2\n    canary: {nodes: 2, soak: 90s}\n    drain: {force: true}\n    healthGate: {minReadySeconds: 5}\n';
    const r = await loadFromSource(memorySource({ 'drydock.yaml': config, 'image.yaml': image }));
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    const ro = r.desired.nodeImages[0]!.rollout;
    assert.deepEqual(
      [
        ro.maxSurge,
        ro.maxUnavailable,
        ro.joinTimeoutSeconds,
        ro.canary,
        ro.drain.timeoutSeconds,
        ro.drain.force,
        ro.drain.enabled,
      ],
      ['25%', 2, 5400, { nodes: 2, soakSeconds: 90 }, 60, true, true],
    );
    // healthGate.timeout from the defaults stays when the spec sets only minReadySeconds.
    assert.deepEqual(ro.healthGate, { minReadySeconds: 5, timeoutSeconds: 600 });
  });

  it('reads only the configured paths, skipping dot-entries and .drydockignore matches', async () => {
    const src = memorySource({
      'drydock.yaml': 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\npaths: [specs, more/]\n',
      '.drydockignore': 'specs/drafts/\n*.draft.yaml\n',
      'specs/image.yaml': IMAGE,
      'specs/.hidden.yaml': 'not: [valid',
      'specs/.git/x.yaml': 'not: [valid',
      'specs/drafts/a.yaml': 'not: [valid',
      'specs/b.draft.yaml': 'not: [valid',
      'more/group.yaml': GROUP,
      'elsewhere/c.yaml': 'not: [valid',
    });
    const r = await loadFromSource(src);
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.deepEqual(r.files, ['drydock.yaml', 'more/group.yaml', 'specs/image.yaml']);
    assert.deepEqual([...src.reads].sort(), ['.drydockignore', 'drydock.yaml', 'more/group.yaml', 'specs/image.yaml']);
  });

  it('gives the same revision whatever the formatting, and a new one on any change', async () => {
    const load = async (text: string): Promise<string | undefined> => {
      const r = await loadFromSource(memorySource({ 'i.yaml': text }));
      return r.ok ? r.desired.nodeImages[0]?.revision : undefined;
    };
    const a = await load(IMAGE);
    const b = await load(
      '# comment\n{apiVersion: drydock.dev/v1alpha1, kind: NodeImage, spec: {strategy: replace, image: "registry.example/node-os:v1.0.0"}, metadata: {name: worker}}',
    );
    const c = await load(IMAGE.replace('v1.0.0', 'v1.0.1'));
    assert.match(a ?? '', /^[0-9a-f]{16}$/);
    assert.equal(a, b);
    assert.notEqual(a, c);
  });

  it('throws SpecSourceError NotFound for a directory that does not exist', async () => {
    await assert.rejects(
      loadFromDirectory(path.join(ROOT, 'no-such-dir')),
      (e: unknown) => e instanceof SpecSourceError && e.code === 'NotFound',
    );
  });
});
