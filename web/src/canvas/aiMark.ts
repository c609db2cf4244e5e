// How a note the AI made or changed is marked (docs/web-client.md, "Chat
// panel"): an extra field on the note itself, so the mark is pushed with
// the edit, seen live by everyone on the board, kept across reloads and in
// snapshots, and removed by the Undo that reverts the AI's change (which
// puts back the note as it was, without the field).
import type { Note } from '../api/types';

/** AI_MARK is the note's extra field: "created" or "updated", by the AI. */
export const AI_MARK = 'aiEdit';

export type AiMark = 'created' | 'updated';

/** aiMarkOf is the note's AI mark, or undefined for a note no AI touched. */
export function aiMarkOf(n: Note): AiMark | undefined {
  const v = n[AI_MARK];
  return v === 'created' || v === 'updated' ? v : undefined;
}
