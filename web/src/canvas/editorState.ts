// What the note editor holds while it is open, and how it follows the note
// (docs/web-client.md, "The editor follows the note"). Pure functions: the
// NoteEditor component keeps an EditorState and calls them.
//
// Each field remembers the value it started from. A field whose text is
// still that value is untouched: when someone else's change to the note
// arrives, it takes their value in place. A touched field keeps my text;
// on save only the touched fields are sent, on the row the editor opened on
// (its base), and the sync engine merges them into the note as it is then,
// so lines others changed meanwhile are kept.
import type { Note } from '../api/types';

/** EDITOR_FIELDS are the note fields the editor edits. */
export const EDITOR_FIELDS = ['title', 'color', 'type', 'content'] as const;

/** EditorField is one of them. */
export type EditorField = (typeof EDITOR_FIELDS)[number];

/** EditorValues are the fields' texts as the editor shows them. */
export type EditorValues = Record<EditorField, string>;

/** EditorState is the editor's note: its base, what it shows, and where each field started. */
export interface EditorState {
  /** base is the note as it was when the editor opened (or last followed it with nothing touched): the base of the save. */
  base: Note;
  /** values are the fields as the editor shows them. */
  values: EditorValues;
  /** from is the value each field had when the person started on it; a field whose value differs is touched. */
  from: EditorValues;
}

const valuesOf = (n: Note): EditorValues => ({ title: n.title ?? '', color: n.color ?? '', type: n.type ?? '', content: n.content ?? '' });

/** openEditor is the state of an editor opened on note n. */
export function openEditor(n: Note): EditorState {
  const v = valuesOf(n);
  return { base: n, values: v, from: { ...v } };
}

/** edit is the state after the person typed value into field f. */
export function edit(s: EditorState, f: EditorField, value: string): EditorState {
  return s.values[f] === value ? s : { ...s, values: { ...s.values, [f]: value } };
}

/** touched lists the fields the person changed in the editor. */
export function touched(s: EditorState): EditorField[] {
  return EDITOR_FIELDS.filter((f) => s.values[f] !== s.from[f]);
}

/**
 * follow is the state after the note changed to `now` (someone else's
 * change, or my own from elsewhere): every untouched field takes its new
 * value; touched fields keep my text. With nothing touched, `now` becomes
 * the base. Returns s itself when nothing changes (so React does not render).
 */
export function follow(s: EditorState, now: Note | undefined): EditorState {
  if (!now || now === s.base) return s;
  const t = new Set(touched(s));
  if (!t.size) {
    const v = valuesOf(now);
    return { base: now, values: v, from: { ...v } };
  }
  const nv = valuesOf(now);
  let values = s.values;
  let from = s.from;
  for (const f of EDITOR_FIELDS) {
    if (t.has(f) || s.values[f] === nv[f]) continue;
    values = { ...values, [f]: nv[f] };
    from = { ...from, [f]: nv[f] };
  }
  return values === s.values ? s : { ...s, values, from };
}

/**
 * changedMeanwhile lists the fields I touched that someone else changed
 * too since I started on them (the save will merge both).
 */
export function changedMeanwhile(s: EditorState, now: Note | undefined): EditorField[] {
  if (!now) return [];
  const nv = valuesOf(now);
  return touched(s).filter((f) => nv[f] !== s.from[f]);
}

/**
 * toSave is what Save sends: the base with my touched fields, and the base
 * it was made on (the sync engine merges it into the note as it is now); or
 * null when nothing was touched.
 */
export function toSave(s: EditorState): { row: Note; base: Note } | null {
  const t = touched(s);
  if (!t.length) return null;
  const row: Note = { ...s.base };
  for (const f of t) row[f] = s.values[f];
  return { row, base: s.base };
}

/**
 * saved is the state after a save that keeps the editor open (an AI draft
 * accepted): the note as shown after the save is the new base.
 */
export function saved(now: Note): EditorState {
  return openEditor(now);
}
