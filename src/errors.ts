/**
 * What should happen after a failure, in Flux's words, everywhere drydock classifies one:
 * stalled needs a person (no retry); waiting retries after a delay the failure names;
 * transient retries soon.
 */
export type Retry = 'stalled' | 'waiting' | 'transient';

/**
 * The shape every drydock error class shares (isomorphic-git style): a stable `code` callers
 * decide by, never the message text, and structured `data`, both kept when serialised to JSON.
 */
export abstract class CodedError<C extends string, D extends object> extends Error {
  abstract override readonly name: string;

  constructor(
    readonly code: C,
    message: string,
    readonly data: D,
  ) {
    super(message);
  }

  toJSON(): { name: string; code: C; message: string; data: D } {
    return { name: this.name, code: this.code, message: this.message, data: this.data };
  }
}

/** A loggable description of a client error without headers or bodies (no secrets). */
export function describeError(err: unknown): { readonly message: string; readonly code?: number | string } {
  if (err && typeof err === 'object') {
    const e = err as { message?: unknown; code?: unknown; statusCode?: unknown };
    const code =
      typeof e.code === 'number' || typeof e.code === 'string'
        ? e.code
        : typeof e.statusCode === 'number'
          ? e.statusCode
          : undefined;
    // ApiException messages embed response headers and bodies: keep only the first line.
    const message = typeof e.message === 'string' ? (e.message.split('\n')[0] ?? '') : JSON.stringify(err);
    return code !== undefined ? { message, code } : { message };
  }
  return { message: String(err) };
}
