/**
 * Puts the live view on the terminal. On a TTY the view is redrawn in place with a few ANSI
 * escapes (cursor up, clear to the end of the screen), which is all in-place redrawing needs;
 * anywhere else (a pipe, a CI log) only what changed is appended, one plain line per change.
 */
import { renderChanges, renderView, type SandboxSnapshot } from './view.js';

const ESC = '\u001b[';
const HIDE_CURSOR = `${ESC}?25l`;
const SHOW_CURSOR = `${ESC}?25h`;
const CLEAR_DOWN = `${ESC}0J`;

export interface Screen {
  /** Shows the newest snapshot. */
  show(snapshot: SandboxSnapshot): void;
  /** Lines that stay (instructions, the summary), printed above the live view. */
  print(lines: readonly string[]): void;
  /** Leaves the last view on screen and restores the cursor. */
  close(): void;
}

export interface ScreenOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
}

export function createScreen(out: ScreenOutput, options: { readonly live?: boolean } = {}): Screen {
  const live = options.live ?? out.isTTY === true;
  return live ? new LiveScreen(out) : new AppendScreen(out);
}

class LiveScreen implements Screen {
  private drawn = 0;
  private last: SandboxSnapshot | undefined;

  constructor(private readonly out: ScreenOutput) {
    out.write(HIDE_CURSOR);
  }

  private erase(): string {
    // Cursor to the start of the first drawn line, then clear everything below it.
    return this.drawn > 0 ? `${ESC}${this.drawn}F${CLEAR_DOWN}` : '';
  }

  show(snapshot: SandboxSnapshot): void {
    this.last = snapshot;
    const width = Math.max(20, (this.out.columns || 100) - 1);
    // Never taller than the terminal: the cursor cannot move back above its top.
    const height = Math.max(3, (this.out.rows || 40) - 2);
    let lines = renderView(snapshot, width);
    if (lines.length > height) lines = [...lines.slice(0, height - 1), `  … ${lines.length - height + 1} more lines`];
    this.out.write(this.erase() + lines.map((l) => `${l}\n`).join(''));
    this.drawn = lines.length;
  }

  print(lines: readonly string[]): void {
    this.out.write(this.erase() + lines.map((l) => `${l}\n`).join(''));
    this.drawn = 0;
    if (this.last !== undefined) this.show(this.last);
  }

  close(): void {
    this.out.write(SHOW_CURSOR);
  }
}

class AppendScreen implements Screen {
  private last: SandboxSnapshot | undefined;

  constructor(private readonly out: ScreenOutput) {}

  show(snapshot: SandboxSnapshot): void {
    const lines = renderChanges(this.last, snapshot);
    this.last = snapshot;
    if (lines.length > 0) this.out.write(lines.map((l) => `${l}\n`).join(''));
  }

  print(lines: readonly string[]): void {
    this.out.write(lines.map((l) => `${l}\n`).join(''));
  }

  close(): void {}
}

/** A stream the sandbox writes to that may go away (a closed pipe, a closed terminal). */
export interface GuardedOutput extends ScreenOutput {
  /** True once a write failed: whoever read the output has gone (EPIPE). */
  readonly gone: boolean;
}

/**
 * Wraps stdout or stderr so that the reader going away — `drydock sandbox | tee log` and
 * Ctrl-C, which ends tee too — never cuts the shutdown short: the failed write's EPIPE is
 * caught (unhandled, it would end the process before the lock and pid file are removed)
 * and later writes are dropped.
 */
export function guardOutput(stream: NodeJS.WriteStream): GuardedOutput {
  let gone = false;
  stream.on('error', () => {
    gone = true;
  });
  return {
    write(text: string): boolean {
      if (gone || stream.destroyed) return false;
      try {
        return stream.write(text);
      } catch {
        gone = true;
        return false;
      }
    },
    get gone() {
      return gone || stream.destroyed;
    },
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
    get rows() {
      return stream.rows;
    },
  };
}
