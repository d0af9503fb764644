// Errors that say which start-up step failed, which log to read and what to do.
import { readFileSync } from 'node:fs';

/** Last `lines` lines of a log file ('' if unreadable). */
export function tailFile(file: string, lines = 20): string {
  try {
    const text = readFileSync(file, 'utf8').trimEnd();
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

export class ControlPlaneError extends Error {
  override readonly name = 'ControlPlaneError';
  /** the component or step that failed: 'binaries', 'certificates', 'etcd', 'kube-apiserver', ... */
  readonly step: string;
  /** the log file to read, when there is one */
  readonly logFile: string | undefined;

  constructor(step: string, problem: string, opts: { logFile?: string; hint?: string } = {}) {
    const parts = [`control plane: ${step}: ${problem}`];
    if (opts.logFile) {
      parts.push(`log: ${opts.logFile}`);
      const tail = tailFile(opts.logFile);
      if (tail) parts.push(`last lines of the log:\n${tail.replace(/^/gm, '  | ')}`);
    }
    if (opts.hint) parts.push(`what to do: ${opts.hint}`);
    super(parts.join('\n'));
    this.step = step;
    this.logFile = opts.logFile;
  }
}
