/**
 * The planner's one error class. plan() only throws for a caller's mistake (an invalid `now`
 * or option); everything wrong with specs or the world becomes a Wait or a Note instead.
 */
export type PlanErrorCode = 'invalid-now' | 'invalid-option';

export interface PlanErrorData {
  readonly option?: string;
  readonly value?: unknown;
}

export class PlanError extends Error {
  override readonly name = 'PlanError';
  constructor(
    readonly code: PlanErrorCode,
    message: string,
    readonly data: PlanErrorData = {},
  ) {
    super(message);
  }

  toJSON(): { name: string; code: PlanErrorCode; message: string; data: PlanErrorData } {
    return { name: this.name, code: this.code, message: this.message, data: this.data };
  }
}
