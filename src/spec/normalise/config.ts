/** drydock.yaml → RepoConfig; built-in defaults when the file is absent. */
import path from 'node:path';
import type { BudgetWindowSpec, RepoConfigDocument } from '../generated/repo-config.schema.js';
import type { BudgetWindow, NotificationsConfig, NotifyReceiver, RepoConfig, SecretRef } from '../model.js';
import type { NormaliseContext } from './context.js';
import { raw } from './meta.js';
import { BUILTIN_ROLLOUT, mergeRollout } from './rollout.js';
import { timeZoneProblem } from './time-zone.js';
import { checkCron, durationSeconds, intOrPercent } from './values.js';

export const DEFAULT_CONFIG: RepoConfig = {
  cluster: 'default',
  budget: { maxUnavailable: 1 },
  defaults: { rollout: BUILTIN_ROLLOUT },
  paths: ['.'],
  statusBranch: 'drydock/status',
};

/** A repo-relative directory in canonical form ('' for the root), or undefined when it leaves the repo. */
export function canonicalPath(p: string): string | undefined {
  if (p.startsWith('/') || p.includes('\\') || p.includes('\0')) return undefined;
  const n = path.posix.normalize(p).replace(/\/+$/, '');
  if (n === '..' || n.startsWith('../')) return undefined;
  return n === '.' ? '' : n;
}

export function repoConfig(ctx: NormaliseContext): RepoConfig {
  const doc = raw<RepoConfigDocument>(ctx.doc);
  const budget =
    doc.budget?.maxUnavailable !== undefined
      ? intOrPercent(ctx, ['budget', 'maxUnavailable'], doc.budget.maxUnavailable)
      : undefined;
  const paths: string[] = [];
  (doc.paths ?? DEFAULT_CONFIG.paths).forEach((p, i) => {
    const c = canonicalPath(p);
    if (c === undefined) {
      ctx.report(
        'config',
        ['paths', i],
        `path ${JSON.stringify(p)} is not inside the repository`,
        'write a repository-relative directory such as clusters or images/prod, without leading "/" or ".."',
      );
    } else if (!paths.includes(c === '' ? '.' : c)) {
      paths.push(c === '' ? '.' : c);
    }
  });
  const windows = budgetWindows(ctx, doc.budget?.windows);
  return {
    cluster: doc.cluster ?? DEFAULT_CONFIG.cluster,
    budget: {
      maxUnavailable: budget ?? DEFAULT_CONFIG.budget.maxUnavailable,
      ...(windows !== undefined ? { windows } : {}),
    },
    ...(doc.paused === true ? { paused: {} } : {}),
    defaults: { rollout: mergeRollout(ctx, ['defaults', 'rollout'], BUILTIN_ROLLOUT, doc.defaults?.rollout) },
    paths,
    statusBranch: doc.statusBranch ?? DEFAULT_CONFIG.statusBranch,
    ...(doc.notifications ? { notifications: notifications(ctx, doc.notifications) } : {}),
    source: ctx.doc.start,
  };
}

/** The schema checked the shapes; what it cannot say: unique names, and the signing key only where it signs. */
function notifications(
  ctx: NormaliseContext,
  doc: NonNullable<RepoConfigDocument['notifications']>,
): NotificationsConfig {
  const names = new Set<string>();
  const receivers = doc.receivers.map((r, i): NotifyReceiver => {
    if (names.has(r.name)) {
      ctx.report(
        'config',
        ['notifications', 'receivers', i, 'name'],
        `receiver ${r.name} is named twice`,
        'give each receiver its own name',
      );
    }
    names.add(r.name);
    if (r.type === 'webhook' && r.secretFrom === undefined) {
      ctx.report(
        'config',
        ['notifications', 'receivers', i],
        `webhook receiver ${r.name} has no secretFrom: its messages could not be signed`,
        'add secretFrom: {file: <name>} or {env: DRYDOCK_NOTIFY_...} with the key the receiver verifies with',
      );
    }
    if (r.type !== 'webhook' && r.secretFrom !== undefined) {
      ctx.report(
        'config',
        ['notifications', 'receivers', i, 'secretFrom'],
        `${r.type} receiver ${r.name} does not sign its messages: secretFrom is for type webhook only`,
        'remove secretFrom; the token in the address read from urlFrom is what Slack and Teams check',
      );
    }
    return {
      name: r.name,
      type: r.type,
      urlFrom: r.urlFrom as SecretRef,
      ...(r.secretFrom ? { secretFrom: r.secretFrom as SecretRef } : {}),
      events: r.events,
    };
  });
  return { ...(doc.commitUrl !== undefined ? { commitUrl: doc.commitUrl } : {}), receivers };
}

/** budget.windows: each checked at its own line (its cron in its zone, a duration above 0). */
function budgetWindows(
  ctx: NormaliseContext,
  raw: readonly BudgetWindowSpec[] | undefined,
): BudgetWindow[] | undefined {
  if (raw === undefined || raw.length === 0) return undefined;
  return raw.map((w, i) => {
    const at = (field: string) => ['budget', 'windows', i, field];
    const timeZone = w.timeZone ?? 'UTC';
    const tz = timeZoneProblem(timeZone);
    if (tz !== undefined) ctx.report('invalid-value', at('timeZone'), tz.message, tz.hint);
    else checkCron(ctx, at('schedule'), w.schedule, timeZone);
    const seconds = durationSeconds(ctx, at('duration'), w.duration);
    if (seconds === 0)
      ctx.report(
        'invalid-value',
        at('duration'),
        'a budget window of 0s is never active',
        'give it a duration, e.g. 8h',
      );
    const maxUnavailable = intOrPercent(ctx, at('maxUnavailable'), w.maxUnavailable);
    return {
      maxUnavailable: maxUnavailable ?? 0,
      cron: w.schedule.trim().split(/\s+/).join(' '),
      durationSeconds: seconds ?? 0,
      timeZone,
      ...(w.kinds !== undefined ? { kinds: [...new Set(w.kinds)] } : {}),
    };
  });
}
