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

/** Letters of other scripts drawn like ASCII ones (Cyrillic, Greek), as Unicode's confusables list pairs them. */
const CONFUSABLE: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'B',
  е: 'e',
  к: 'k',
  м: 'M',
  н: 'H',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 'T',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ј: 'j',
  ԁ: 'd',
  һ: 'h',
  ԛ: 'q',
  ԝ: 'w',
  ӏ: 'l',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  Ѕ: 'S',
  І: 'I',
  Ј: 'J',
  α: 'a',
  ο: 'o',
  ν: 'v',
  ι: 'i',
  κ: 'k',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};

/** Characters that print as nothing: zero-width spaces and joiners, bidi controls, the soft hyphen, BOM. */
// eslint-disable-next-line no-misleading-character-class -- each invisible code point is matched alone, combining ones included
const INVISIBLE = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/;

function hex(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * When `word` holds characters outside printable ASCII, what they are (by code point) and the
 * name it looks like: "did you mean" would otherwise show a name identical to the eye.
 */
export function lookalike(
  word: string,
  candidates: readonly string[],
): { readonly holds: string; readonly fix: string } | undefined {
  const odd = [...word].filter((c) => c < ' ' || c > '~');
  if (odd.length === 0) return undefined;
  const skeleton = [...word.normalize('NFKC')]
    .filter((c) => !INVISIBLE.test(c))
    .map((c) => CONFUSABLE[c] ?? c)
    .join('');
  const named = [...new Set(odd)]
    .map(
      (c) =>
        `${hex(c)}${INVISIBLE.test(c) ? ' (invisible)' : CONFUSABLE[c] !== undefined ? ` (looks like "${CONFUSABLE[c]}")` : ''}`,
    )
    .join(', ');
  const meant = candidates.includes(skeleton) ? skeleton : undefined;
  return {
    holds: `the name holds ${named}`,
    fix: meant !== undefined ? `retype it as ${JSON.stringify(meant)} in plain ASCII` : 'retype it in plain ASCII',
  };
}
