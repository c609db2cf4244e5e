// Which AI tool calls are destructive, and so are shown as a proposal the
// person accepts instead of being applied at once (issue 21, "An AI answer
// never deletes without asking"; docs/ai.md, "Proposals"). Plain
// TypeScript: tools.ts asks it before it applies a call.
import type { Note } from '../../api/types';

/**
 * MOST is the share of a note's text an update may remove before it is a
 * proposal: more than half of the characters of its content, counted by
 * whole lines (a line kept anywhere in the new text is kept).
 */
export const MOST = 0.5;

/** Proposal is one destructive change waiting for the person's answer. */
export interface Proposal {
  toolCallId: string;
  kind: 'delete' | 'replace';
  noteId: string;
  title: string;
  /** removed is the share of the note's content the change removes (1 for a delete). */
  removed: number;
}

/**
 * removedShare is the share of old's characters (0 to 1) in lines that do
 * not survive into next: each line of old counts its length (plus its line
 * break, if it has one) unless an equal line, not already matched, is in next. Moving
 * lines removes nothing; rewriting them does. Empty old text loses nothing.
 */
export function removedShare(old: string, next: string): number {
  const oldLines = old.split('\n');
  const total = old.length;
  if (total === 0) return 0;
  const left = new Map<string, number>();
  for (const l of next.split('\n')) left.set(l, (left.get(l) ?? 0) + 1);
  let removed = 0;
  oldLines.forEach((l, i) => {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    else removed += l.length + (i < oldLines.length - 1 ? 1 : 0); // the line and its break
  });
  return Math.min(1, removed / total);
}

/**
 * replacesMost reports whether changing a note's content from old to next
 * removes most of it (more than MOST): such an update is a proposal.
 */
export function replacesMost(old: string, next: string): boolean {
  return removedShare(old, next) > MOST;
}

/**
 * classify says whether a tool call, on the notes as they are now, must be
 * proposed first: every deleteNote of an existing note, and an updateNote
 * whose content removes most of the note. expandNote is classified when
 * its text is known (tools.ts, with replacesMost). Other calls, and calls
 * on notes that do not exist (an error anyway), are not.
 */
export function classify(call: { toolCallId: string; toolName: string; input: unknown }, notes: ReadonlyMap<string, Note>): Proposal | null {
  const input = (call.input ?? {}) as Record<string, unknown>;
  const id = typeof input.id === 'string' ? input.id : '';
  const cur = notes.get(id);
  if (!cur) return null;
  if (call.toolName === 'deleteNote') return { toolCallId: call.toolCallId, kind: 'delete', noteId: id, title: cur.title, removed: 1 };
  if (call.toolName === 'updateNote' && typeof input.content === 'string') {
    const removed = removedShare(cur.content, input.content);
    if (removed > MOST) return { toolCallId: call.toolCallId, kind: 'replace', noteId: id, title: cur.title, removed };
  }
  return null;
}

/** proposalText is the card's sentence: "The assistant wants to delete 2 notes: keep1, keep2". */
export function proposalText(ps: readonly Proposal[]): string {
  const names = (list: readonly Proposal[]) => list.map((p) => `“${p.title || p.noteId}”`).join(', ');
  const del = ps.filter((p) => p.kind === 'delete');
  const rep = ps.filter((p) => p.kind === 'replace');
  const parts: string[] = [];
  if (del.length) parts.push(`delete ${del.length} note${del.length === 1 ? '' : 's'}: ${names(del)}`);
  if (rep.length) parts.push(`replace most of the text of ${rep.length} note${rep.length === 1 ? '' : 's'}: ${names(rep)}`);
  return `The assistant wants to ${parts.join(', and ')}.`;
}

/** acceptLabel is the accepting button's word: Delete, Replace, or Apply for a mix. */
export function acceptLabel(ps: readonly Proposal[]): string {
  if (ps.every((p) => p.kind === 'delete')) return 'Delete';
  if (ps.every((p) => p.kind === 'replace')) return 'Replace';
  return 'Apply';
}
