/**
 * The sandbox's progress: the start-up steps and a headline it sets itself, and the cluster
 * and repository it polls, put together into one snapshot per tick for the screen and the
 * scenario.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { nodeViews, readLastFetch, readNodes, type RepoReader } from './snapshot.js';
import type { NodeView, SandboxSnapshot, StepStatus, StepView } from './view.js';

export interface StepHandle {
  /** What it does or waits for now. */
  detail(text: string): void;
  done(detail?: string): void;
  fail(detail: string): void;
}

export class Progress {
  private readonly steps: StepView[];
  headline: string;

  constructor(
    titles: readonly string[],
    headline: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.steps = titles.map((title) => ({ title, status: 'pending' satisfies StepStatus }));
    this.headline = headline;
  }

  private set(title: string, change: Partial<StepView>): void {
    const i = this.steps.findIndex((s) => s.title === title);
    const current = this.steps[i];
    if (current === undefined) return;
    // A step done without words drops the detail it showed while running (detail: undefined).
    this.steps[i] = { ...current, ...change };
  }

  start(title: string, detail?: string): StepHandle {
    this.set(title, {
      status: 'running',
      startedAt: this.now().toISOString(),
      ...(detail === undefined ? {} : { detail }),
    });
    return {
      detail: (text) => this.set(title, { detail: text }),
      done: (text) => this.set(title, { status: 'done', endedAt: this.now().toISOString(), detail: text }),
      fail: (text) => this.set(title, { status: 'failed', endedAt: this.now().toISOString(), detail: text }),
    };
  }

  view(): readonly StepView[] {
    return [...this.steps];
  }
}

/** Polls the cluster and the repository once per interval; each poll makes a snapshot. */
export class Monitor {
  private kc: KubeConfig | undefined;
  private repo: RepoReader | undefined;
  private metricsUrl: string | undefined;
  private nodes: NodeView[] = [];
  private nodesRead = false;
  private problem: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private latestSnapshot: SandboxSnapshot;
  private waiters: ((s: SandboxSnapshot) => void)[] = [];
  private polling = false;

  constructor(
    private readonly progress: Progress,
    private readonly startedAt: Date,
    private readonly onSnapshot: (s: SandboxSnapshot) => void,
    private readonly intervalMs = 1000,
  ) {
    this.latestSnapshot = this.compose(undefined, []);
  }

  watchCluster(kc: KubeConfig): void {
    this.kc = kc;
  }

  watchRepo(repo: RepoReader): void {
    this.repo = repo;
  }

  /** drydock's /metrics, for how long ago it fetched the repository. */
  watchMetrics(url: string): void {
    this.metricsUrl = url;
  }

  start(): void {
    if (this.timer !== undefined) return;
    const tick = (): void => {
      void this.poll().finally(() => {
        if (this.timer !== undefined) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // Nobody waits forever on a monitor that no longer polls.
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(this.latestSnapshot);
  }

  latest(): SandboxSnapshot {
    return this.latestSnapshot;
  }

  /** The snapshot of the next poll that starts after this call. */
  next(): Promise<SandboxSnapshot> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Redraws with the current steps and headline without polling (a step changed). */
  refresh(): void {
    this.latestSnapshot = this.compose(this.latestSnapshot.git, this.latestSnapshot.specs);
    this.onSnapshot(this.latestSnapshot);
  }

  private compose(git: SandboxSnapshot['git'], specs: SandboxSnapshot['specs']): SandboxSnapshot {
    return {
      now: new Date().toISOString(),
      startedAt: this.startedAt.toISOString(),
      headline: this.progress.headline,
      steps: this.progress.view(),
      specs,
      nodes: this.nodes,
      nodesRead: this.nodesRead,
      ...(git === undefined ? {} : { git }),
      ...(this.problem === undefined ? {} : { problem: this.problem }),
    };
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const waiters = this.waiters;
    this.waiters = [];
    try {
      if (this.kc !== undefined) {
        try {
          this.nodes = nodeViews(await readNodes(this.kc));
          this.nodesRead = true;
          this.problem = undefined;
        } catch (err) {
          this.problem = `cannot list nodes: ${err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)}`;
        }
      }
      let git = this.latestSnapshot.git;
      let specs = this.latestSnapshot.specs;
      if (this.repo !== undefined) {
        const read = this.repo.read();
        const lastFetch = this.metricsUrl === undefined ? undefined : await readLastFetch(this.metricsUrl);
        git = lastFetch === undefined ? read.git : { ...read.git, lastFetchSeconds: lastFetch };
        specs = read.specs;
      }
      this.latestSnapshot = this.compose(git, specs);
      this.onSnapshot(this.latestSnapshot);
    } finally {
      this.polling = false;
      for (const w of waiters) w(this.latestSnapshot);
    }
  }
}
