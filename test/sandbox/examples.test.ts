/**
 * examples-repo is what `drydock sandbox` serves: every name in it must exist there, and every
 * spec must either be acted on or be reported as not acted on (NotSupported), never ignored.
 * The running sandbox's status branch is checked for the same in scenario.test.ts.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNode } from '../../src/cloud/sim/nodes.js';
import { instanceId } from '../../src/cloud/sim/records.js';
import { observed } from '../plan/fixtures.js';
import { matchesSelector } from '../../src/observe/selector.js';
import { notActedOn, plan } from '../../src/plan/index.js';
import { fleetGroups } from '../../src/sandbox/fleet-groups.js';
import { AUTOSCALER } from '../../src/sandbox/workloads.js';
import { loadFromDirectory, type DesiredState, type LabelSelector } from '../../src/spec/index.js';

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples-repo');

function files(dir: string, base = dir): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) for (const [k, v] of files(full, base)) out.set(k, v);
    else out.set(path.relative(base, full), readFileSync(full, 'utf8'));
  }
  return out;
}

/** The Nodes a fresh sandbox has: one per instance of each sim group, labelled as the sim cloud labels them. */
function sandboxNodes(): { name: string; labels: Record<string, string> }[] {
  return fleetGroups(files(examples)).flatMap((g) =>
    Array.from({ length: g.size }, (_, i) => {
      const node = buildNode({
        groupId: g.groupId,
        instanceId: instanceId(i + 1),
        role: g.role,
        image: g.image,
        labels: {},
        resources: { cpu: '4', memory: '16Gi', pods: '110' },
      });
      return { name: node.metadata?.name ?? '', labels: node.metadata?.labels ?? {} };
    }),
  );
}

