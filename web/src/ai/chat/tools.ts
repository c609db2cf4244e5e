// The six board tools of chat and subagent (docs/ai.md, "The six board
// tools"), applied on this client: the server only checks the model's
// calls; what they change goes through the sync client like any edit, so it
// is pushed, seen live by everyone on the board and logged by the
// changelog. Plain TypeScript, no React: ChatPanel calls applyToolCall from
// useChat's onToolCall and sends the result back with addToolOutput.
import type { Note } from '../../api/types';
import { AI_MARK, aiMarkOf, type AiMark } from '../../canvas/aiMark';
import { NOTE_HEIGHT, NOTE_WIDTH } from '../../canvas/notes';
import type { StepRecorder, UndoHistory } from '../../canvas/undo';
import { classify, replacesMost, type Proposal } from './proposals';

/** The notes as the tools see them: a SyncClient fits. */
export interface NoteStore {
  getSnapshot(): { notes: ReadonlyMap<string, Note> };
  upsertNote(n: Note): Note;
  deleteNote(id: string): void;
  batch(fn: () => void): void;
}

/** One change the AI made, as the chat lists it. */
export interface AiChange {
  kind: 'created' | 'updated' | 'deleted';
  id: string;
  title: string;
}

/**
 * AiTurn is everything the AI changes between the user's message and the
 * end of the answer (tool calls, and the continuations that follow them):
 * one step of the board's undo history (UndoHistory.begin), so Undo
 * reverts the fields the turn changed, on top of what people did since, in
 * one batch (one push). After an undo, later changes of the same turn start
 * a new step.
 */
export class AiTurn {
  /** created holds the notes this turn made (they are not in the way of the next ones). */
  private readonly created = new Set<string>();
  private readonly rec: StepRecorder;
  private placed = 0;
  readonly changes: AiChange[] = [];

  constructor(
    private readonly store: NoteStore,
    undo: UndoHistory,
  ) {
    this.rec = undo.begin('AI changes');
  }

  /** nextSpot is where a note without a position goes: a column right of the board's notes. */
  nextSpot(): { x: number; y: number } {
    const notes = [...this.store.getSnapshot().notes.values()].filter((n) => !this.created.has(n.id));
    let maxX = -Infinity;
    let minY = Infinity;
    for (const n of notes) {
      if (!Number.isFinite(n.x) || !Number.isFinite(n.y)) continue;
      maxX = Math.max(maxX, n.x);
      minY = Math.min(minY, n.y);
    }
    const x = Number.isFinite(maxX) ? maxX + NOTE_WIDTH + 60 : 0;
    const y = (Number.isFinite(minY) ? minY : 0) + this.placed++ * (NOTE_HEIGHT + 24);
    return { x: Math.round(x), y: Math.round(y) };
  }

  create(n: Note): Note {
    this.created.add(n.id);
    const row = this.rec.upsertNote({ ...n, [AI_MARK]: 'created' satisfies AiMark });
    this.changes.push({ kind: 'created', id: row.id, title: row.title });
    return row;
  }

  update(n: Note): Note {
    const cur = this.store.getSnapshot().notes.get(n.id);
    // A note this turn (or an earlier AI turn) created stays "made by AI".
    const mark: AiMark = cur && aiMarkOf(cur) === 'created' ? 'created' : 'updated';
    const row = this.rec.upsertNote({ ...n, [AI_MARK]: mark });
    this.changes.push({ kind: 'updated', id: row.id, title: row.title });
    return row;
  }

  remove(id: string): void {
    const cur = this.store.getSnapshot().notes.get(id);
    this.rec.deleteNote(id);
    this.changes.push({ kind: 'deleted', id, title: cur?.title ?? '' });
  }
}

/** ToolCall is what useChat's onToolCall hands over (tool-input-available). */
export interface ToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** ToolResult is sent back with addToolOutput: an output, or an error text. */
export type ToolResult = { output: ToolOutput } | { errorText: string };

/** ToolOutput tells the model (and the chat) what happened. */
export interface ToolOutput {
  ok: true;
  /** message is the sentence the chat shows for the call. */
  message: string;
  id?: string;
  title?: string;
  summary?: string;
  /** kept: the person kept the note (a proposal they did not accept). */
  kept?: true;
}

