/**
 * The service's Prometheus metrics, in a registry of its own (so two services in one process,
 * as in tests, never collide).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Plan } from '../plan/types.js';
import type { ObservedState } from '../observe/types.js';
import { ANNOTATIONS, NODE_PHASES } from '../protocol/keys.js';

export interface ServiceMetrics {
  readonly registry: Registry;
  readonly reconcileDuration: Histogram<'result'>;
  readonly nodesByPhase: Gauge<'phase'>;
  readonly specProgress: Gauge<'kind' | 'name'>;
  readonly errors: Counter<'kind' | 'code'>;
  readonly gitSyncAge: Gauge;
  readonly apiRequests: Counter<'client' | 'verb'>;
  readonly actions: Counter<'action' | 'outcome'>;
  readonly leader: Gauge;
  /** Notification messages by receiver and outcome (sent, retried, failed, dropped). */
  readonly notifications: Counter<'receiver' | 'outcome'>;
  /** Sets the gauges that describe a reconcile's result. */
  observePlan(plan: Plan, observed: ObservedState): void;
  /** Records when the last Git sync succeeded (the gauge reports its age on scrape). */
  markGitSync(at: number): void;
}

/** Every phase, and None for nodes no operation holds. */
const PHASE_LABELS = [...NODE_PHASES, 'None'] as const;

export function createMetrics(opts: { defaultMetrics?: boolean; now?: () => number } = {}): ServiceMetrics {
  const registry = new Registry();
  const now = opts.now ?? Date.now;
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'drydock_process_' });
  let lastSync: number | undefined;
  const reconcileDuration = new Histogram({
    name: 'drydock_reconcile_duration_seconds',
    help: 'Duration of one observe-plan-execute-report round.',
    labelNames: ['result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const nodesByPhase = new Gauge({
    name: 'drydock_nodes',
    help: 'Nodes by drydock phase (None: no operation on the node).',
    labelNames: ['phase'] as const,
    registers: [registry],
  });
  const specProgress = new Gauge({
    name: 'drydock_spec_progress_ratio',
    help: "Fraction of a spec's nodes done (1 when complete).",
    labelNames: ['kind', 'name'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'drydock_errors_total',
    help: 'Errors by kind (stalled, waiting, transient, watch, git, status) and code.',
    labelNames: ['kind', 'code'] as const,
    registers: [registry],
  });
  const gitSyncAge = new Gauge({
    name: 'drydock_git_last_sync_age_seconds',
    help: 'Seconds since the Git source was last fetched successfully (-1 before the first sync).',
    registers: [registry],
    collect() {
      this.set(lastSync === undefined ? -1 : (now() - lastSync) / 1000);
    },
  });
  const apiRequests = new Counter({
    name: 'drydock_kube_api_requests_total',
    help: 'Requests made to the Kubernetes API server, by client (cluster, lease) and verb.',
    labelNames: ['client', 'verb'] as const,
    registers: [registry],
  });
  const actions = new Counter({
    name: 'drydock_actions_total',
    help: 'Actions executed, by action kind and outcome.',
    labelNames: ['action', 'outcome'] as const,
    registers: [registry],
  });
  const leader = new Gauge({ name: 'drydock_leader', help: '1 while this replica leads.', registers: [registry] });
  const notifications = new Counter({
    name: 'drydock_notifications_total',
    help: 'Notification messages by receiver and outcome: sent, retried (an attempt failed), failed (given up), dropped (queue full).',
    labelNames: ['receiver', 'outcome'] as const,
    registers: [registry],
  });

  return {
    registry,
    reconcileDuration,
    nodesByPhase,
    specProgress,
    errors,
    gitSyncAge,
    apiRequests,
    actions,
    leader,
    notifications,
    observePlan(plan, observed) {
      const counts = new Map<string, number>(PHASE_LABELS.map((p) => [p, 0]));
      for (const n of observed.nodes) {
        const phase = n.annotations[ANNOTATIONS.phase];
        const key = phase && counts.has(phase) ? phase : 'None';
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const [phase, n] of counts) nodesByPhase.set({ phase }, n);
      specProgress.reset();
      for (const s of plan.specs) {
        const ratio = s.progress.total === 0 ? 1 : s.progress.done / s.progress.total;
        specProgress.set({ kind: s.spec.kind, name: s.spec.name }, ratio);
      }
    },
    markGitSync(at) {
      lastSync = at;
    },
  };
}
