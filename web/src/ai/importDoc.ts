// Import a document (issue 12): the rules of the document-to-notes call,
// kept apart from the dialog so they are unit-tested. docs/web-client.md,
// "AI (issue 12)" → "Import a document", holds the decisions.
import type { Note } from '../api/types';
import { COLORS, MAX_CONTENT, MAX_TITLE, NOTE_HEIGHT, NOTE_WIDTH } from '../canvas/notes';

/** MAX_DOCUMENT is the server's limit on a document (ai.MaxDocumentText), in code points. */
export const MAX_DOCUMENT = 100_000;

/**
 * MAX_FILE_BYTES: a file larger than this cannot hold 100,000 characters or
 * fewer (UTF-8 uses at most 4 bytes per code point, plus a 3-byte BOM that
 * decoding drops), so it is refused without being read into the page.
 */
export const MAX_FILE_BYTES = MAX_DOCUMENT * 4 + 3;

/** FILE_TYPES are the files the picker offers and readDocument accepts. */
export const FILE_TYPES = ['.txt', '.md', '.markdown', 'text/plain', 'text/markdown'];

/**
 * wellFormed replaces lone UTF-16 surrogates with U+FFFD. The server refuses
 * a JSON string holding an unpaired surrogate escape (JSON.stringify writes
 * one as \udXXX), so the text is made well-formed before it is counted and
 * sent; each lone half then counts as one character, as it does in the
 * count the user sees.
 */
export function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * documentLength counts a document as the server does: Unicode code points
 * (utf8.RuneCountInString in ai/requests.go), not UTF-16 units, so an emoji
 * or any character outside the BMP counts once. A lone surrogate counts
 * once too (it is sent as U+FFFD).
 */
export function documentLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** documentProblem is why text cannot be sent, or '' when it can. */
export function documentProblem(text: string, length = documentLength(text)): string {
  if (text.trim() === '') return 'Paste a document or choose a file first.';
  if (length > MAX_DOCUMENT) {
    const over = length - MAX_DOCUMENT;
    return `The document has ${length.toLocaleString('en')} characters; at most ${MAX_DOCUMENT.toLocaleString('en')} can be imported. Remove ${over.toLocaleString('en')} character${over === 1 ? '' : 's'}, or import it in parts.`;
  }
  return '';
}

/** readDocument reads a picked .txt/.md file as UTF-8, refusing other files and files that are surely too long. */
export async function readDocument(file: File): Promise<string> {
  const name = file.name.toLowerCase();
  const textual = name.endsWith('.txt') || name.endsWith('.md') || name.endsWith('.markdown') || file.type === 'text/plain' || file.type === 'text/markdown';
  if (!textual) throw new Error(`"${file.name}" is not a text or Markdown file (.txt, .md).`);
  if (file.size > MAX_FILE_BYTES) {
    throw new Error(`"${file.name}" is ${Math.ceil(file.size / 1000).toLocaleString('en')} kB, longer than ${MAX_DOCUMENT.toLocaleString('en')} characters can be. Import a shorter part of it.`);
  }
  return file.text();
}

/** ProposedNote is one note of document-to-notes' answer. */
export interface ProposedNote {
  title: string;
  content: string;
  suggestedColor?: string;
  suggestedType?: string;
}

/** DocumentNotes is document-to-notes' answer. */
export interface DocumentNotes {
  notes: ProposedNote[];
}

/** DocumentRequest is document-to-notes' body. */
export interface DocumentRequest {
  text: string;
  filename?: string;
  boardId?: string;
}

/** documentRequest builds the body: well-formed text, the file's name when there is one (at most 255 characters). */
export function documentRequest(text: string, filename: string, boardId: string): DocumentRequest {
  const req: DocumentRequest = { text: wellFormed(text), boardId };
  const f = [...wellFormed(filename)].slice(0, 255).join('');
  if (f) req.filename = f;
  return req;
}

// The colours and types the AI may suggest (docs/ai.md, the board tools'
// enums). "note" is the AI's word for a plain note, which this client calls
// "sticky"; the others are kept as they are (the editor offers a type it
// does not list). Anything else, or nothing, becomes the client's default.
const AI_TYPES = new Set(['idea', 'task', 'question', 'decision', 'risk', 'requirement', 'prd', 'epic', 'story', 'feedback', 'dev-task', 'qa-test']);
export const DEFAULT_COLOR = 'yellow';
export const DEFAULT_TYPE = 'sticky';

/** noteColor is the colour a proposed note gets. */
export function noteColor(suggested: string | undefined): string {
  return suggested && Object.hasOwn(COLORS, suggested) ? suggested : DEFAULT_COLOR;
}

/** noteType is the type a proposed note gets. */
export function noteType(suggested: string | undefined): string {
  if (suggested === 'note' || suggested === 'sticky') return DEFAULT_TYPE;
  return suggested && AI_TYPES.has(suggested) ? suggested : DEFAULT_TYPE;
}

/** Layout of imported notes: a grid GRID_COLUMNS wide, GAP apart. */
export const GRID_COLUMNS = 5;
export const GAP = 40;

/**
 * freeOrigin is the top-left corner of the import grid: right of every
 * note on the board (one gap clear of the rightmost edge), level with the
 * topmost note, so no existing note is covered whatever the grid's height.
 * An empty board starts at (0, 0).
 */
export function freeOrigin(notes: Iterable<Pick<Note, 'x' | 'y'>>): { x: number; y: number } {
  let right = -Infinity;
  let top = Infinity;
  for (const n of notes) {
    right = Math.max(right, n.x + NOTE_WIDTH);
    top = Math.min(top, n.y);
  }
  if (right === -Infinity) return { x: 0, y: 0 };
  return { x: Math.round(right + GAP * 2), y: Math.round(top) };
}

/** clip cuts s to max code points. */
function clip(s: string, max: number): string {
  return documentLength(s) <= max ? s : [...s].slice(0, max).join('');
}

/**
 * importedNotes turns the picked proposals into notes laid out in a grid at
 * freeOrigin(existing), in the order the model gave them.
 */
export function importedNotes(picked: readonly ProposedNote[], existing: Iterable<Pick<Note, 'x' | 'y'>>, newId: () => string): Note[] {
  const o = freeOrigin(existing);
  return picked.map((p, i) => ({
    id: newId(),
    title: clip(p.title.trim(), MAX_TITLE),
    content: clip(p.content, MAX_CONTENT),
    x: o.x + (i % GRID_COLUMNS) * (NOTE_WIDTH + GAP),
    y: o.y + Math.floor(i / GRID_COLUMNS) * (NOTE_HEIGHT + GAP),
    color: noteColor(p.suggestedColor),
    type: noteType(p.suggestedType),
    updatedAt: '',
  }));
}

/** excerpt is the start of a note's Markdown for the preview (at most max code points, cut at a line end when one is near). */
export function excerpt(content: string, max = 400): string {
  if (documentLength(content) <= max) return content;
  const cut = [...content].slice(0, max).join('');
  const nl = cut.lastIndexOf('\n');
  return (nl > max / 2 ? cut.slice(0, nl) : cut) + ' …';
}