describe('examples-repo against the sandbox', () => {
  let desired: DesiredState;
  const nodes = sandboxNodes();
  before(async () => {
    const loaded = await loadFromDirectory(examples);
    assert.ok(loaded.ok, 'examples-repo is valid');
    desired = loaded.desired;
  });

  const selects = (selector: LabelSelector | undefined): string[] =>
    nodes.filter((n) => matchesSelector(selector, n.labels)).map((n) => n.name);

  it('every node, label selector and deployment it names exists in the sandbox', () => {
    for (const m of desired.nodeMaintenances)
      assert.ok(
        nodes.some((n) => n.name === m.nodeName),
        `NodeMaintenance/${m.name}: no sandbox node ${m.nodeName}`,
      );
    for (const op of desired.nodeOps)
      assert.ok(selects(op.nodeSelector).length > 0, `NodeOp/${op.name} selects no sandbox node`);
    for (const up of desired.nodeOpUpgrades)
      assert.ok(selects(up.nodeSelector).length > 0, `NodeOpUpgrade/${up.name} selects no sandbox node`);
    for (const gate of desired.upgradeGates)
      assert.ok(selects(gate.appliesTo.nodeSelector).length > 0, `UpgradeGate/${gate.name} selects no sandbox node`);
    for (const a of desired.autoscalingStrategies) {
      assert.deepEqual(
        [a.deploymentNamespace, a.deploymentName],
        [AUTOSCALER.namespace, AUTOSCALER.name],
        `AutoscalingStrategy/${a.name}`,
      );
    }
  });

  it('nothing in force acts on the nodes before a person asks: the NodeOpUpgrade is a template, the NodeOp waits for its window', () => {
    assert.deepEqual(desired.nodeOpUpgrades, []);
    for (const op of desired.nodeOps) assert.notEqual(op.rollout.window, undefined, `NodeOp/${op.name} has no window`);
  });

  it('the NodeOpUpgrade template, copied into operations/, selects sandbox workers and is acted on', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drydock-examples-'));
    try {
      cpSync(examples, dir, { recursive: true });
      copyFileSync(path.join(dir, 'templates/edge-upgrade.yaml'), path.join(dir, 'operations/edge-upgrade.yaml'));
      const loaded = await loadFromDirectory(dir);
      assert.ok(loaded.ok, 'examples-repo with the NodeOpUpgrade copied in is valid');
      const [up] = loaded.desired.nodeOpUpgrades;
      assert.equal(up?.name, 'edge-os');
      assert.ok(selects(up.nodeSelector).length > 0, 'NodeOpUpgrade/edge-os selects no sandbox node');
      assert.deepEqual(
        notActedOn(loaded.desired).filter((n) => n.kind === 'NodeOpUpgrade'),
        [],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the NodeMaintenance template, copied into maintenance/, names a sandbox node and is acted on', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drydock-examples-'));
    try {
      cpSync(examples, dir, { recursive: true });
      copyFileSync(
        path.join(dir, 'templates/workers-i-0003-disk.yaml'),
        path.join(dir, 'maintenance/workers-i-0003-disk.yaml'),
      );
      const loaded = await loadFromDirectory(dir);
      assert.ok(loaded.ok, 'examples-repo with the maintenance copied in is valid');
      const [m] = loaded.desired.nodeMaintenances;
      assert.equal(m?.name, 'workers-i-0003-disk');
      assert.ok(
        nodes.some((n) => n.name === m.nodeName),
        `NodeMaintenance/${m.name}: no sandbox node ${m.nodeName}`,
      );
      assert.deepEqual(
        notActedOn(loaded.desired).filter((n) => n.kind === 'NodeMaintenance'),
        [],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every spec is acted on, or reported NotSupported with what that leaves undone', () => {
    const result = plan(desired, observed({}), new Date('2026-01-05T12:00:00Z'));
    const rows = new Map(result.specs.map((s) => [`${s.spec.kind}/${s.spec.name}`, s]));
    const names = (list: readonly { name: string }[], kind: string): string[] => list.map((s) => `${kind}/${s.name}`);
    const unsupported = new Set(notActedOn(desired).map((n) => `${n.kind}/${n.name}`));
    assert.deepEqual([...unsupported].sort(), []);
    // Specs with a row of their own: acted on (a phase of a rollout), or NotSupported with a reason.
    const own = [
      ...names(desired.nodeImages, 'NodeImage'),
      ...names(desired.autoscalingStrategies, 'AutoscalingStrategy'),
      ...names(desired.nodeMaintenances, 'NodeMaintenance'),
      ...names(
        desired.nodeOps.filter((o) => o.generatedBy === undefined),
        'NodeOp',
      ),
      ...names(desired.nodeOpUpgrades, 'NodeOpUpgrade'),
    ];
    for (const key of own) {
      const row = rows.get(key);
      assert.ok(row !== undefined, `${key} has no status row`);
      if (unsupported.has(key)) {
        assert.equal(row.phase, 'NotSupported', key);
        assert.match(row.conditions[0]?.message ?? '', / is not acted on by this build: \S/, key);
      } else assert.notEqual(row.phase, 'NotSupported', key);
    }
    // The rest are acted on through the specs that name them, which have rows.
    for (const g of desired.upgradeGates)
      for (const t of g.appliesTo.targets)
        if (t.name !== undefined)
          assert.ok(rows.has(`${t.kind}/${t.name}`), `UpgradeGate/${g.name} gates ${t.kind}/${t.name}`);
    for (const sg of desired.scalingGroups)
      assert.equal(rows.get(`NodeImage/${sg.nodeImage}`)?.phase !== undefined, true, `ScalingGroup/${sg.name}`);
    for (const a of desired.approvals)
      assert.ok(
        rows.has(`${a.target.kind}/${a.target.name}`),
        `Approval/${a.name} targets ${a.target.kind}/${a.target.name}`,
      );
    for (const w of desired.maintenanceWindows) {
      const users =
        desired.nodeOps.filter((o) => o.rollout.window === w.name).length +
        desired.nodeImages.filter((i) => i.rollout.window === w.name).length;
      assert.ok(users > 0, `MaintenanceWindow/${w.name} is named by no spec`);
    }
  });
});
