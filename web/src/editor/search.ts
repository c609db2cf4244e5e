// Search over a board's notes and work items (docs/web-client.md,
// "Search"). Pure: the panel calls it on every keystroke, so it is one pass
// over the rows with no allocation per row that does not match.
import type { Frame, Note, TrackerItem } from '../api/types';

/** MAX_RESULTS is how many results a search lists. */
export const MAX_RESULTS = 50;

/** SearchResult is one hit: a note or a work item, the field that matched and a snippet around the match. */
export interface SearchResult {
  kind: 'note' | 'item' | 'frame';
  id: string;
  /** label is what the result is called: the note's or frame's title, or the item's key and summary. */
  label: string;
  /** field is where the query was found. */
  field: 'title' | 'content' | 'key' | 'summary' | 'description';
  /** snippet is the text around the match (the whole label for a title match). */
  snippet: string;
}

/** fold makes text comparable: lower case, accents off. */
export function fold(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** snippetAround is up to 40 characters either side of the match at i. */
function snippetAround(text: string, i: number, len: number): string {
  const from = Math.max(0, i - 40);
  const to = Math.min(text.length, i + len + 40);
  return (from > 0 ? '…' : '') + text.slice(from, to).replace(/\s+/g, ' ').trim() + (to < text.length ? '…' : '');
}

/**
 * search finds the query (case and accents ignored) in note titles and
 * contents and in work items' keys, summaries and descriptions. Title and
 * key matches come first, then the rest, each group in board order; at
 * most max results. Frames (by title) come before everything.
 */
export function search(query: string, notes: Iterable<Note>, items: Iterable<TrackerItem>, max = MAX_RESULTS, frames: Iterable<Frame> = []): SearchResult[] {
  const q = fold(query.trim());
  if (!q) return [];
  const first: SearchResult[] = [];
  const rest: SearchResult[] = [];
  const find = (text: unknown) => (typeof text === 'string' && text ? fold(text).indexOf(q) : -1);
  for (const f of frames) {
    if (first.length >= max) break;
    if (find(f.title) >= 0) first.push({ kind: 'frame', id: f.id, label: f.title, field: 'title', snippet: f.title });
  }
  // A folded text may be shorter than the text (accents taken off): the
  // snippet is cut from the folded form's offset, which is close enough.
  for (const n of notes) {
    if (first.length >= max) break;
    const label = n.title || 'Untitled note';
    if (find(n.title) >= 0) first.push({ kind: 'note', id: n.id, label, field: 'title', snippet: n.title });
    else {
      const i = find(n.content);
      if (i >= 0 && rest.length < max) rest.push({ kind: 'note', id: n.id, label, field: 'content', snippet: snippetAround(n.content, i, q.length) });
    }
  }
  for (const it of items) {
    if (first.length >= max) break;
    const label = `${it.key} ${it.summary}`;
    if (find(it.key) >= 0) first.push({ kind: 'item', id: it.id, label, field: 'key', snippet: label });
    else if (find(it.summary) >= 0) first.push({ kind: 'item', id: it.id, label, field: 'summary', snippet: it.summary });
    else {
      const i = find(it.description);
      if (i >= 0 && rest.length < max) rest.push({ kind: 'item', id: it.id, label, field: 'description', snippet: snippetAround(it.description!, i, q.length) });
    }
  }
  return [...first, ...rest].slice(0, max);
}
