/** What `drydock sandbox` does once its flags are parsed (loaded only when it runs). */
import path from 'node:path';
import { outcomeReport, runSandbox } from '../../sandbox/index.js';
import { EXIT_ERROR, type ExitCode } from '../exit.js';
import { parsePositiveDuration as parseDuration } from '../../duration.js';
import type { SandboxFlags } from '../flags.js';

export async function runSandboxCommand(flags: SandboxFlags): Promise<ExitCode> {
  const scenarioTimeoutMs = parseDuration(flags.timeout);
  const startTimeoutMs = parseDuration(flags.startTimeout);
  if (scenarioTimeoutMs === undefined || startTimeoutMs === undefined) {
    const bad = scenarioTimeoutMs === undefined ? `--timeout ${JSON.stringify(flags.timeout)}` : `--start-timeout ${JSON.stringify(flags.startTimeout)}`;
    process.stderr.write(`drydock sandbox: ${bad} is not a duration; use e.g. 90s, 10m or 1h\n`);
    return EXIT_ERROR;
  }
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (abort.signal.aborted) {
      // A second Ctrl-C: leave now. The watchdogs of the processes stop them within a second.
      process.stderr.write(`drydock sandbox: ${signal} again: exiting without waiting\n`);
      process.exit(EXIT_ERROR);
    }
    process.stderr.write(`\ndrydock sandbox: ${signal}: stopping every process it started (Ctrl-C again to exit at once)…\n`);
    abort.abort();
  };
  // SIGHUP: the terminal went away; stop as cleanly as for Ctrl-C.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, onSignal);
  try {
    const outcome = await runSandbox({
      stateDir: flags.stateDir,
      reset: flags.reset,
      ...(flags.scenario === undefined ? {} : { scenario: flags.scenario }),
      scenarioTimeoutMs,
      startTimeoutMs,
      out: process.stdout,
      // --no-live forces plain lines; otherwise a terminal gets the redrawn view.
      ...(flags.live === false ? { live: false } : {}),
      signal: abort.signal,
      ...(flags.repoFrom === undefined ? {} : { examplesDir: path.resolve(flags.repoFrom) }),
    });
    const report = outcomeReport(outcome, flags.scenario !== undefined);
    for (const line of report.lines) (report.code === 0 ? process.stdout : process.stderr).write(`${line}\n`);
    return report.code;
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}
