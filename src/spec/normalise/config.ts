/** drydock.yaml → RepoConfig; built-in defaults when the file is absent. */
import path from 'node:path';
import type { RepoConfigDocument } from '../generated/repo-config.schema.js';
import type { BudgetWindowSpec } from '../generated/repo-config.schema.js';
import type { BudgetWindow, RepoConfig } from '../model.js';
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
    source: ctx.doc.start,
  };
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
