// Errors that say which start-up step failed, which log to read and what to do.
import { readFileSync } from 'node:fs';
import { CodedError } from '../../errors.js';

/** Last `lines` lines of a log file ('' if unreadable). */
export function tailFile(file: string, lines = 20): string {
  try {
    const text = readFileSync(file, 'utf8').trimEnd();
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

export class ControlPlaneError extends CodedError<
  'control-plane',
  { readonly step: string; readonly logFile?: string }
> {
  override readonly name = 'ControlPlaneError';

  constructor(step: string, problem: string, opts: { logFile?: string; hint?: string } = {}) {
    const parts = [`control plane: ${step}: ${problem}`];
    if (opts.logFile) {
      parts.push(`log: ${opts.logFile}`);
      const tail = tailFile(opts.logFile);
      if (tail) parts.push(`last lines of the log:\n${tail.replace(/^/gm, '  | ')}`);
    }
    if (opts.hint) parts.push(`what to do: ${opts.hint}`);
    super('control-plane', parts.join('\n'), {
      step,
      ...(opts.logFile !== undefined ? { logFile: opts.logFile } : {}),
    });
  }

  /** the component or step that failed: 'binaries', 'certificates', 'etcd', 'kube-apiserver', ... */
  get step(): string {
    return this.data.step;
  }

  /** the log file to read, when there is one */
  get logFile(): string | undefined {
    return this.data.logFile;
  }
}
