/**
 * Which scenario runs on the sandbox once it is up, with what it needs of the sandbox's parts,
 * and what each says when it is done. The sandbox's start-up knows nothing of any scenario
 * beyond this one call.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { SimHttpProvider } from '../cloud/sim/http-client.js';
import { SandboxError } from './errors.js';
import type { FleetGroup } from './fleet-groups.js';
import { TRACKED_BRANCH } from './fleet-repo.js';
import type { Scenario } from './layout.js';
import { runUpgradeScenario, summaryLines, type ScenarioDeps, type ScenarioSummary } from './scenario.js';
import { nodeOpSummaryLines, runNodeOpScenario, watchOperation, type NodeOpSummary } from './scenario-nodeop.js';
import { prSummaryLines, runPrScenario, type PrSummary } from './scenario-pr.js';
import type { FleetSummary } from './scenario-fleet.js';
import {
  bottlerocketSummaryLines,
  runBottlerocketScenario,
  type BottlerocketSummary,
} from './scenario-bottlerocket.js';

/** What every scenario follows and where it pushes. */
export type Following = Omit<ScenarioDeps, 'groups' | 'cloud'>;

export interface ScenarioWorld {
  readonly following: Following;
  readonly groups: readonly FleetGroup[];
  readonly kc: KubeConfig;
  readonly kubeconfig: string;
  readonly cloudUrl: string;
  /** The fleet repository was there before this run (someone may have worked in it). */
  readonly resumed: boolean;
  /** Says something above the live view. */
  print(lines: readonly string[]): void;
}

export interface ScenarioRun {
  readonly summary: ScenarioSummary | NodeOpSummary | PrSummary | BottlerocketSummary | FleetSummary;
  /** The final words on the screen. */
  readonly lines: readonly string[];
  /** The fields of the `scenario complete` log record. */
  readonly logged: Readonly<Record<string, unknown>>;
}

/** Runs the scenario to the end; rejects naming what went wrong. The fleet scenario has a world of its own. */
export async function runScenario(scenario: Exclude<Scenario, 'fleet'>, world: ScenarioWorld): Promise<ScenarioRun> {
  const workers = world.groups.filter((g) => g.role === 'worker');
  const expect = (g: FleetGroup) => ({ groupId: g.groupId, nodeImage: g.nodeImage, size: g.size });
  switch (scenario) {
    case 'nodeop': {
      const summary = await runNodeOpScenario({
        ...world.following,
        workerGroups: workers.map((g) => g.groupId),
        watch: (ledger) => watchOperation(world.kc, ledger),
      });
      return { summary, lines: nodeOpSummaryLines(summary), logged: { ...summary } };
    }
    case 'bottlerocket': {
      const group = world.groups.find((g) => g.bottlerocket !== undefined);
      if (group === undefined)
        throw new SandboxError('StepFailed', 'the sandbox has no Bottlerocket group for the scenario', {
          step: 'the rollout',
        });
      const summary = await runBottlerocketScenario({
        ...world.following,
        group: group.groupId,
        watch: (ledger) => watchOperation(world.kc, ledger),
      });
      return { summary, lines: bottlerocketSummaryLines(summary), logged: { ...summary } };
    }
    case 'pr': {
      const summary = await runPrScenario({
        ...world.following,
        groups: workers.slice(0, 1).map(expect),
        cloud: new SimHttpProvider(world.cloudUrl),
        kubeconfig: world.kubeconfig,
        cloudUrl: world.cloudUrl,
        print: (lines) => world.print(lines),
      });
      const logged = { durationMs: summary.durationMs, approvalFile: summary.approvalFile };
      return { summary, lines: prSummaryLines(summary), logged };
    }
    case 'upgrade': {
      if (world.resumed) {
        // A fleet repository someone may have worked in: say what will be pushed into it, first.
        world.print([
          `scenario upgrade: will push a new image for ${world.groups.map((g) => `NodeImage/${g.nodeImage}`).join(', ')} to ${TRACKED_BRANCH} of ${world.following.bare} (resumed, not new)`,
        ]);
      }
      const summary = await runUpgradeScenario({
        ...world.following,
        groups: world.groups.map(expect),
        cloud: new SimHttpProvider(world.cloudUrl),
      });
      const { commit, durationMs, nodesReplaced, waves } = summary;
      return { summary, lines: summaryLines(summary), logged: { commit, durationMs, nodesReplaced, waves } };
    }
  }
}
