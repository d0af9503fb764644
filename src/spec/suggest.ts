/** "Did you mean …?" for misspelt field names and kinds. */

function distance(a: string, b: string): number {
  const al = a.toLowerCase();
  const bl = b.toLowerCase();
  let prev = Array.from({ length: bl.length + 1 }, (_, i) => i);
  for (let i = 1; i <= al.length; i++) {
    const cur = [i];
    for (let j = 1; j <= bl.length; j++) {
      const cost = al[i - 1] === bl[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[bl.length] ?? 0;
}

/** The candidate closest to `word`, when it is close enough to be a likely typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  const allowed = Math.max(1, Math.floor(word.length / 3));
  return best !== undefined && bestScore <= allowed ? best : undefined;
}
