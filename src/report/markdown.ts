/** Markdown the reports share: one way to put text in a table cell. */

/**
 * Text safe inside a GitHub-flavoured markdown table cell: backslashes and pipes escaped (a
 * stray `\` before a `|` would otherwise end the cell), line breaks made spaces, and no
 * padding around it.
 */
export function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').trim();
}
