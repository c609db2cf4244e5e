// The note snapshot and rename record of docs/markdown-format.md, written
// byte for byte as the server's changelog.RenderNote and RenderRename write
// them, so what the client logs is what the server stores, and a restore
// gives back exactly the note that was logged.
import type { Note } from '../api/types';

/**
 * SERVERS are note fields the format leaves out, as the server's
 * changelog.RenderNote does: locked and createdBy belong to the server
 * (docs/api.md, "Locks and roles"), and as extra fields it would refuse them.
 */
const SERVERS = new Set(['locked', 'createdBy']);

/** KNOWN are the note fields the format writes as their own lines, in order. */
const KNOWN = new Set(['id', 'title', 'content', 'x', 'y', 'w', 'h', 'color', 'type', 'updatedAt', 'version', 'deletedAt']);

// Go's strconv.IsPrint: letters, marks, numbers, punctuation, symbols and
// the ASCII space. Anything else (tabs, line breaks, U+2028, NBSP, BOM) must
// be double-quoted, or YAML would fold or trim it.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]*$/u;

/** quote renders s as a one-line YAML scalar that reads back as exactly s. */
export function quote(s: string): string {
  if (PRINTABLE.test(s)) return "'" + s.replaceAll("'", "''") + "'";
  return goQuote(s);
}

const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');

// goQuote is Go's strconv.Quote: every escape it writes means the same in a
// YAML double-quoted scalar.
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (r >= 0xd800 && r <= 0xdfff) out += '\\ufffd'; // a lone surrogate: Go sees invalid UTF-8
    else if (PRINTABLE.test(ch)) out += ch;
    else if (r < 0x20 || r === 0x7f) out += '\\x' + hex(r, 2);
    else if (r < 0x10000) out += '\\u' + hex(r, 4);
    else out += '\\U' + hex(r, 8);
  }
  return out + '"';
}

/** MAX_PLAIN is the longest plain decimal before exponent form (as Go). */
const MAX_PLAIN = 21;

/**
 * formatFloat is Go's formatFloat of the changelog: the shortest decimal
 * that reads back as the same float64, plain ('f') unless that is longer
 * than 21 characters, then Go's 'g' form; -0 is "-0.0".
 */
export function formatFloat(v: number): string {
  if (Number.isNaN(v)) return '.nan';
  if (v === Infinity) return '.inf';
  if (v === -Infinity) return '-.inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0';
  // toExponential() without digits gives the shortest round-trip digits.
  const [mant, expS] = Math.abs(v).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp = Number(expS); // value = 0.d1d2… × 10^(exp+1)
  const sign = v < 0 ? '-' : '';
  const dp = exp + 1; // position of the decimal point after the first dp digits
  let plain: string;
  if (dp <= 0) plain = '0.' + '0'.repeat(-dp) + digits;
  else if (dp >= digits.length) plain = digits + '0'.repeat(dp - digits.length);
  else plain = digits.slice(0, dp) + '.' + digits.slice(dp);
  plain = sign + plain;
  if (plain.length <= MAX_PLAIN) return plain;
  // Go's 'g' with the shortest precision: exponent form when the exponent
  // is below -4 or at least 6, else the plain form after all.
  if (exp < -4 || exp >= 6) {
    const m = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    const e = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' + e : e}`;
  }
  return plain;
}

/** extraObject is the JSON object of a note's fields the format does not name, in order. */
function extraObject(n: Note): string | null {
  const extra: Record<string, unknown> = {};
  let any = false;
  for (const k of Object.keys(n)) {
    if (KNOWN.has(k) || SERVERS.has(k) || n[k] === undefined) continue;
    extra[k] = n[k];
    any = true;
  }
  return any ? JSON.stringify(extra) : null;
}

/** renderNote writes a note snapshot: front matter of every field but content, a blank line, the content, a newline. */
export function renderNote(n: Note): string {
  let out = '---\n';
  const field = (k: string, v: string) => (out += `${k}: ${v}\n`);
  field('id', quote(n.id));
  field('title', quote(n.title ?? ''));
  field('x', formatFloat(n.x ?? 0));
  field('y', formatFloat(n.y ?? 0));
  // Only a note with a size (changelog's writeNoteFields).
  if (n.w || n.h) {
    field('w', formatFloat(n.w ?? 0));
    field('h', formatFloat(n.h ?? 0));
  }
  field('color', quote(n.color ?? ''));
  field('type', quote(n.type ?? ''));
  field('updatedAt', quote(n.updatedAt ?? ''));
  field('version', String(n.version ?? 0));
  if (n.deletedAt != null) field('deletedAt', quote(n.deletedAt));
  const extra = extraObject(n);
  if (extra !== null) field('extra', quote(extra));
  return out + '---\n\n' + (n.content ?? '') + '\n';
}

/** renderRename writes a board rename record. */
export function renderRename(name: string): string {
  return `---\nname: ${quote(name)}\n---\n`;
}
