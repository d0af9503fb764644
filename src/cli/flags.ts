/**
 * The flags each command hands its implementation (cli/actions/): declared here, apart from
 * both, so a command's definition and its implementation do not import each other.
 */
import type { LevelWithSilent } from 'pino';
import type { PlanFormat } from '../report/plan-render.js';
import type { Scenario } from '../sandbox/layout.js';

/** Where the specs are and which cluster and cloud they are for: run and plan both take these. */
interface RepoAndClusterFlags {
  repo: string;
  branch: string;
  path: string;
  kubeconfig?: string;
  provider: string;
  cloudEndpoint?: string;
}

export interface RunFlags extends RepoAndClusterFlags {
  simCloudUrl?: string;
  interval: string;
  pollInterval?: string;
  pollSchedule?: string;
  cacheDir?: string;
  statusBranch: string;
  listen: string;
  leaderElect: string | boolean;
  namespace: string;
  cluster: string;
  /** The reboot pod's image (NodeOp, inPlace NodeImage). */
  rebootImage: string;
  /** The Bottlerocket update Job's and API reboot pod's image. */
  bottlerocketImage: string;
  logLevel: LevelWithSilent;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  resync: string;
  webhookSecret?: string;
  gitUsername?: string;
  gitPassword?: string;
  gitToken?: string;
  gitTokenFile?: string;
  gitPasswordFile?: string;
  webhookSecretFile?: string;
  verifyCommits?: boolean;
  keyring?: string;
  /** Where drydock.yaml's notification receivers' urlFrom and secretFrom files are. */
  notifySecretsDir: string;
}

export interface PlanFlags extends RepoAndClusterFlags {
  /** A plan format, or github: workflow annotations then the text (with --base/--head). */
  format: PlanFormat | 'github';
  /** The namespace drydock run uses: its node Jobs and reboot pods are planned there. */
  namespace: string;
  /** A pull request's base and head refs: plan the head and compare it with the base. */
  base?: string;
  head?: string;
  cluster: string;
  gitUsername?: string;
  gitPassword?: string;
  gitToken?: string;
}

export interface SandboxFlags {
  stateDir: string;
  /** Whether --state-dir (or its variable) was given, rather than left at its default. */
  stateDirGiven?: boolean;
  reset: boolean;
  scenario?: Scenario;
  timeout: string;
  startTimeout: string;
  live?: boolean;
  repoFrom?: string;
}

export interface SimCloudFlags {
  stateDir: string;
  config: string;
  kubeconfig?: string;
  cluster: boolean;
  port: string;
  host: string;
  logLevel: LevelWithSilent;
}

export interface StatusCommandOptions {
  readonly repo: string;
  readonly statusBranch: string;
  readonly format: 'text' | 'json';
  readonly gitTokenFile?: string;
  readonly cacheDir?: string;
  /** Follow the branch: print each new status commit as it lands. */
  readonly watch?: boolean;
  readonly interval?: string;
  /** A fleet repository: this cluster's status branch by convention. */
  readonly cluster?: string;
  /** A fleet repository: every cluster's status, read from fleet/fleet.yaml on --branch. */
  readonly fleet?: boolean;
  readonly branch?: string;
  readonly path?: string;
}

export interface ApproveFlags {
  readonly dir: string;
  readonly path: string;
  readonly stage?: 'start' | 'afterCanary' | 'resume';
  readonly statusRepo?: string;
  readonly statusBranch: string;
}
