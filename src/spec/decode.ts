/**
 * Bytes of a spec file → text, refusing what is not a text file drydock should parse:
 * oversized files, binary files (NUL bytes), and anything that is not valid UTF-8.
 */
import { specError, type CodedSpecError } from './errors.js';

export type Decoded =
  { readonly ok: true; readonly text: string } | { readonly ok: false; readonly error: CodedSpecError };

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
}

/** 1-based line and column of a byte offset (columns count bytes; only used before decoding succeeds). */
function bytePosition(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    // LF, CRLF and a lone CR are each one line break, as YAML counts them.
    if (bytes[i] === 0x0a || (bytes[i] === 0x0d && bytes[i + 1] !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return bytes.length;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function decodeSpecFile(file: string, bytes: Uint8Array, maxBytes: number): Decoded {
  if (bytes.length > maxBytes) {
    return {
      ok: false,
      error: specError(
        'file-too-large',
        { file, line: 1, column: 1 },
        `file is larger than the ${mib(maxBytes)} limit for a spec file`,
        'split it into smaller files, or list it in .drydockignore if it is not a drydock spec',
      ),
    };
  }
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return {
      ok: false,
      error: specError('not-utf8', { file, line: 1, column: 1 }, 'file is UTF-16 encoded', 'save it as UTF-8'),
    };
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    return {
      ok: false,
      error: specError(
        'binary-file',
        { file, ...bytePosition(bytes, nul) },
        'file contains a NUL byte: it is binary, not YAML',
        'remove the file from the spec paths, or list it in .drydockignore',
      ),
    };
  }
  try {
    return { ok: true, text: decoder.decode(bytes) };
  } catch {
    const at = firstInvalidUtf8(bytes);
    return {
      ok: false,
      error: specError(
        'not-utf8',
        { file, ...bytePosition(bytes, at) },
        `file is not valid UTF-8 (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at offset ${at})`,
        'save the file as UTF-8',
      ),
    };
  }
}
