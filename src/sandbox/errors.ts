/**
 * The sandbox's one error class. Callers decide by `code`, never by message text; `data` names
 * the step, what was awaited and which log to read, so the message a person sees can say
 * where to look next.
 *
 * - StepFailed: a start-up step failed (a process would not start, a command failed).
 * - ProcessExited: a process the sandbox started exited while it was still needed.
 * - Timeout: a wait ran out; `waitingFor` says what for.
 * - StateLocked: another sandbox is running on the same state directory.
 * - MissingPiece: a part the sandbox needs is not installed or not built.
 * - CheckFailed: the scenario's final checks found the cluster in the wrong state.
 * - Interrupted: stopped by SIGINT/SIGTERM.
 * - Usage: bad flags or arguments.
 */
import { CodedError } from '../errors.js';
export type SandboxErrorCode =
  'StepFailed' | 'ProcessExited' | 'Timeout' | 'StateLocked' | 'MissingPiece' | 'CheckFailed' | 'Interrupted' | 'Usage';

export interface SandboxErrorData {
  /** The start-up step or scenario stage, e.g. "start the sim cloud". */
  readonly step?: string;
  /** The log file to read for details. */
  readonly log?: string;
  /** Timeout: what the wait was for, in words. */
  readonly waitingFor?: string;
  readonly timeoutSeconds?: number;
  /** ProcessExited: which process and how. */
  readonly process?: string;
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  /** StateLocked: the pid holding the state directory. */
  readonly pid?: number;
  readonly stateDir?: string;
  /** CheckFailed: every failed check, in words. */
  readonly problems?: readonly string[];
  /** The last problem seen before giving up (a wait's last probe error). */
  readonly lastProblem?: string;
}

export class SandboxError extends CodedError<SandboxErrorCode, SandboxErrorData> {
  override readonly name = 'SandboxError';
  constructor(code: SandboxErrorCode, message: string, data: SandboxErrorData = {}) {
    super(code, message, data);
  }
}

/** Wraps any failure of a step into a StepFailed naming the step (SandboxErrors pass through). */
export function stepError(step: string, err: unknown, log?: string): SandboxError {
  if (err instanceof SandboxError) {
    return err.data.step === undefined ? new SandboxError(err.code, err.message, { ...err.data, step }) : err;
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new SandboxError('StepFailed', `${step} failed: ${detail}`, log === undefined ? { step } : { step, log });
}

/** The text a person reads: the message, then where to look. */
export function describeSandboxError(err: SandboxError): string {
  const lines = [err.message];
  if (err.data.lastProblem !== undefined) lines.push(`last problem: ${err.data.lastProblem}`);
  for (const p of err.data.problems ?? []) lines.push(`  - ${p}`);
  if (err.data.log !== undefined) lines.push(`read the log: ${err.data.log}`);
  return lines.join('\n');
}
