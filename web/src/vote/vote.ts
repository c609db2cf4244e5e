// Dot voting's view-model (docs/web-client.md, "Dot voting"): which notes a
// vote is on, what the chip and the totals say, whether I may put one more
// dot on a note, and the ranked results with the notes' titles. Pure: the
// components and MyDots (dots.ts) use it, vitest checks it.
import type { Frame, MyVotes, Note, Timer, TrackerItem, Vote, VoteScope } from '../api/types';
import { frameRect, holds } from '../editor/structure';
import { sizeOf } from '../editor/geometry';

/** The start form's defaults (issue 25): three dots each, one per note, anonymous. */
export const DEFAULT_PER_PERSON = 3;
export const DEFAULT_PER_NOTE = 1;
/** The start form's bounds; the server checks its own and its answer is shown. */
export const MAX_PER_PERSON = 99;

/** inScope says whether note is one the vote is on (a frame's notes are those whose centre is inside it, as everywhere). */
export function inScope(scope: VoteScope, note: Note, frames: ReadonlyMap<string, Frame>): boolean {
  if (note.deletedAt) return false;
  switch (scope.kind) {
    case 'all':
      return true;
    case 'type':
      return (note.type || 'sticky') === scope.type;
    case 'frame': {
      const f = frames.get(scope.frameId);
      if (!f || f.deletedAt) return false;
      const s = sizeOf(note);
      return holds(frameRect(f), { x: note.x, y: note.y, w: s.w, h: s.h });
    }
  }
}

/** scopeIds lists the notes the vote is on. */
export function scopeIds(scope: VoteScope, notes: Iterable<Note>, frames: ReadonlyMap<string, Frame>): Set<string> {
  const out = new Set<string>();
  for (const n of notes) if (inScope(scope, n, frames)) out.add(n.id);
  return out;
}

/** scopeLabel names the scope for people: "all notes", "the notes in “Ideas”", "the idea notes". */
export function scopeLabel(scope: VoteScope, frames: ReadonlyMap<string, Frame>): string {
  switch (scope.kind) {
    case 'all':
      return 'all notes';
    case 'type':
      return `the ${scope.type} notes`;
    case 'frame': {
      const f = frames.get(scope.frameId);
      return f ? `the notes in “${f.title || 'Untitled frame'}”` : 'the notes of a deleted frame';
    }
  }
}

/**
 * endedByTimer says whether a vote tied to the timer has ended: it stays
 * "open" on the server, which refuses dots once the board's timer has no
 * time left (none, stopped, run out, or paused at zero), by the server's
 * clock (serverNow; null while unknown: not ended).
 */
export function endedByTimer(v: Vote, timer: Timer | null, serverNow: number | null): boolean {
  if (!v.endsWithTimer || v.state !== 'open') return false;
  if (!timer) return true;
  if (timer.state === 'paused') return (timer.remainingMs ?? 0) <= 0;
  return serverNow !== null && (timer.endsAt ?? 0) <= serverNow;
}

