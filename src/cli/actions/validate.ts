/** What `drydock validate` does once its arguments are parsed (loaded only when it runs). */
import { stat } from 'node:fs/promises';
import { plural } from '../../words.js';
import { EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, type ExitCode } from '../exit.js';
import {
  errorsToJson,
  formatErrorsGithub,
  formatErrorsText,
  loadFromDirectory,
  SpecSourceError,
  type DesiredState,
  type ErrorFormat,
} from '../../spec/index.js';
import { specWarnings } from '../../report/spec-warnings.js';

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

export async function runValidate(
  dir: string,
  format: ErrorFormat,
  out: (s: string) => void,
  err: (s: string) => void,
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