/** ExpandNote runs note-ai on a note and resolves to its new title and content. */
export type ExpandNote = (note: Note, instruction: string, signal?: AbortSignal) => Promise<{ title: string; content: string }>;

export interface ToolContext {
  turn: AiTurn;
  store: NoteStore;
  canEdit: boolean;
  newId: () => string;
  expand: ExpandNote;
  signal?: AbortSignal;
  /**
   * propose shows a destructive change (proposals.ts) to the person and
   * answers whether they accept it; nothing of it is applied before. A
   * boolean answers at once (tests).
   */
  propose: (p: Proposal) => Promise<boolean> | boolean;
  /**
   * whyNot says why the person may not change a note (a lock, someone
   * else's note for "can add notes": docs/api.md "Locks and roles"), or
   * null; the call is then not applied and the model reads why. The
   * server refuses such a push anyway: this keeps the chat from showing a
   * change that will be undone.
   */
  whyNot?: (n: Note) => string | null;
}

/** keptResult tells the model (and the chat) that the person kept the note. */
function keptResult(p: Proposal): ToolResult {
  const what = p.kind === 'delete' ? 'deleted' : 'changed';
  return { output: { ok: true, kept: true, id: p.noteId, title: p.title, message: `The user kept the note ${quoted(p.title)} (id ${p.noteId}): it was not ${what}.` } };
}

/**
 * afterAnswer applies a proposal's change when the person accepts it
 * (apply re-reads the board: the note may have changed meanwhile), else
 * says it was kept.
 */
function afterAnswer(p: Proposal, answer: Promise<boolean> | boolean, apply: () => ToolResult | Promise<ToolResult>): ToolResult | Promise<ToolResult> {
  if (typeof answer === 'boolean') return answer ? apply() : keptResult(p);
  return answer.then((ok) => (ok ? apply() : keptResult(p)));
}

const COLORS = ['yellow', 'pink', 'blue', 'green', 'purple', 'orange', 'gray'];

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const quoted = (t: string) => `"${t || 'Untitled'}"`;

/** BOARD_TOOLS are the tools that change notes (the others only show something). */
const BOARD_TOOLS = new Set(['createNote', 'updateNote', 'deleteNote', 'createPlaceholderNote', 'expandNote']);

/**
 * applyToolCall carries out one call; a promise for expandNote, which
 * waits for note-ai, and for a destructive call (proposals.ts), which waits
 * for the person's answer (ctx.propose). Unknown tools and notes that are
 * gone are errors the model reads back.
 */
export function applyToolCall(call: ToolCall, ctx: ToolContext): ToolResult | Promise<ToolResult> {
  if (BOARD_TOOLS.has(call.toolName) && !ctx.canEdit) {
    return { errorText: 'The user can only view this board, so the change was not made.' };
  }
  // A note the person may not change is refused before anything is proposed (applyNow says why).
  const target = ctx.store.getSnapshot().notes.get(str((call.input as Record<string, unknown> | undefined)?.id) ?? '');
  if (target && ctx.whyNot?.(target)) return applyNow(call, ctx);
  // A destructive call waits for the person; accepted, it runs as any other.
  const proposal = classify(call, ctx.store.getSnapshot().notes);
  if (proposal) return afterAnswer(proposal, ctx.propose(proposal), () => applyNow(call, ctx));
  return applyNow(call, ctx);
}