/** shownVote is the vote as people see it: one the timer ended reads as closed. */
export function shownVote(v: Vote | null, timer: Timer | null, serverNow: number | null): Vote | null {
  return v && endedByTimer(v, timer, serverNow) ? { ...v, state: 'closed' } : v;
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/** totalText is what everyone sees of others' dots before the reveal: "31 dots from 12 people". */
export function totalText(v: Pick<Vote, 'dots' | 'voters'>): string {
  return `${plural(v.dots, 'dot')} from ${plural(v.voters, 'person', 'people')}`;
}

/** dotsLeft is how many dots I still have: the server's word when it has answered, else all of them. */
export function dotsLeft(v: Vote, mine: MyVotes | null): number {
  if (!mine || mine.voteId !== v.id) return v.perPerson;
  return Math.max(0, mine.left);
}

/** chipText is the chip everyone sees while a vote is on: "Voting · 2 of 3 dots left", "Voting closed", "Results". */
export function chipText(v: Vote, mine: MyVotes | null): string {
  if (v.state === 'open') return `Voting · ${dotsLeft(v, mine)} of ${plural(v.perPerson, 'dot')} left`;
  if (v.state === 'closed') return 'Voting closed';
  return 'Results';
}

/** myCount is how many of my dots are on noteId. */
export function myCount(v: Vote, mine: MyVotes | null, noteId: string): number {
  if (!mine || mine.voteId !== v.id) return 0;
  return mine.mine[noteId] ?? 0;
}

/**
 * addBlocked says why I cannot put one more dot on noteId ('' when I can):
 * the vote is not open, the note is not in it, I have no dots left, or the
 * note has as many of mine as a note may.
 */
export function addBlocked(v: Vote, mine: MyVotes | null, noteId: string, votable: boolean): string {
  if (v.state !== 'open') return 'Voting is closed.';
  if (!votable) return 'This note is not part of the vote.';
  if (dotsLeft(v, mine) <= 0) return 'You have used all your dots. Take one back to move it.';
  if (myCount(v, mine, noteId) >= v.perNote) return v.perNote === 1 ? 'You have a dot on this note already.' : `At most ${v.perNote} dots per note.`;
  return '';
}

/** applyDelta is mine after a dot put on (1) or taken back from (-1) noteId, as the server will count it (shown before it answers). */
export function applyDelta(mine: MyVotes, noteId: string, delta: 1 | -1): MyVotes {
  const n = (mine.mine[noteId] ?? 0) + delta;
  const next = { ...mine.mine };
  if (n > 0) next[noteId] = n;
  else delete next[noteId];
  return { voteId: mine.voteId, mine: next, left: mine.left - delta };
}

/** Ranked is one line of the results: the note's title (or a placeholder for a note since deleted), its count, its place. */
export interface Ranked {
  noteId: string;
  title: string;
  count: number;
  /** rank: 1 for the most dots; notes with as many dots share a rank ("1, 1, 3"). */
  rank: number;
  voters: string[];
  deleted: boolean;
}

/**
 * ranked lists a revealed vote's results, most dots first (the server's
 * order for ties), without the notes nobody voted for, with the notes'
 * titles as the board has them now.
 */
export function ranked(v: Vote, notes: ReadonlyMap<string, Note>): Ranked[] {
  const rows = (v.results ?? []).filter((r) => r.count > 0);
  const sorted = rows.map((r, i) => ({ r, i })).sort((a, b) => b.r.count - a.r.count || a.i - b.i);
  const out: Ranked[] = [];
  sorted.forEach(({ r }, i) => {
    const n = notes.get(r.noteId);
    const deleted = !n || !!n.deletedAt;
    const rank = i > 0 && out[i - 1].count === r.count ? out[i - 1].rank : i + 1;
    out.push({ noteId: r.noteId, title: n?.title.trim() || (deleted ? 'A deleted note' : 'Untitled note'), count: r.count, rank, voters: v.anonymous ? [] : (r.voters ?? []), deleted });
  });
  return out;
}

/** counts maps noteId to its dots in a revealed vote (the badges on the notes). */
export function counts(v: Vote): Map<string, number> {
  const m = new Map<string, number>();
  if (v.state !== 'revealed') return m;
  for (const r of v.results ?? []) if (r.count > 0) m.set(r.noteId, r.count);
  return m;
}

/** DEFAULT_TOP is how many of the top results "Create work items" offers checked. */
export const DEFAULT_TOP = 3;

/** topPicks is the results checked at first for work items: the first DEFAULT_TOP, and any tied with the last of them, of notes still on the board. */
export function topPicks(rows: Ranked[], top = DEFAULT_TOP): Set<string> {
  const live = rows.filter((r) => !r.deleted);
  if (live.length === 0) return new Set();
  const edge = live[Math.min(top, live.length) - 1].count;
  return new Set(live.filter((r, i) => i < top || r.count === edge).map((r) => r.noteId));
}

/** itemsBySummary maps the live work items' summaries to their keys: a result whose note is one already is not offered again. */
export function itemsBySummary(items: ReadonlyMap<string, TrackerItem>): Map<string, string> {
  const m = new Map<string, string>();
  for (const i of items.values()) if (!i.deletedAt && i.summary) m.set(i.summary, i.key);
  return m;
}

/** Start is the owner's start form as typed. */
export interface StartForm {
  perPerson: string;
  perNote: string;
  anonymous: boolean;
  /** scope: "all", "frame:<id>" or "type:<type>" (the select's values). */
  scope: string;
  endsWithTimer: boolean;
}

/** parseScope reads the scope select's value. */
export function parseScope(s: string): VoteScope {
  if (s.startsWith('frame:')) return { kind: 'frame', frameId: s.slice(6) };
  if (s.startsWith('type:')) return { kind: 'type', type: s.slice(5) };
  return { kind: 'all' };
}

/**
 * parseStart checks the start form and answers the start action, or an
 * error naming the field: whole numbers, 1 to MAX_PER_PERSON dots each,
 * at most as many per note as per person.
 */
export function parseStart(f: StartForm): { action: { action: 'start'; perPerson: number; perNote: number; anonymous: boolean; scope: VoteScope; endsWithTimer: boolean } } | { error: string; field: 'perPerson' | 'perNote' } {
  const whole = (s: string) => (/^\s*\d+\s*$/.test(s) ? Number(s) : NaN);
  const perPerson = whole(f.perPerson);
  if (!(perPerson >= 1 && perPerson <= MAX_PER_PERSON)) return { error: `Dots per person: a whole number from 1 to ${MAX_PER_PERSON}.`, field: 'perPerson' };
  const perNote = whole(f.perNote);
  if (!(perNote >= 1 && perNote <= perPerson)) return { error: `Dots per note: a whole number from 1 to ${perPerson}.`, field: 'perNote' };
  return { action: { action: 'start', perPerson, perNote, anonymous: f.anonymous, scope: parseScope(f.scope), endsWithTimer: f.endsWithTimer } };
}
