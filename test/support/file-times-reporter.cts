/**
 * mocha's spec reporter, and at the end of the run each test file's time, slowest first: where a
 * run's minutes went. A file's time runs from its first top-level suite's start to its last one's
 * end, so the control plane or sandbox its hooks start counts against it.
 */
import path from 'node:path';
import Mocha from 'mocha';

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;

class FileTimes extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const began = new Map<string, number>();
    const spent = new Map<string, number>();
    const fileOf = (suite: Mocha.Suite): string | undefined =>
      suite.parent?.root === true && suite.file ? path.relative(process.cwd(), suite.file) : undefined;
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      const file = fileOf(suite);
      if (file) began.set(file, performance.now());
    });
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const file = fileOf(suite);
      const start = file ? began.get(file) : undefined;
      if (file && start !== undefined) spent.set(file, (spent.get(file) ?? 0) + performance.now() - start);
    });
    runner.once(EVENT_RUN_END, () => {
      const rows = [...spent].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
      const shown = rows.filter(([, ms]) => ms >= 100);
      const lines = shown.map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(8)} s  ${file}`);
      const rest = rows.length - shown.length;
      if (rest > 0) lines.push(`  ${rest} more file(s) under 0.1 s`);
      process.stdout.write(
        `\n  time per test file, slowest first (${(total / 60_000).toFixed(1)} min in all):\n${lines.join('\n')}\n\n`,
      );
    });
  }
}

export default FileTimes;
