// What the chat sends besides the conversation (docs/ai.md, "chat /
// subagent — ChatRequest"): the board as context, trimmed to what the
// server uses, and the board's current phase for the subagent.
import type { Note, Phase, Phases, TrackerItem } from '../../api/types';
import { boardItem, boardNote, cut, MAX_CONTEXT_NOTES, type BoardItem, type BoardNote } from '../boardContext';

/** The server's limit on boardState's work items (docs/ai.md); MAX_CONTEXT_NOTES bounds its notes. */
export const MAX_CONTEXT_ITEMS = 2000;
/**
 * CONTEXT_CHARS is how much of a note's content (and an item's
 * description) is sent: the server puts only each note's first 600
 * characters in the model's prompt, so sending more only costs bandwidth.
 */
export const CONTEXT_CHARS = 600;

export interface BoardState {
  name?: string;
  notes: BoardNote[];
  trackerItems?: BoardItem[];
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
  const out: BoardState = { notes: notes.map((n) => boardNote(n, CONTEXT_CHARS)) };
  if (s.name) out.name = s.name;
  if (items.length) out.trackerItems = items.map((i) => boardItem(i, CONTEXT_CHARS));
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
