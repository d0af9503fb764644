/** "1 error", "2 errors": a count with its noun, singular for one. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
