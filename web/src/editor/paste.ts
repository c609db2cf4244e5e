// Pasted text to notes (docs/web-client.md, "Paste"). Plain text and
// Markdown are split into blocks: every top-level list item is a note, every
// other paragraph (text between blank lines) is a note; a heading starts a
// new note and titles it. A note's first line is its title (without its
// Markdown marker), the rest its content. Pure functions.
import { MAX_CONTENT, MAX_TITLE } from '../canvas/notes';

/** MAX_PASTE_NOTES is how many notes one paste makes at most; the rest is left out and said. */
export const MAX_PASTE_NOTES = 50;

/** PastedNote is a note's text as a paste makes it. */
export interface PastedNote {
  title: string;
  content: string;
}

/** PasteResult is the notes of a paste and how many blocks the cap left out. */
export interface PasteResult {
  notes: PastedNote[];
  dropped: number;
}

const LIST_ITEM = /^([-*+]|\d{1,9}[.)])\s+/;
const HEADING = /^#{1,6}\s+/;

/** cut shortens s to at most max code points. */
function cut(s: string, max: number): string {
  const cps = [...s];
  return cps.length > max ? cps.slice(0, max).join('') : s;
}

/** toNote makes a note of a block's lines: the first is the title, the rest the content. */
function toNote(lines: string[]): PastedNote {
  const [first, ...rest] = lines;
  const title = first.replace(HEADING, '').replace(LIST_ITEM, '').trim();
  // A list item's continuation lines were indented under it: take the indent off.
  const indent = Math.min(...rest.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length), Infinity);
  const body = rest.map((l) => (Number.isFinite(indent) ? l.slice(indent) : l)).join('\n').trim();
  return { title: cut(title, MAX_TITLE), content: cut(body, MAX_CONTENT) };
}

/** parsePaste splits pasted text into notes, at most max of them. */
export function parsePaste(text: string, max = MAX_PASTE_NOTES): PasteResult {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: string[][] = [];
  let cur: string[] | null = null;
  let inFence = false;
  const close = () => {
    if (cur && cur.some((l) => l.trim())) blocks.push(cur);
    cur = null;
  };
  for (const line of lines) {
    const top = line.length === line.trimStart().length;
    if (inFence) {
      cur!.push(line);
      if (/^\s*(```|~~~)/.test(line)) inFence = false;
      continue;
    }
    if (!line.trim()) {
      // A blank line ends a paragraph; inside a list item it may separate its paragraphs.
      if (cur && LIST_ITEM.test(cur[0])) cur.push(line);
      else close();
      continue;
    }
    if (top && (LIST_ITEM.test(line) || HEADING.test(line))) {
      close();
      cur = [line];
    } else if (cur && LIST_ITEM.test(cur[0]) && top && cur.at(-1) === '') {
      // Unindented text after a blank line ends the list item.
      close();
      cur = [line];
    } else {
      cur ??= [];
      cur.push(line);
    }
    if (/^\s*(```|~~~)/.test(line)) inFence = true;
  }
  close();
  // A heading alone followed by its paragraph: one note, the heading its title.
  const merged: string[][] = [];
  for (const b of blocks) {
    const prev = merged.at(-1);
    if (prev && prev.length === 1 && HEADING.test(prev[0]) && !HEADING.test(b[0]) && !LIST_ITEM.test(b[0])) prev.push(...b);
    else merged.push(b);
  }
  const notes = merged.map((b) => toNote(b.map((l) => l.trimEnd()))).filter((n) => n.title || n.content);
  return { notes: notes.slice(0, max), dropped: Math.max(0, notes.length - max) };
}
