// An AI draft of a note: "Ask AI" (note-ai) or a slash command
// (note-ai/<command>) streamed into a preview the user accepts or rejects
// (docs/web-client.md, "Ask AI and slash commands"). Plain TypeScript: the
// panel renders the DraftState that streamDraft reports.
import { aiJson, aiText, parseNoteAnswer, AiError } from '../api/ai';
import type { Note } from '../api/types';
import { boardNote, cut, MAX_CONTEXT_NOTES, type BoardNote } from './boardContext';
import { creditsChanged } from './credits';

/** What the draft was asked for. */
export type DraftSource = { kind: 'ask'; prompt: string } | { kind: 'command'; command: string };

/** The note and board a draft is written for. */
export interface DraftContext {
  boardId: string;
  noteId: string;
  title: string;
  content: string;
  allNotes: readonly Note[];
}

/**
 * DraftState is the panel's state. streaming: text is what arrived so far.
 * done: the answer is complete. stopped: the user stopped it. failed: error
 * says why; text keeps what arrived before a cut.
 */
export type DraftState =
  | { phase: 'streaming'; text: string }
  | { phase: 'done'; text: string }
  | { phase: 'stopped'; text: string }
  | { phase: 'failed'; text: string; error: unknown };

const MAX_NOTE_CONTENT = 30_000;

/**
 * CONTEXT_BUDGET bounds the code points of note contents sent as context:
 * the routes read at most 8 MiB, a code point is up to 3 bytes of JSON
 * here (JSON.stringify escapes no letters), and the model sees only a
 * budget of the board anyway (docs/ai.md: clients may trim contents of
 * very large boards).
 */
export const CONTEXT_BUDGET = 2_000_000;
/** The most of one context note sent: what note-ai's readNote tool returns of a note. */
const CONTEXT_NOTE_MAX = 12_000;

/**
 * contextNotes is the board as context: at most 2,000 notes, each content
 * cut to an equal share of CONTEXT_BUDGET (at most 12,000 code points).
 */
export function contextNotes(notes: readonly Note[]): BoardNote[] {
  const some = notes.slice(0, MAX_CONTEXT_NOTES);
  const share = Math.min(CONTEXT_NOTE_MAX, Math.floor(CONTEXT_BUDGET / Math.max(some.length, 1)));
  return some.map((n) => boardNote(n, share));
}

/** draftPath is the route a source asks. */
export function draftPath(source: DraftSource): string {
  return source.kind === 'ask' ? 'note-ai' : `note-ai/${encodeURIComponent(source.command)}`;
}

/** draftBody is the NoteAIRequest for source (docs/ai.md, "note-ai"). */
export function draftBody(source: DraftSource, ctx: DraftContext) {
  return {
    boardId: ctx.boardId,
    noteId: ctx.noteId,
    ...(source.kind === 'ask' ? { prompt: source.prompt } : {}),
    noteTitle: ctx.title,
    noteContent: cut(ctx.content, MAX_NOTE_CONTENT),
    allNotes: contextNotes(ctx.allNotes),
  };
}

/**
 * streamDraft runs one draft, reporting each state to onState, and resolves
 * to the last one; it never rejects. An abort through signal is "stopped"
 * with what had arrived. The credits are read again afterwards, whatever
 * happened.
 */
export async function streamDraft(source: DraftSource, ctx: DraftContext, onState: (s: DraftState) => void, signal: AbortSignal): Promise<DraftState> {
  let text = '';
  let last: DraftState = { phase: 'streaming', text };
  const report = (s: DraftState) => {
    last = s;
    onState(s);
  };
  report(last);
  try {
    const full = await aiText(
      draftPath(source),
      draftBody(source, ctx),
      (soFar) => {
        // After Stop, what was shown is what is kept.
        if (signal.aborted) return;
        text = soFar;
        report({ phase: 'streaming', text });
      },
      { signal },
    );
    report(signal.aborted ? { phase: 'stopped', text } : { phase: 'done', text: full });
  } catch (e) {
    if (signal.aborted) report({ phase: 'stopped', text });
    else report({ phase: 'failed', text: e instanceof AiError && e.partial ? e.partial : text, error: e });
  } finally {
    creditsChanged();
  }
  return last;
}

/**
 * expandNote is the chat's expandNote tool: the same note-ai request as
 * "Ask AI" in the editor, with onText told the text so far, resolving to
 * the answer's title and body. The credits are read again afterwards.
 */
export async function expandNote(boardId: string, note: Note, prompt: string, allNotes: readonly Note[], onText: (soFar: string) => void, signal?: AbortSignal): Promise<DraftNote> {
  const ctx: DraftContext = { boardId, noteId: note.id, title: note.title, content: note.content, allNotes };
  try {
    const a = parseNoteAnswer(await aiText('note-ai', draftBody({ kind: 'ask', prompt }, ctx), onText, { signal }));
    return { title: a.title, content: a.body };
  } finally {
    creditsChanged();
  }
}

/** A draft as it would be saved. */
export interface DraftNote {
  title: string;
  content: string;
}

/**
 * draftNote is what accepting text saves: the answer's title (the note's
 * own when the answer has none yet) and its body. A draft with no body is
 * nothing to accept.
 */
export function draftNote(text: string, currentTitle: string): DraftNote | null {
  const a = parseNoteAnswer(text);
  const content = a.body.replace(/^\n+/, '').replace(/\s+$/, '');
  if (!content) return null;
  return { title: (a.title || currentTitle).slice(0, 1000), content };
}

/** Frontmatter is the generate-frontmatter answer (docs/ai.md). */
export interface Frontmatter {
  description: string;
  relationships: { noteId: string; title: string; type: string; reason: string }[];
}

/**
 * fetchFrontmatter asks generate-frontmatter about an accepted draft. The
 * caller does not wait for it (spec): it resolves to undefined on any
 * failure, which is only a missed hint.
 */
export async function fetchFrontmatter(ctx: DraftContext, note: DraftNote): Promise<Frontmatter | undefined> {
  try {
    const f = await aiJson<Frontmatter>('generate-frontmatter', {
      boardId: ctx.boardId,
      noteId: ctx.noteId,
      title: note.title,
      content: cut(note.content, MAX_NOTE_CONTENT),
      allNotes: contextNotes(ctx.allNotes.filter((n) => n.id !== ctx.noteId)),
    });
    return f && typeof f.description === 'string' ? { description: f.description, relationships: Array.isArray(f.relationships) ? f.relationships : [] } : undefined;
  } catch {
    return undefined;
  } finally {
    creditsChanged();
  }
}
