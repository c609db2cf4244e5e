// Analyse and rewrite (docs/ai.md: notes/analyze, notes/rewrite,
// tracker/analyze, tracker/rewrite; docs/web-client.md, "Analyse and
// rewrite"). Pure functions for anchoring suggestions in the text and
// applying a rewrite, and the calls themselves.
import { aiJson } from '../api/ai';
import type { TrackerItem } from '../api/types';
import { creditsChanged } from './credits';

/** One suggestion of an analysis. */
export interface Suggestion {
  /** sectionText is an excerpt of the analysed text, or "" for the whole. */
  sectionText: string;
  advice: string;
  actions: { label: string; instruction: string }[];
}

/** Analysis is the answer of notes/analyze and tracker/analyze. */
export interface Analysis {
  suggestions: Suggestion[];
}

/** What is analysed: a note's content, or a work item's summary and description. */
export type Target =
  | { kind: 'note'; boardId: string; noteId: string; title: string; content: string }
  | { kind: 'item'; boardId: string; item: TrackerItem; parent?: TrackerItem };

/** The fields a rewrite can change: a note's content, an item's summary or description. */
export type Field = 'content' | 'summary' | 'description';

/** Anchor is where a suggestion's text is: a field and a range in it. */
export interface Anchor {
  field: Field;
  start: number;
  end: number;
}

/** fieldsOf lists the target's text fields in reading order. */
export function fieldsOf(t: Target): { field: Field; text: string }[] {
  if (t.kind === 'note') return [{ field: 'content', text: t.content }];
  return [
    { field: 'summary', text: t.item.summary ?? '' },
    { field: 'description', text: t.item.description ?? '' },
  ];
}

/**
 * anchor finds a suggestion's sectionText verbatim in the target's fields,
 * first occurrence, in reading order. "" (advice about the whole text) and
 * text that is not there (the text changed since, or the model quoted
 * loosely and the server found no match) give null: the suggestion is shown
 * unanchored.
 */
export function anchor(t: Target, sectionText: string): Anchor | null {
  if (!sectionText) return null;
  for (const f of fieldsOf(t)) {
    const i = f.text.indexOf(sectionText);
    if (i >= 0) return { field: f.field, start: i, end: i + sectionText.length };
  }
  return null;
}

/** Segment is a run of a field's text, marked with the suggestion it anchors, if any. */
export interface Segment {
  text: string;
  suggestion?: number;
}

/**
 * segments splits text into runs for highlighting: each anchor (index =
 * suggestion number) marks its range. Overlapping anchors: the earlier
 * range wins and the later is shown unmarked in the text (its card still
 * quotes it).
 */
export function segments(text: string, anchors: readonly (Anchor | null)[], field: Field): Segment[] {
  const ranges = anchors
    .map((a, i) => ({ a, i }))
    .filter((r): r is { a: Anchor; i: number } => !!r.a && r.a.field === field && r.a.end > r.a.start)
    .sort((x, y) => x.a.start - y.a.start || x.i - y.i);
  const out: Segment[] = [];
  let at = 0;
  for (const { a, i } of ranges) {
    if (a.start < at) continue;
    if (a.start > at) out.push({ text: text.slice(at, a.start) });
    out.push({ text: text.slice(a.start, a.end), suggestion: i });
    at = a.end;
  }
  if (at < text.length || out.length === 0) out.push({ text: text.slice(at) });
  return out;
}

/** Proposal is a rewrite waiting for the user: the field's text before and after. */
export interface Proposal {
  field: Field;
  before: string;
  after: string;
}

/**
 * rewriteField is the field a rewrite changes: the anchored one, or for a
 * suggestion about the whole text, the note's content or the item's
 * description (its summary when it has no description).
 */
export function rewriteField(t: Target, a: Anchor | null): Field {
  if (a) return a.field;
  if (t.kind === 'note') return 'content';
  return t.item.description?.trim() ? 'description' : 'summary';
}

/** valueOf reads a field of the target. */
export function valueOf(t: Target, f: Field): string {
  return fieldsOf(t).find((x) => x.field === f)?.text ?? '';
}

/**
 * applyRewrite puts rewritten in the place of the anchored range, or in the
 * place of the whole field without an anchor (docs/ai.md: with
 * selectedText, `rewritten` replaces just that selection).
 */
export function applyRewrite(text: string, a: Anchor | null, rewritten: string): string {
  if (!a) return rewritten;
  return text.slice(0, a.start) + rewritten + text.slice(a.end);
}

/** withField is the target with one field changed (for a note: its content). */
export function withField(t: Target, f: Field, value: string): Target {
  if (t.kind === 'note') return { ...t, content: value };
  return { ...t, item: { ...t.item, [f]: value } };
}

/** analyse asks notes/analyze or tracker/analyze about the target. */
export async function analyse(t: Target, signal?: AbortSignal): Promise<Suggestion[]> {
  try {
    const body =
      t.kind === 'note'
        ? { boardId: t.boardId, noteId: t.noteId, title: t.title, content: t.content }
        : { boardId: t.boardId, item: wireItem(t.item), ...(t.parent ? { parent: wireItem(t.parent) } : {}) };
    const r = await aiJson<Analysis>(t.kind === 'note' ? 'notes/analyze' : 'tracker/analyze', body, { signal });
    return (Array.isArray(r?.suggestions) ? r.suggestions : []).map((s) => ({
      sectionText: typeof s.sectionText === 'string' ? s.sectionText : '',
      advice: typeof s.advice === 'string' ? s.advice : '',
      actions: Array.isArray(s.actions) ? s.actions.filter((x) => x && typeof x.instruction === 'string') : [],
    }));
  } finally {
    creditsChanged();
  }
}

/**
 * rewrite asks notes/rewrite or tracker/rewrite to carry out instruction on
 * the anchored text (or the whole field) and returns the proposal: the
 * field's text before and after.
 */
export async function rewrite(t: Target, a: Anchor | null, instruction: string, signal?: AbortSignal): Promise<Proposal> {
  const field = rewriteField(t, a);
  const before = valueOf(t, field);
  const selectedText = a ? before.slice(a.start, a.end) : undefined;
  try {
    const body =
      t.kind === 'note'
        ? { boardId: t.boardId, noteId: t.noteId, title: t.title, content: t.content, ...(selectedText ? { selectedText } : {}), instruction }
        : { boardId: t.boardId, item: wireItem(t.item), field, ...(selectedText ? { selectedText } : {}), instruction };
    const r = await aiJson<{ rewritten: string }>(t.kind === 'note' ? 'notes/rewrite' : 'tracker/rewrite', body, { signal });
    return { field, before, after: applyRewrite(before, a, typeof r?.rewritten === 'string' ? r.rewritten : '') };
  } finally {
    creditsChanged();
  }
}

/** wireItem is a work item as AI requests carry it (board.TrackerItem). */
function wireItem(i: TrackerItem) {
  return { id: i.id, key: i.key, type: i.type, summary: i.summary ?? '', description: i.description || undefined, status: i.status || undefined, parentId: i.parentId || undefined };
}
