/** What `drydock sandbox` does once its flags are parsed (loaded only when it runs). */
import path from 'node:path';
import { outcomeReport, runSandbox } from '../../sandbox/index.js';
import { guardOutput } from '../../sandbox/terminal.js';
import { EXIT_ERROR, type ExitCode } from '../exit.js';
import { parsePositiveDuration as parseDuration } from '../../duration.js';
import type { SandboxFlags } from '../flags.js';
import { scenarioStateDir } from '../../sandbox/layout.js';

export async function runSandboxCommand(flags: SandboxFlags): Promise<ExitCode> {
  // Either may be a pipe whose reader goes away (`| tee log`, then Ctrl-C): never fatal.
  const stdout = guardOutput(process.stdout);
  const stderr = guardOutput(process.stderr);
  const scenarioTimeoutMs = parseDuration(flags.timeout);
  const startTimeoutMs = parseDuration(flags.startTimeout);
  if (scenarioTimeoutMs === undefined || startTimeoutMs === undefined) {
    const bad =
      scenarioTimeoutMs === undefined
        ? `--timeout ${JSON.stringify(flags.timeout)}`
        : `--start-timeout ${JSON.stringify(flags.startTimeout)}`;
    stderr.write(`drydock sandbox: ${bad} is not a duration; use e.g. 90s, 10m or 1h\n`);
    return EXIT_ERROR;
  }
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (abort.signal.aborted) {
      // A second Ctrl-C: leave now. The watchdogs of the processes stop them within a second.
      stderr.write(`drydock sandbox: ${signal} again: exiting without waiting\n`);
      process.exit(EXIT_ERROR);
    }
    // The sandbox says so on its screen (a write of our own here would break the live view).
    abort.abort(signal);
  };
  // SIGHUP: the terminal went away; stop as cleanly as for Ctrl-C.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, onSignal);
  const state = scenarioStateDir(flags);
  try {
    const outcome = await runSandbox({
      stateDir: state.stateDir,
      reset: state.reset,
      ...(flags.scenario === undefined ? {} : { scenario: flags.scenario }),
      scenarioTimeoutMs,
      startTimeoutMs,
      out: stdout,
      // --no-live forces plain lines; otherwise a terminal gets the redrawn view.
      ...(flags.live === false ? { live: false } : {}),
      signal: abort.signal,
      ...(flags.repoFrom === undefined ? {} : { examplesDir: path.resolve(flags.repoFrom) }),
    });
    const report = outcomeReport(outcome, flags.scenario !== undefined);
    // The last words reach whoever still listens: stdout, or stderr once stdout is gone.
    const to = report.code === 0 && !stdout.gone ? stdout : stderr;
    for (const line of report.lines) to.write(`${line}\n`);
    return report.code;
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}
