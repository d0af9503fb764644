/**
 * Whether `work` resolved within `ms`: true if it did, false once `ms` passed first (the work
 * goes on either way; nothing cancels it). A rejection within `ms` is passed on. The timer is
 * cleared either way, so a finished wait keeps no process alive.
 */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), passed]);
  } finally {
    clearTimeout(timer);
  }
}
