// What the chat sends besides the conversation (docs/ai.md, "chat /
// subagent — ChatRequest"): the board as context, trimmed to what the
// server uses, and the board's current phase for the subagent.
import type { Note, Phase, Phases, TrackerItem } from '../../api/types';

/** The server's limits on boardState (docs/ai.md). */
export const MAX_CONTEXT_NOTES = 2000;
export const MAX_CONTEXT_ITEMS = 2000;
/**
 * CONTEXT_CHARS is how much of a note's content (and an item's
 * description) is sent: the server puts only each note's first 600
 * characters in the model's prompt, so sending more only costs bandwidth.
 */
export const CONTEXT_CHARS = 600;

export interface BoardNote {
  id: string;
  title: string;
  content: string;
  color?: string;
  type?: string;
  x?: number;
  y?: number;
}

export interface BoardState {
  name?: string;
  notes: BoardNote[];
  trackerItems?: Pick<TrackerItem, 'id' | 'key' | 'type' | 'summary' | 'description' | 'status' | 'parentId'>[];
}

/** cut keeps the first n code points of s (the server counts code points). */
export function cut(s: string, n: number): string {
  if (s.length <= n) return s;
  const cps = Array.from(s);
  return cps.length <= n ? s : cps.slice(0, n).join('');
}

const newestFirst = <T extends { updatedAt: string }>(a: T, b: T) => (Date.parse(b.updatedAt) || 0) - (Date.parse(a.updatedAt) || 0);

/**
 * buildBoardState is the board as the chat's context: every note (the 2,000
 * most recently changed on a bigger board, so the notes the model may name
 * in updateNote are the ones people work on), each with the first 600
 * characters of its content; the same for work items.
 */
export function buildBoardState(s: { name: string; notes: ReadonlyMap<string, Note>; items: ReadonlyMap<string, TrackerItem> }): BoardState {
  let notes = [...s.notes.values()];
  if (notes.length > MAX_CONTEXT_NOTES) notes = notes.sort(newestFirst).slice(0, MAX_CONTEXT_NOTES);
  let items = [...s.items.values()];
  if (items.length > MAX_CONTEXT_ITEMS) items = items.sort(newestFirst).slice(0, MAX_CONTEXT_ITEMS);
  const out: BoardState = {
    notes: notes.map((n) => {
      const b: BoardNote = { id: n.id, title: cut(n.title ?? '', 1000), content: cut(n.content ?? '', CONTEXT_CHARS) };
      if (n.color) b.color = n.color;
      if (n.type) b.type = n.type;
      if (Number.isFinite(n.x)) b.x = n.x;
      if (Number.isFinite(n.y)) b.y = n.y;
      return b;
    }),
  };
  if (s.name) out.name = s.name;
  if (items.length)
    out.trackerItems = items.map((i) => {
      const t: NonNullable<BoardState['trackerItems']>[number] = { id: i.id, key: i.key, type: i.type, summary: i.summary };
      if (i.description) t.description = cut(i.description, CONTEXT_CHARS);
      if (i.status) t.status = i.status;
      if (i.parentId) t.parentId = i.parentId;
      return t;
    });
  return out;
}

/**
 * currentPhase is the board's current phase as the subagent takes it
 * ({id, name, description?}), or null when the board has none. Only those
 * keys are sent: a phase object may carry client fields of any size, and
 * the server takes at most 4 KB.
 */
export function currentPhase(p: Phases | undefined | null): { id: string; name: string; description?: string } | null {
  const ph: Phase | undefined = p?.phases.find((x) => x.id === p.currentPhaseId);
  if (!ph) return null;
  const name = (typeof ph.name === 'string' && ph.name) || (typeof ph.title === 'string' && ph.title) || ph.id;
  const out: { id: string; name: string; description?: string } = { id: ph.id, name: cut(name, 200) };
  if (typeof ph.description === 'string' && ph.description) out.description = cut(ph.description, 2000);
  return out;
}
