/**
 * The planner's one error class. plan() only throws for a caller's mistake (an invalid `now`
 * or option); everything wrong with specs or the world becomes a Wait or a Note instead.
 */
import { CodedError } from '../errors.js';
export type PlanErrorCode = 'invalid-now' | 'invalid-option';

export interface PlanErrorData {
  readonly option?: string;
  readonly value?: unknown;
}

export class PlanError extends CodedError<PlanErrorCode, PlanErrorData> {
  override readonly name = 'PlanError';
  constructor(code: PlanErrorCode, message: string, data: PlanErrorData = {}) {
    super(code, message, data);
  }
}
