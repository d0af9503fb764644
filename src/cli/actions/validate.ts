/** What `drydock validate` does once its arguments are parsed (loaded only when it runs). */
import { stat } from 'node:fs/promises';
import { plural } from '../../words.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import {
  errorsToJson,
  formatErrorsGithub,
  formatErrorsText,
  directorySource,
  loadFromDirectory,
  SpecSourceError,
  type DesiredState,
  type ErrorFormat,
  type SpecError,
} from '../../spec/index.js';
import { specWarnings } from '../../report/spec-warnings.js';
import { loadFleetViews, mergeFindings, type FleetViews } from '../../spec/fleet-load.js';

function specCount(d: DesiredState): number {
  return (
    d.scalingGroups.length +
    d.nodeImages.length +
    d.autoscalingStrategies.length +
    d.nodeMaintenances.length +
    d.nodeOps.filter((o) => o.generatedBy === undefined).length +
    d.nodeOpUpgrades.length +
    d.upgradeGates.length +
    d.maintenanceWindows.length +
    d.approvals.length +
    d.mutexTargets.length +
    d.mutexRunConfigs.length
  );
}

type Views = Exclude<FleetViews, { kind: 'single' }>;

/** Findings as the format prints them; warnings first. */
function printFindings(
  format: ErrorFormat,
  dir: string,
  errors: readonly SpecError[],
  warned: readonly SpecError[],
  out: (s: string) => void,
): void {
  const opts = { root: dir };
  const w = { ...opts, severity: 'warning' } as const;
  if (warned.length > 0) out(`${format === 'github' ? formatErrorsGithub(warned, w) : formatErrorsText(warned, w)}\n`);
  if (errors.length > 0)
    out(`${format === 'github' ? formatErrorsGithub(errors, opts) : formatErrorsText(errors, opts)}\n`);
}

/** A fleet repository: the fleet file, then every cluster's view (or the one --cluster names). */
function reportFleet(dir: string, views: Views, format: ErrorFormat, out: (s: string) => void): ExitCode {
  const loads = views.kind === 'fleet' ? views.views : [];
  const errors =
    views.kind === 'invalid-fleet'
      ? mergeFindings([{ cluster: 'all', errors: views.errors }]).map((e) => ({
          ...e,
          message: e.message.replace(/^cluster all: /, ''),
        }))
      : mergeFindings(loads.map((v) => ({ cluster: v.cluster, errors: v.result.ok ? [] : v.result.errors })));
  const warned = mergeFindings(
    loads.map((v) => ({
      cluster: v.cluster,
      errors: specWarnings(v.result),
    })),
  );
  const specs = loads.map(
    (v) => `${v.cluster}: ${v.result.ok ? plural(specCount(v.result.desired), 'spec') : 'invalid'}`,
  );
  const opts = { root: dir };
  if (format === 'json') {
    const files = [...new Set(loads.flatMap((v) => v.result.files))].sort();
    const body = {
      valid: errors.length === 0,
      clusters: loads.map((v) => v.cluster),
      files,
      errors: errorsToJson(errors, opts),
      warnings: errorsToJson(warned, opts),
    };
    out(`${JSON.stringify(body, null, 2)}\n`);
    return errors.length === 0 ? EXIT_OK : EXIT_FINDINGS;
  }
  printFindings(format, dir, errors, warned, out);
  if (errors.length > 0) {
    const files = new Set(errors.map((e) => e.file)).size;
    const total = errors.reduce((sum, e) => sum + (e.notShown ?? 1), 0);
    const where = views.kind === 'invalid-fleet' ? 'fleet/fleet.yaml' : specs.join('; ');
    out(
      `${dir}: ${plural(total, 'error')} in ${plural(files, 'file')} (${where}); nothing is applied until all are fixed\n`,
    );
    return EXIT_FINDINGS;
  }
  out(
    `${dir}: valid: ${plural(loads.length, 'cluster')} (${specs.join('; ')})${warned.length > 0 ? `; ${plural(warned.length, 'warning')} above` : ''}\n`,
  );
  return EXIT_OK;
}

export async function runValidate(
  dir: string,
  format: ErrorFormat,
  out: (s: string) => void,
  err: (s: string) => void,
  cluster?: string,
): Promise<ExitCode> {
  try {
    const st = await stat(dir);
    if (!st.isDirectory()) {
      err(`drydock validate: ${dir} is not a directory\n`);
      return EXIT_ERROR;
    }
  } catch {
    err(`drydock validate: directory ${dir} does not exist\n`);
    return EXIT_ERROR;
  }
  let result;
  try {
    const views = await loadFleetViews(directorySource(dir), cluster);
    if (views.kind === 'unknown-cluster') {
      err(
        `drydock validate: ${cluster} is not a cluster of fleet/fleet.yaml (clusters: ${views.fleet.clusters.map((c) => c.name).join(', ')})\n`,
      );
      return EXIT_ERROR;
    }
    if (views.kind !== 'single') return reportFleet(dir, views, format, out);
    if (cluster !== undefined) {
      err(
        `drydock validate: --cluster ${cluster}: ${dir} has no fleet/fleet.yaml, so it serves one cluster; leave --cluster out\n`,
      );
      return EXIT_ERROR;
    }
    result = await loadFromDirectory(dir);
  } catch (e) {
    if (e instanceof SpecSourceError) {
      err(`drydock validate: ${e.message}\n`);
      return EXIT_ERROR;
    }
    throw e;
  }
  const opts = { root: dir };
  const warned = specWarnings(result);
  if (format === 'json') {
    const body = result.ok
      ? {
          valid: true,
          files: result.files,
          specs: specCount(result.desired),
          errors: [],
          warnings: errorsToJson(warned, opts),
        }
      : {
          valid: false,
          files: result.files,
          errors: errorsToJson(result.errors, opts),
          warnings: errorsToJson(warned, opts),
        };
    out(`${JSON.stringify(body, null, 2)}\n`);
    return result.ok ? EXIT_OK : EXIT_FINDINGS;
  }
  const w = { ...opts, severity: 'warning' } as const;
  if (warned.length > 0) out(`${format === 'github' ? formatErrorsGithub(warned, w) : formatErrorsText(warned, w)}\n`);
  if (!result.ok) {
    out(`${format === 'github' ? formatErrorsGithub(result.errors, opts) : formatErrorsText(result.errors, opts)}\n`);
    const files = new Set(result.errors.map((e) => e.file)).size;
    // A capped report stands for more findings than it prints: count what each cut left out.
    const total = result.errors.reduce((sum, e) => sum + (e.notShown ?? 1), 0);
    out(`${dir}: ${plural(total, 'error')} in ${plural(files, 'file')}; nothing is applied until all are fixed\n`);
    return EXIT_FINDINGS;
  }
  const notSupported = warned.filter((n) => n.code === 'not-supported').length;
  const notActed =
    notSupported === 0 ? '' : `; ${plural(notSupported, 'spec')} not acted on by this build (warnings above)`;
  const otherWarnings = warned.length - notSupported;
  const loadWarned = otherWarnings === 0 ? '' : `; ${plural(otherWarnings, 'warning')} above`;
  out(
    `${dir}: valid: ${plural(specCount(result.desired), 'spec')} in ${plural(result.files.length, 'file')} (cluster ${result.desired.config.cluster})${notActed}${loadWarned}\n`,
  );
  return EXIT_OK;
}