/** applyNow carries out a call that needs no answer from the person, or got it. */
function applyNow(call: ToolCall, ctx: ToolContext): ToolResult | Promise<ToolResult> {
  const input = (call.input ?? {}) as Record<string, unknown>;
  if (BOARD_TOOLS.has(call.toolName) && !ctx.canEdit) {
    return { errorText: 'The user can only view this board, so the change was not made.' };
  }
  const notes = ctx.store.getSnapshot().notes;
  const existing = (): Note | ToolResult => {
    const id = str(input.id) ?? '';
    return notes.get(id) ?? { errorText: `There is no note with id "${id}" on the board (any more).` };
  };
  const isNote = (v: Note | ToolResult): v is Note => 'id' in v;
  if (call.toolName === 'updateNote' || call.toolName === 'deleteNote' || call.toolName === 'expandNote') {
    const cur = existing();
    const why = isNote(cur) ? ctx.whyNot?.(cur) : null;
    if (why && isNote(cur)) return { errorText: `The note ${quoted(cur.title)} (id ${cur.id}) was not changed: ${why}` };
  }

  switch (call.toolName) {
    case 'createNote':
    case 'createPlaceholderNote': {
      const placeholder = call.toolName === 'createPlaceholderNote';
      const title = str(input.title) ?? '';
      const hint = str(input.hint);
      const content = placeholder ? (hint ? `_To fill in:_ ${hint}` : '_To fill in._') : (str(input.content) ?? '');
      const color = str(input.color);
      const at = num(input.x) !== undefined && num(input.y) !== undefined ? { x: Math.round(num(input.x)!), y: Math.round(num(input.y)!) } : ctx.turn.nextSpot();
      const row = ctx.turn.create({
        id: ctx.newId(),
        title,
        content,
        x: at.x,
        y: at.y,
        color: color && COLORS.includes(color) ? color : placeholder ? 'gray' : 'yellow',
        type: str(input.type) ?? 'sticky',
        updatedAt: '',
      });
      return { output: { ok: true, id: row.id, title: row.title, message: `Created ${placeholder ? 'the placeholder note' : 'the note'} ${quoted(row.title)} (id ${row.id}).` } };
    }
    case 'updateNote': {
      const cur = existing();
      if (!isNote(cur)) return cur;
      const next: Note = { ...cur };
      const changed: string[] = [];
      for (const k of ['title', 'content', 'color', 'type'] as const) {
        const v = str(input[k]);
        if (v === undefined || (k === 'color' && !COLORS.includes(v))) continue;
        next[k] = v;
        changed.push(k);
      }
      if (!changed.length) return { errorText: 'Nothing to change: give at least one of title, content, color, type.' };
      const row = ctx.turn.update(next);
      return { output: { ok: true, id: row.id, title: row.title, message: `Updated the ${changed.join(', ')} of the note ${quoted(row.title)} (id ${row.id}).` } };
    }
    case 'deleteNote': {
      const cur = existing();
      if (!isNote(cur)) return cur;
      ctx.turn.remove(cur.id);
      return { output: { ok: true, id: cur.id, title: cur.title, message: `Deleted the note ${quoted(cur.title)} (id ${cur.id}).` } };
    }
    case 'summarizeBoard': {
      const summary = str(input.summary) ?? '';
      return { output: { ok: true, summary, message: 'The summary is shown to the user.' } };
    }
    case 'expandNote': {
      const cur = existing();
      if (!isNote(cur)) return cur;
      const instruction = str(input.instruction) ?? '';
      return ctx.expand(cur, instruction, ctx.signal).then(
        (r) => {
          // The note may have changed while note-ai wrote: keep its other fields as they are now.
          const now = ctx.store.getSnapshot().notes.get(cur.id);
          if (!now) return { errorText: `The note "${cur.title}" was deleted while it was being expanded.` };
          const write = (): ToolResult => {
            const latest = ctx.store.getSnapshot().notes.get(cur.id);
            if (!latest) return { errorText: `The note "${cur.title}" was deleted meanwhile.` };
            const row = ctx.turn.update({ ...latest, title: r.title || latest.title, content: r.content });
            return { output: { ok: true, id: row.id, title: row.title, message: `Expanded the note ${quoted(row.title)} (id ${row.id}).` } };
          };
          // An expansion that rewrites most of the note is a proposal too.
          if (!replacesMost(now.content, r.content)) return write();
          const p: Proposal = { toolCallId: call.toolCallId, kind: 'replace', noteId: now.id, title: now.title, removed: 1 };
          return afterAnswer(p, ctx.propose(p), write);
        },
        (e: unknown) => ({ errorText: `The note could not be expanded: ${e instanceof Error ? e.message : String(e)}` }),
      );
    }
    default:
      return { errorText: `There is no tool called "${call.toolName}".` };
  }
}
