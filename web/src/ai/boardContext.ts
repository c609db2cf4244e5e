// The board as AI requests carry it (docs/ai.md, BoardNote): one shape for
// the chat's boardState, note-ai's allNotes and tracker/generate's items.
// Each request decides how much of a content it sends; these only shape it.
import type { Note, TrackerItem } from '../api/types';

/** MAX_CONTEXT_NOTES is the server's bound on the notes of a request's context (docs/ai.md). */
export const MAX_CONTEXT_NOTES = 2000;

/** BoardNote is a note as AI requests carry it (docs/ai.md). */
export interface BoardNote {
  id: string;
  title: string;
  content: string;
  color?: string;
  type?: string;
  x?: number;
  y?: number;
}

/** BoardItem is a work item as AI requests carry it: its public fields, without version and timestamps. */
export type BoardItem = Pick<TrackerItem, 'id' | 'key' | 'type' | 'summary' | 'description' | 'status' | 'parentId'>;

/** cut keeps the first n code points of s (the server counts code points). */
export function cut(s: string, n: number): string {
  if (s.length <= n) return s;
  // Walk only as far as the n-th code point: a large board cuts thousands
  // of long notes per request, and splitting each whole string is slow.
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return s.slice(0, i);
}

/**
 * boardNote is n as AI requests carry it, its content cut to max code
 * points. Fields other clients added to the note are not sent.
 */
export function boardNote(n: Note, max: number): BoardNote {
  const b: BoardNote = { id: n.id, title: cut(n.title ?? '', 1000), content: cut(n.content ?? '', max) };
  if (n.color) b.color = n.color;
  if (n.type) b.type = n.type;
  if (Number.isFinite(n.x)) b.x = n.x;
  if (Number.isFinite(n.y)) b.y = n.y;
  return b;
}

/** boardItem is i as AI requests carry it, its description cut to max code points. */
export function boardItem(i: TrackerItem, max = Infinity): BoardItem {
  const t: BoardItem = { id: i.id, key: i.key, type: i.type, summary: i.summary };
  if (i.description) t.description = cut(i.description, max);
  if (i.status) t.status = i.status;
  if (i.parentId) t.parentId = i.parentId;
  return t;
}
