// The editor layer under the canvas (docs/web-client.md, "The editor
// layer"), as tldraw's Editor sits under its components: every intent of
// the canvas (create, move, resize, delete, select, focus, edit in place,
// undo and redo, paste, search jumps, tools and the keymap) is a method
// here; React components render the snapshot and forward events. Plain
// TypeScript: the store is anything with a SyncClient's edit methods, the
// view is a small interface the canvas implements over xyflow.
import type { Connector, Frame, Note, Role } from '../api/types';
import { randomId } from '../boards/ids';
import { COLORS, newNote } from '../canvas/notes';
import { UndoHistory, type UndoResult, type UndoStore } from '../canvas/undo';
import { edit, follow, openEditor, toSave, touched, type EditorField, type EditorState } from '../canvas/editorState';
import { clampSize, freeSpot, freeSpots, nearestBox, rectOf, sizeOf, type Direction, type Rect, type Size, type XY } from './geometry';
import { bindingFor, type Action, type KeyLike } from './keymap';
import { parsePaste } from './paste';
import { MAX_FRAME_TITLE, MAX_LABEL, clampFrame, describeConnector, drawable, frameAround, frameHead, frameRect, innerFrames, members, nextFrameTitle, touching, FRAME_H, FRAME_W } from './structure';

/** EditorView is what the editor asks of the canvas on screen. */
export interface EditorView {
  /** visible is the part of the board in view, in board coordinates. */
  visible(): Rect;
  /** reveal pans (and zooms in to a readable size) so that r is in the middle of the view. */
  reveal(r: Rect): void;
  /** show reveals r only when it is not wholly in view or too small to read (the view does not move for nothing). */
  show(r: Rect): void;
  /** focusNote gives the keyboard focus to a note's (or a frame's) element once it is drawn. */
  focusNote(id: string): void;
  /** pan moves the view by screen pixels. */
  pan(dx: number, dy: number): void;
  zoomIn(): void;
  zoomOut(): void;
  fit(): void;
  /** fitRect zooms and pans so that r fills the view ("zoom to frame"). */
  fitRect(r: Rect): void;
}

/** Tool is what a click on the empty canvas does: select (clear the selection) or put a note there. */
export type Tool = 'select' | 'note' | 'connect';

/** Panel is the editor's panel on screen: search, the shortcuts, the board's outline, or none. */
export type Panel = 'search' | 'shortcuts' | 'outline' | null;

/** Naming is a connector's label or a frame's title being typed on the canvas. */
export interface Naming {
  kind: 'connector' | 'frame';
  id: string;
}

/** ConnectorPatch is what restyling or relabelling a connector changes. */
export type ConnectorPatch = Partial<Pick<Connector, 'label' | 'style' | 'dash' | 'color'>>;

/** FramePatch is what renaming, colouring or locking a frame changes. */
export type FramePatch = Partial<Pick<Frame, 'title' | 'color' | 'locked'>>;

/** Editing is the note being edited: in place on the canvas or in the full editor; draft: not created yet. */
export interface Editing {
  id: string;
  mode: 'inplace' | 'full';
  draft: boolean;
}

/** Asking is a question waiting for the person: an undo that would delete others' work, or typed text to discard. */
export type Asking = { kind: 'undo'; dir: 'undo' | 'redo'; result: Extract<UndoResult, { kind: 'confirm' }> } | { kind: 'discard' };

/** NoteMenu is the menu open for one note: at a screen point (a right-click, a long-press) or, from the keyboard, at the note itself (at: null). */
export interface NoteMenu {
  id: string;
  at: XY | null;
}

/** MenuCommand is what an entry of the note menu does (a colour is chooseColour's). */
export type MenuCommand = 'inplace' | 'full' | 'duplicate' | 'history' | 'delete' | 'lock' | 'unlock';

/** MenuEntry is one action of the note menu as the menu lists it. */
export interface MenuEntry {
  command: MenuCommand;
  label: string;
}

/** NoteMenuModel is what the note menu shows: its actions, and the colours to choose from (none for a viewer). */
export interface NoteMenuModel {
  entries: MenuEntry[];
  colours: string[];
  colour: string;
  /** reason: why the person may not change the note (a lock, someone else's), shown in the menu; null when they may. */
  reason?: string | null;
}

/** EditorSnapshot is what the canvas renders; a new object whenever anything in it changes. */
export interface EditorSnapshot {
  selected: ReadonlySet<string>;
  /** focused is the canvas's one tab stop: the note arrows move from. */
  focused: string | null;
  editing: Editing | null;
  /** draft is a new note not saved yet: drawn on the canvas, never pushed unless saved with text. */
  draft: Note | null;
  tool: Tool;
  /** highlight is a note a search jumped to, lit for a moment. */
  highlight: string | null;
  panel: Panel;
  /** moving are notes being dragged (positions not committed yet). */
  moving: ReadonlyMap<string, XY>;
  /** sizing are notes being resized by their handle (sizes not committed yet). */
  sizing: ReadonlyMap<string, Size>;
  asking: Asking | null;
  /** menu is the note menu, when open. */
  menu: NoteMenu | null;
  /** naming is the connector label or frame title being typed. */
  naming: Naming | null;
  /** connectFrom is where the connect tool's arrow starts: the next note or frame selected is its end. */
  connectFrom: string | null;
  canEdit: boolean;
  /** refused is the last change of a note or frame the person may not make, and why (shown on it until another is selected). */
  refused: { id: string; message: string } | null;
}

/** Rights are who the person is to the board, for locks and roles (docs/api.md, "Locks and roles"). */
export interface Rights {
  isOwner: boolean;
  /** role: the person's effective role (the owner's is edit). */
  role: Role;
  /** me: their e-mail, to tell their own notes (createdBy). */
  me: string;
}

/**
 * noteReason says why a person with rights r may not change note n (a
 * lock; for a "can add notes" invitee, a note they did not create: one
 * without createdBy is the owner's), or null when they may.
 */
export function noteReason(n: Note, r: Rights): string | null {
  if (r.isOwner) return null;
  if (n.locked) return LOCKED_REASON;
  if (r.role === 'add' && n.createdBy !== r.me) return NOT_YOURS_REASON;
  return null;
}

/** The reasons the editor gives (the server's words are in docs/api.md). */
export const LOCKED_REASON = "Locked by the board's owner.";
export const NOT_YOURS_REASON = 'Added by someone else: you can add notes and edit only your own.';
export const NOT_NOTES_REASON = 'You can add notes and edit your own; frames and connectors are for editors.';

/** EditorOptions are what an Editor works with. */
export interface EditorOptions {
  store: UndoStore;
  /** undo is the board's undo history (shared with the panels); the editor makes one when not given. */
  undo?: UndoHistory;
  /** announce says something in the board's live region. */
  announce?: (msg: string) => void;
  newId?: () => string;
  /** openHistory shows a note's history (the note menu's History). */
  openHistory?: (id: string) => void;
  setTimeout?: (cb: () => void, ms: number) => unknown;
  clearTimeout?: (h: unknown) => void;
}

/** HIGHLIGHT_MS is how long a note a search jumped to stays lit. */
export const HIGHLIGHT_MS = 2000;
/** NUDGE and NUDGE_FAR are what Alt+arrows (and Alt+Shift+arrows) move; RESIZE_STEP what Shift+arrows resize. */
export const NUDGE = 10;
export const NUDGE_FAR = 50;
export const RESIZE_STEP = 10;
/** LONG_PRESS_MS is how long a finger rests on a note, without moving, to open its menu. */
export const LONG_PRESS_MS = 500;
/** LONG_PRESS_SLOP is how far (screen px) the finger may wander before it is a drag, not a press. */
export const LONG_PRESS_SLOP = 10;
/** DOUBLE_TAP_MS is the longest time between two taps on a note that edit it. */
export const DOUBLE_TAP_MS = 350;

const NO_VIEW: EditorView = {
  visible: () => ({ x: 0, y: 0, w: 0, h: 0 }),
  reveal: () => {},
  show: () => {},
  focusNote: () => {},
  pan: () => {},
  zoomIn: () => {},
  zoomOut: () => {},
  fit: () => {},
  fitRect: () => {},
};

const EMPTY_SET: ReadonlySet<string> = new Set();
const EMPTY_MAP = new Map<string, never>();
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const DIRS: Record<string, Direction> = { ArrowLeft: 'left', ArrowRight: 'right', ArrowUp: 'up', ArrowDown: 'down' };

/**
 * Editor owns the canvas's intents. Listeners are onChange(cb) (the
 * snapshot) and onEditChange(cb) (the text being typed in place, so that
 * typing re-renders the in-place editor alone), each returning an
 * unsubscribe function.
 */
export class Editor {
  readonly undoHistory: UndoHistory;
  private readonly store: UndoStore;
  private readonly announce: (msg: string) => void;
  private readonly newId: () => string;
  private readonly setTimer: (cb: () => void, ms: number) => unknown;
  private readonly clearTimer: (h: unknown) => void;
  private view: EditorView = NO_VIEW;
  private snap: EditorSnapshot = { selected: EMPTY_SET, focused: null, editing: null, draft: null, tool: 'select', highlight: null, panel: null, moving: EMPTY_MAP, sizing: EMPTY_MAP, asking: null, menu: null, naming: null, connectFrom: null, canEdit: true, refused: null };
  private editState: EditorState | null = null;
  private readonly cbs = new Set<() => void>();
  private readonly editCbs = new Set<() => void>();
  private highlightTimer: unknown = null;
  private readonly openHistory: (id: string) => void;
  private press: { id: string; at: XY; timer: unknown; fired: boolean; moved: boolean } | null = null;
  /** cycle is the connector L selected last and the note or frame it was reached from. */
  private cycle: { anchor: string; connector: string } | null = null;
  /** lastTap is the last plain tap on a note, the first half of a double tap. */
  private lastTap: { id: string; t: number } | null = null;

  constructor(o: EditorOptions) {
    this.store = o.store;
    this.undoHistory = o.undo ?? new UndoHistory(o.store);
    this.announce = o.announce ?? (() => {});
    this.newId = o.newId ?? randomId;
    this.openHistory = o.openHistory ?? (() => {});
    this.setTimer = o.setTimeout ?? ((cb, ms) => setTimeout(cb, ms));
    this.clearTimer = o.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  }

  // --- subscriptions -------------------------------------------------------

  /** getSnapshot is the editor's state now (the same object until it changes). */
  getSnapshot = (): EditorSnapshot => this.snap;

  /** onChange tells cb when the snapshot changes; returns the unsubscribe. */
  onChange = (cb: () => void): (() => void) => {
    this.cbs.add(cb);
    return () => this.cbs.delete(cb);
  };

  /** getEdit is the in-place editor's fields, or null when nothing is edited in place. */
  getEdit = (): EditorState | null => this.editState;

  /** onEditChange tells cb when the in-place editor's fields change. */
  onEditChange = (cb: () => void): (() => void) => {
    this.editCbs.add(cb);
    return () => this.editCbs.delete(cb);
  };

  private set(patch: Partial<EditorSnapshot>) {
    this.snap = { ...this.snap, ...patch };
    this.cbs.forEach((cb) => cb());
  }

  private setEdit(s: EditorState | null) {
    if (s === this.editState) return;
    this.editState = s;
    this.editCbs.forEach((cb) => cb());
  }

  /** setView connects the canvas on screen (NO_VIEW until it is drawn). */
  setView(v: EditorView | null): void {
    this.view = v ?? NO_VIEW;
  }

  /**
   * setCanEdit says whether the person may edit. An edit in place when the
   * right goes (a plan change) moves to the full editor, read only, with
   * what was typed, so that it can still be copied; with nothing typed it
   * just stops.
   */
  setCanEdit(canEdit: boolean): void {
    if (canEdit === this.snap.canEdit) return;
    const ed = this.snap.editing;
    if (!canEdit && ed?.mode === 'inplace') {
      if (this.dirty) this.set({ editing: { ...ed, mode: 'full' } });
      else this.closeEdit();
    }
    this.set({ canEdit, tool: canEdit ? this.snap.tool : 'select' });
  }

  private rights: Rights = { isOwner: true, role: 'edit', me: '' };

  /** setRights says who the person is to the board (owner, role, e-mail): what locks and roles let them change. */
  setRights(r: Rights): void {
    if (r.isOwner === this.rights.isOwner && r.role === this.rights.role && r.me === this.rights.me) return;
    this.rights = r;
    this.set({ refused: null });
  }

  /** isOwner: the person owns the board (locks are theirs). */
  get owner(): boolean {
    return this.rights.isOwner;
  }

  /**
   * whyNot says why the person may not change the note or frame id (a
   * lock, or for a "can add notes" invitee someone else's note, or a
   * frame), or null when they may. A note without createdBy is the
   * owner's. Whether they may edit at all is canEdit's.
   */
  whyNot(id: string): string | null {
    const r = this.rights;
    if (r.isOwner) return null;
    const n = this.notes().get(id);
    if (n) return noteReason(n, r);
    if (this.snap.draft?.id === id) return null;
    const f = this.frames().get(id);
    if (f?.locked) return LOCKED_REASON;
    if (r.role === 'add' && (f || this.connectors().has(id))) return NOT_NOTES_REASON;
    return null;
  }

  /** refuse tells, on the note or frame and aloud, why a change of it was not made; true when it was refused. */
  refuse(id: string): boolean {
    const why = this.whyNot(id);
    if (!why) return false;
    if (this.snap.refused?.id !== id || this.snap.refused.message !== why) this.set({ refused: { id, message: why } });
    this.announce(why);
    return true;
  }

  /** may filters ids down to what the person may change, telling why about the first refused. */
  private may(ids: string[]): string[] {
    const ok = ids.filter((id) => !this.whyNot(id));
    if (ok.length < ids.length) this.refuse(ids.find((id) => this.whyNot(id))!);
    return ok;
  }

  /** setLocked locks or unlocks a note (the owner only): one push, one undo step. */
  setLocked(id: string, locked: boolean): void {
    const n = this.notes().get(id);
    if (!n || !this.snap.canEdit || !this.rights.isOwner || !!n.locked === locked) return;
    const next: Note = { ...n, locked };
    if (!locked) delete next.locked;
    this.undoHistory.transact(locked ? 'lock' : 'unlock', (r) => r.upsertNote(next, n));
    this.announce(locked ? `${n.title || 'Note'} locked: only you can change it.` : `${n.title || 'Note'} unlocked.`);
  }

  /** dispose stops the highlight and long-press timers. */
  dispose(): void {
    if (this.highlightTimer !== null) this.clearTimer(this.highlightTimer);
    this.highlightTimer = null;
    this.pressCancel();
  }

  // --- the board ------------------------------------------------------------

  private notes(): ReadonlyMap<string, Note> {
    return this.store.getSnapshot().notes;
  }

  /** note is a note as it is now, or the draft. */
  note(id: string): Note | undefined {
    return this.notes().get(id) ?? (this.snap.draft?.id === id ? this.snap.draft : undefined);
  }

  private rects(): Rect[] {
    const out: Rect[] = [];
    for (const n of this.notes().values()) out.push(rectOf(n));
    if (this.snap.draft) out.push(rectOf(this.snap.draft));
    return out;
  }

  private centre(): XY {
    const v = this.view.visible();
    return { x: v.x + v.w / 2, y: v.y + v.h / 2 };
  }

  /** notesChanged follows the note edited in place when someone else changes it, and drops what was deleted from the selection. */
  notesChanged(): void {
    const notes = this.notes();
    const ed = this.snap.editing;
    if (ed && !ed.draft && this.editState) {
      const now = notes.get(ed.id);
      if (now) this.setEdit(follow(this.editState, now));
      else if (ed.mode === 'inplace') {
        // Deleted by someone else while edited in place: the full editor says so, and keeps what was typed.
        this.set({ editing: { ...ed, mode: 'full' } });
      }
    }
    const { connectors, frames } = this.store.getSnapshot();
    const gone = [...this.snap.selected].filter((id) => !notes.has(id) && !frames.has(id) && !connectors.has(id) && id !== this.snap.draft?.id);
    if (gone.length) this.set({ selected: new Set([...this.snap.selected].filter((id) => !gone.includes(id))) });
    // A menu for a note someone else deleted has nothing left to act on.
    if (this.snap.menu && !notes.has(this.snap.menu.id)) this.set({ menu: null });
    const nm = this.snap.naming;
    if (nm && !(nm.kind === 'frame' ? frames : connectors).has(nm.id)) this.set({ naming: null });
  }

  // --- selection and focus -------------------------------------------------

  /** select selects a note (additive: added to the selection) and makes it the tab stop. */
  select(id: string, additive = false): void {
    if (this.connectTo(id)) return;
    const selected = additive ? new Set([...this.snap.selected, id]) : new Set([id]);
    this.set({ selected, focused: id, ...(this.snap.refused && this.snap.refused.id !== id ? { refused: null } : {}) });
  }

  /** setSelection takes a selection made on the canvas (a click, a drag box); unchanged sets are ignored. */
  setSelection(ids: Iterable<string>): void {
    const next = new Set(ids);
    if (next.size === 1 && this.connectTo([...next][0])) return;
    const cur = this.snap.selected;
    if (next.size === cur.size && [...next].every((id) => cur.has(id))) return;
    this.set({ selected: next, focused: next.size === 1 ? [...next][0] : this.snap.focused });
  }

  /** clearSelection selects nothing (the tab stop stays where it was). */
  clearSelection(): void {
    if (this.snap.selected.size) this.set({ selected: EMPTY_SET });
  }

  /** focus selects a note or a frame, brings it into view and gives it the keyboard focus. */
  focus(id: string): void {
    const n = this.note(id);
    const f = n ? undefined : this.frames().get(id);
    if (!n && !f) return;
    this.select(id);
    this.view.show(n ? rectOf(n) : frameHead(f!));
    this.view.focusNote(id);
  }

  /** boxOf is where the arrow keys see a note (its box) or a frame (its title bar). */
  private boxOf(id: string): Rect | null {
    const n = this.note(id);
    if (n) return rectOf(n);
    const f = this.frames().get(id);
    return f ? frameHead(f) : null;
  }

  /**
   * focusToward moves the focus to the nearest note or frame in a
   * direction; false when there is none. From a connector reached with L
   * it starts at the note it was reached from.
   */
  focusToward(dir: Direction): boolean {
    const sel = this.snap.selected;
    let fromId = this.snap.focused && sel.has(this.snap.focused) ? this.snap.focused : [...sel][0];
    if (fromId && this.connectors().has(fromId) && this.cycle?.connector === fromId) fromId = this.cycle.anchor;
    const from = fromId ? this.boxOf(fromId) : null;
    if (!from) return false;
    const boxes: { id: string; r: Rect }[] = [];
    for (const n of this.notes().values()) boxes.push({ id: n.id, r: rectOf(n) });
    for (const f of this.frames().values()) boxes.push({ id: f.id, r: frameHead(f) });
    const next = nearestBox(from, dir, boxes, fromId);
    if (!next) {
      this.announce(`No note or frame ${dir === 'up' ? 'above' : dir === 'down' ? 'below' : `to the ${dir}`}.`);
      return false;
    }
    this.focus(next);
    return true;
  }

  /**
   * cycleConnectors selects the connectors of the selected note or frame
   * one after another (back: the other way round), in the order of their
   * other ends on the board, top to bottom; from a connector it reached,
   * it goes on to the next. The keyboard's way to a connector: then Enter
   * relabels it, Delete removes it, Escape goes back to the note.
   */
  cycleConnectors(back = false): boolean {
    const sel = [...this.snap.selected];
    const c = this.cycle;
    const anchor = sel.length === 1 && c && c.connector === sel[0] && this.exists(c.anchor) ? c.anchor : sel.length === 1 && this.exists(sel[0]) ? sel[0] : null;
    if (!anchor) {
      this.announce('Select a note or a frame first: L goes through its connectors.');
      return false;
    }
    const notes = this.notes();
    const frames = this.frames();
    const name = (id: string) => notes.get(id)?.title || frames.get(id)?.title || 'untitled';
    const list = touching(new Set([anchor]), this.connectors().values()).filter((x) => drawable(x, notes, frames));
    if (!list.length) {
      this.announce(`${name(anchor)} has no connectors.`);
      return true;
    }
    const other = (x: Connector) => this.boxOf(x.from === anchor ? x.to : x.from)!;
    list.sort((a, b) => other(a).y - other(b).y || other(a).x - other(b).x || (a.id < b.id ? -1 : 1));
    const at = list.findIndex((x) => x.id === sel[0]);
    const i = at < 0 ? (back ? list.length - 1 : 0) : (at + (back ? list.length - 1 : 1)) % list.length;
    const pick = list[i];
    this.cycle = { anchor, connector: pick.id };
    this.set({ selected: new Set([pick.id]), focused: anchor });
    const ends = [this.boxOf(pick.from)!, this.boxOf(pick.to)!];
    const box = { x: Math.min(ends[0].x, ends[1].x), y: Math.min(ends[0].y, ends[1].y), w: 0, h: 0 };
    box.w = Math.max(ends[0].x + ends[0].w, ends[1].x + ends[1].w) - box.x;
    box.h = Math.max(ends[0].y + ends[0].h, ends[1].y + ends[1].h) - box.y;
    this.view.show(box);
    this.announce(`Connector ${i + 1} of ${list.length}: ${describeConnector(pick, name)}. Enter relabels it, Delete removes it, Escape goes back to ${name(anchor)}.`);
    return true;
  }

  /** cycledFrom is the note or frame the selected connector was reached from with L, if it was. */
  private cycledFrom(): string | null {
    const c = this.cycle;
    const sel = this.snap.selected;
    return c && sel.size === 1 && sel.has(c.connector) && this.exists(c.anchor) ? c.anchor : null;
  }

  // --- creating and editing ------------------------------------------------

  /**
   * createNote starts a new note at the free spot nearest `at` (default:
   * the centre of the view) and edits it in place. It is a draft until
   * saved with some text: cancelled, it leaves nothing behind.
   */
  createNote(at?: XY): string | null {
    if (!this.snap.canEdit) return null;
    if (this.snap.editing) this.commitEdit();
    const id = this.newId();
    const p = freeSpot(this.rects(), at ?? this.centre());
    const draft = newNote(id, p.x, p.y);
    this.set({ draft, selected: new Set([id]), focused: id, editing: { id, mode: 'inplace', draft: true }, tool: 'select' });
    this.setEdit(openEditor(draft));
    this.view.show(rectOf(draft));
    this.announce('New note. Type its title; Tab to the content; Ctrl+Enter saves, Escape cancels.');
    return id;
  }

  /** startEdit edits a note in place (or in the full editor). */
  startEdit(id: string, mode: Editing['mode'] = 'inplace'): void {
    const n = this.note(id);
    if (!n) return;
    const ed = this.snap.editing;
    if (ed && ed.id === id) {
      if (ed.mode !== mode) this.set({ editing: { ...ed, mode } });
      return;
    }
    if (ed) this.commitEdit();
    // A viewer reads in the full editor (read only): in place there is nothing to do. So does
    // anyone on a note they may not change (a lock, someone else's), told why.
    const m = this.snap.canEdit && !this.refuse(id) ? mode : 'full';
    this.set({ editing: { id, mode: m, draft: false }, selected: new Set([id]), focused: id });
    this.setEdit(openEditor(n));
    if (m === 'inplace') this.view.show(rectOf(n));
  }

  /** type puts what the person typed into a field of the note edited in place. */
  type(field: EditorField, value: string): void {
    if (this.editState) this.setEdit(edit(this.editState, field, value));
  }

  /** dirty says whether the note being edited has unsaved text. */
  get dirty(): boolean {
    return !!this.editState && touched(this.editState).length > 0;
  }

  /**
   * commitEdit saves the note edited in place (only the fields typed in, on
   * the note as it was when editing began, so others' lines are merged) and
   * stops editing. A draft with nothing typed is dropped.
   */
  commitEdit(): void {
    const ed = this.snap.editing;
    if (!ed) return;
    const out = this.editState && this.snap.canEdit && !(this.snap.editing && this.whyNot(this.snap.editing.id)) ? toSave(this.editState) : null;
    if (out) {
      if (ed.draft) this.undoHistory.transact('new note', (r) => r.upsertNote(out.row));
      else this.undoHistory.transact('edit', (r) => r.upsertNote(out.row, out.base));
      if (ed.draft) this.announce('Note created.');
    }
    this.closeEdit();
  }

  /** cancelEdit stops editing, asking first when typed text would be lost. */
  cancelEdit(): void {
    if (!this.snap.editing) return;
    if (this.dirty && this.snap.canEdit) this.set({ asking: { kind: 'discard' } });
    else this.closeEdit();
  }

  /** discardEdit answers "discard" to the question: the typed text goes, a draft with it. */
  discardEdit(): void {
    this.set({ asking: null });
    this.closeEdit();
  }

  /** keepEditing answers "keep editing" to the question. */
  keepEditing(): void {
    this.set({ asking: null });
  }

  /** closeEdit stops editing without saving; a draft goes, and the focus returns to the note. */
  closeEdit(): void {
    const ed = this.snap.editing;
    if (!ed) return;
    const draftId = this.snap.draft?.id;
    const created = draftId !== undefined && this.notes().has(draftId);
    const selected = draftId !== undefined && !created ? new Set([...this.snap.selected].filter((id) => id !== draftId)) : this.snap.selected;
    this.set({ editing: null, draft: null, selected, asking: this.snap.asking?.kind === 'discard' ? null : this.snap.asking, focused: this.notes().has(ed.id) ? ed.id : this.snap.focused === ed.id ? null : this.snap.focused });
    this.setEdit(null);
    if (this.notes().has(ed.id)) this.view.focusNote(ed.id);
  }

  /**
   * openFull opens a note (default: the one edited in place, else the
   * first selected) in the full editor; what was typed in place goes with it.
   */
  openFull(id?: string): void {
    const target = id ?? this.snap.editing?.id ?? [...this.snap.selected][0];
    if (!target) return;
    this.startEdit(target, 'full');
  }

  /**
   * saveFull is the full editor's Save: a draft becomes a note (one undo
   * step "new note"); a note is saved on the base the editor opened on.
   * Returns the note as it is after the save.
   */
  saveFull(e: { row: Note; base: Note }): Note | undefined {
    const ed = this.snap.editing;
    if (ed?.draft && ed.id === e.row.id) {
      this.undoHistory.transact('new note', (r) => r.upsertNote(e.row));
      this.set({ draft: null, editing: { ...ed, draft: false } });
    } else this.undoHistory.transact('edit', (r) => r.upsertNote(e.row, e.base));
    return this.notes().get(e.row.id);
  }

  // --- moving, resizing, deleting ----------------------------------------

  /**
   * previewMove shows notes and frames being dragged at new positions
   * (nothing is pushed); a frame dragged takes the notes it holds along.
   */
  previewMove(moves: ReadonlyMap<string, XY>): void {
    this.set({ moving: this.withMembers(moves) });
  }

  /**
   * withMembers adds to moves what the frames in it hold (by where each
   * frame is now, before the move): the frames lying wholly inside them,
   * at every level of nesting, and the notes whose centre is inside them,
   * each moved by its frame's delta. Each row is moved once: a row dragged
   * itself keeps its own position, and one held by two moved frames (a
   * note in a frame in a frame) takes the first's delta, not the sum. A
   * locked frame inside a moved one moves with it: the lock keeps it from
   * being dragged itself, not from being carried.
   */
  private withMembers(moves: ReadonlyMap<string, XY>): ReadonlyMap<string, XY> {
    const frames = this.frames();
    let out: Map<string, XY> | null = null;
    const carry = (id: string, x: number, y: number) => {
      if (moves.has(id) || out?.has(id)) return;
      out ??= new Map(moves);
      out.set(id, { x, y });
    };
    for (const [id, to] of moves) {
      const f = frames.get(id);
      if (!f) continue;
      const dx = to.x - f.x;
      const dy = to.y - f.y;
      for (const g of innerFrames(f, frames.values())) carry(g.id, g.x + dx, g.y + dy);
      for (const n of members(f, this.notes().values())) carry(n.id, n.x + dx, n.y + dy);
    }
    return out ?? moves;
  }

  /**
   * moveNotes commits new positions of notes and frames (a frame takes the
   * notes it holds along; a locked frame does not move): one push and one
   * undo step for them all.
   */
  moveNotes(moves: { id: string; x: number; y: number }[]): void {
    if (this.snap.moving.size) this.set({ moving: EMPTY_MAP });
    if (!this.snap.canEdit) return;
    const frames = this.frames();
    const allowed = new Set(this.may(moves.map((m) => m.id)));
    const unlocked = moves.filter((m) => !frames.get(m.id)?.locked && allowed.has(m.id));
    const all = this.withMembers(new Map(unlocked.map((m) => [m.id, { x: m.x, y: m.y }])));
    const now = this.notes();
    const moved: Note[] = [];
    const movedFrames: Frame[] = [];
    for (const [id, p] of all) {
      const x = Math.round(p.x);
      const y = Math.round(p.y);
      const n = now.get(id);
      const f = frames.get(id);
      if (n && (n.x !== x || n.y !== y)) moved.push({ ...n, x, y });
      else if (f && (f.x !== x || f.y !== y)) movedFrames.push({ ...f, x, y });
    }
    if (!moved.length && !movedFrames.length) return;
    const what = movedFrames.length ? `${plural(movedFrames.length, 'frame')}${moved.length ? ` and ${plural(moved.length, 'note')}` : ''}` : plural(moved.length, 'note');
    this.undoHistory.transact(`move of ${what}`, (r) => {
      movedFrames.forEach((f) => r.upsertFrame(f));
      moved.forEach((n) => r.upsertNote(n));
    });
  }

  /** nudge moves the selected notes by (dx, dy). */
  nudge(dx: number, dy: number): void {
    const now = this.notes();
    this.moveNotes([...this.snap.selected].flatMap((id) => {
      const n = now.get(id);
      return n ? [{ id, x: n.x + dx, y: n.y + dy }] : [];
    }));
  }

  /** previewSize shows a note being resized at a new size (nothing is pushed). */
  previewSize(id: string, w: number, h: number): void {
    const m = new Map(this.snap.sizing);
    m.set(id, clampSize(w, h));
    this.set({ sizing: m });
  }

  /** resize gives notes new sizes (clamped to the limits): one push, one undo step. */
  resize(sizes: { id: string; w: number; h: number }[]): void {
    if (this.snap.sizing.size) this.set({ sizing: EMPTY_MAP });
    if (!this.snap.canEdit) return;
    const now = this.notes();
    const allowed = new Set(this.may(sizes.map((s) => s.id)));
    const changed = sizes.flatMap((s) => {
      const n = allowed.has(s.id) ? now.get(s.id) : undefined;
      if (!n) return [];
      const want = clampSize(s.w, s.h);
      const was = sizeOf(n);
      return want.w !== was.w || want.h !== was.h || n.w !== want.w || n.h !== want.h ? [{ ...n, w: want.w, h: want.h }] : [];
    });
    if (!changed.length) return;
    this.undoHistory.transact(`resize of ${plural(changed.length, 'note')}`, (r) => changed.forEach((n) => r.upsertNote(n)));
  }

  /** endResize commits the size a note's handle was dragged to. */
  endResize(id: string): void {
    const s = this.snap.sizing.get(id);
    if (s) this.resize([{ id, ...s }]);
  }

  /** resizeBy grows (or shrinks) the selected notes. */
  resizeBy(dw: number, dh: number): void {
    const now = this.notes();
    this.resize([...this.snap.selected].flatMap((id) => {
      const n = now.get(id);
      if (!n) return [];
      const s = sizeOf(n);
      return [{ id, w: s.w + dw, h: s.h + dh }];
    }));
  }

  /**
   * deleteSelected deletes the selected notes, frames and connectors, and
   * the connectors of the notes and frames it deletes (the server refuses
   * a connector whose end is gone), in one push and one undoable step. A
   * frame's notes stay: deleting the frame takes away the area, not what
   * was put in it.
   */
  deleteSelected(): void {
    if (!this.snap.canEdit) return;
    // Nothing is deleted when one of them may not be (a lock, someone else's): the person is told why.
    if (this.may([...this.snap.selected]).length < this.snap.selected.size) return;
    const now = this.notes();
    const { connectors, frames } = this.store.getSnapshot();
    const sel = [...this.snap.selected];
    const gone = sel.filter((id) => now.has(id));
    const goneFrames = sel.filter((id) => frames.has(id));
    const ends = new Set([...gone, ...goneFrames]);
    const goneConns = new Set([...sel.filter((id) => connectors.has(id)), ...touching(ends, connectors.values()).map((c) => c.id)]);
    if (!gone.length && !goneFrames.length && !goneConns.size) return;
    const parts = [gone.length ? plural(gone.length, 'note') : '', goneFrames.length ? plural(goneFrames.length, 'frame') : '', goneConns.size ? plural(goneConns.size, 'connector') : ''].filter(Boolean);
    const what = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
    this.undoHistory.transact(`deletion of ${what}`, (r) => {
      goneConns.forEach((id) => r.deleteConnector(id));
      gone.forEach((id) => r.deleteNote(id));
      goneFrames.forEach((id) => r.deleteFrame(id));
    });
    this.set({ selected: EMPTY_SET, naming: null });
    this.announce(`${what[0].toUpperCase()}${what.slice(1)} deleted. Press Ctrl+Z to undo.`);
  }

  // --- connectors and frames (docs/web-client.md, "Connectors and frames") ---

  private frames(): ReadonlyMap<string, Frame> {
    return this.store.getSnapshot().frames;
  }

  private connectors(): ReadonlyMap<string, Connector> {
    return this.store.getSnapshot().connectors;
  }

  /** exists says whether id is a note or a frame on the board (what a connector may join). */
  private exists(id: string): boolean {
    return this.notes().has(id) || this.frames().has(id);
  }

  /**
   * connect draws a connector (a solid grey arrow, no label) from one note
   * or frame to another: one push, one undo step; the connector is
   * selected. Returns its id, or null when the ends are not two things on
   * the board or the same arrow already joins them.
   */
  connect(from: string, to: string): string | null {
    if (!this.snap.canEdit || from === to || !this.exists(from) || !this.exists(to)) return null;
    if (!this.rights.isOwner && this.rights.role === 'add') {
      this.set({ refused: { id: from, message: NOT_NOTES_REASON } });
      this.announce(NOT_NOTES_REASON);
      return null;
    }
    for (const c of this.connectors().values()) {
      if (c.from === from && c.to === to) {
        this.set({ selected: new Set([c.id]) });
        return c.id;
      }
    }
    const c: Connector = { id: this.newId(), from, to, label: '', style: 'arrow', dash: 'solid', color: 'gray', updatedAt: '' };
    this.undoHistory.transact('new connector', (r) => r.upsertConnector(c));
    this.set({ selected: new Set([c.id]) });
    this.announce('Connector drawn. Double-click its label to name it; Delete removes it.');
    return c.id;
  }

  /**
   * connectSelected joins the two selected notes or frames, from the one
   * selected first. With one selected, it starts the connect tool: the
   * next note or frame tapped (or clicked, or reached with the keyboard) is
   * the arrow's end, the way a finger connects without dragging.
   */
  connectSelected(): string | null {
    if (!this.snap.canEdit) return null;
    const ends = [...this.snap.selected].filter((id) => this.exists(id));
    if (ends.length === 1) {
      this.set({ tool: 'connect', connectFrom: ends[0] });
      this.announce('Now tap or click the note (or frame) the arrow goes to; Escape cancels.');
      return null;
    }
    if (ends.length !== 2) {
      this.announce('Select a note (or two) to connect.');
      return null;
    }
    return this.connect(ends[0], ends[1]);
  }

  /** connectTo ends the connect tool's arrow at id; false when the tool is not on or id is no end. */
  private connectTo(id: string): boolean {
    const from = this.snap.connectFrom;
    if (this.snap.tool !== 'connect' || !from || id === from || !this.exists(id)) return false;
    this.set({ tool: 'select', connectFrom: null });
    this.connect(from, id);
    return true;
  }

  /** setConnector restyles or relabels a connector, on the row as it is now: one push, one undo step. */
  setConnector(id: string, patch: ConnectorPatch): void {
    const c = this.connectors().get(id);
    if (!c || !this.snap.canEdit) return;
    const next = { ...c, ...patch };
    if (typeof next.label === 'string') next.label = [...next.label.trim()].slice(0, MAX_LABEL).join('');
    if ((Object.keys(patch) as (keyof ConnectorPatch)[]).every((k) => next[k] === c[k])) return;
    this.undoHistory.transact(patch.label !== undefined ? 'label change' : 'connector style', (r) => r.upsertConnector(next, c));
  }

  /**
   * createFrame makes a frame: around the selected notes when there are
   * some (so they are in it), else FRAME_W×FRAME_H (at most 80 % × 70 %
   * of the view) at the centre of the view; titled "Frame N", selected, and its title ready to type. One
   * push, one undo step.
   */
  createFrame(): string | null {
    if (!this.snap.canEdit) return null;
    if (!this.rights.isOwner && this.rights.role === 'add') {
      this.announce(NOT_NOTES_REASON);
      return null;
    }
    if (this.snap.editing) this.commitEdit();
    const now = this.notes();
    const around = [...this.snap.selected].flatMap((id) => {
      const n = now.get(id);
      return n ? [rectOf(n)] : [];
    });
    const v = this.view.visible();
    const c = this.centre();
    // FRAME_W×FRAME_H, or less on a small screen: a new frame is wholly in view, title bar included.
    const w = v.w > 0 ? Math.min(FRAME_W, Math.round(v.w * 0.8)) : FRAME_W;
    const h = v.h > 0 ? Math.min(FRAME_H, Math.round(v.h * 0.7)) : FRAME_H;
    const r = around.length ? frameAround(around) : clampFrame({ x: c.x - w / 2, y: c.y - h / 2, w, h });
    const f: Frame = { id: this.newId(), title: nextFrameTitle(this.frames().values()), ...r, color: 'gray', locked: false, updatedAt: '' };
    this.undoHistory.transact('new frame', (u) => u.upsertFrame(f));
    this.set({ selected: new Set([f.id]), naming: { kind: 'frame', id: f.id } });
    this.view.show(r);
    this.announce(`${f.title} made${around.length ? ` around ${plural(around.length, 'note')}` : ''}. Type its name; Enter keeps it.`);
    return f.id;
  }

  /** setFrame renames, colours or locks a frame, on the row as it is now: one push, one undo step. */
  setFrame(id: string, patch: FramePatch): void {
    const f = this.frames().get(id);
    if (!f || !this.snap.canEdit) return;
    // Locking is the owner's; a locked frame changes by the owner only.
    if (patch.locked !== undefined && !this.rights.isOwner) return;
    if (this.refuse(id)) return;
    const next = { ...f, ...patch };
    if (typeof patch.title === 'string') next.title = [...patch.title.trim()].slice(0, MAX_FRAME_TITLE).join('') || f.title;
    if ((Object.keys(patch) as (keyof FramePatch)[]).every((k) => next[k] === f[k])) return;
    const label = patch.locked !== undefined ? (patch.locked ? 'lock' : 'unlock') : patch.title !== undefined ? 'rename of the frame' : 'frame colour';
    this.undoHistory.transact(label, (r) => r.upsertFrame(next, f));
    if (patch.locked !== undefined) this.announce(patch.locked ? `${f.title} locked: it no longer moves or resizes.` : `${f.title} unlocked.`);
  }

  /** resizeFrame gives a frame a new box (its size within the limits; not when locked): one push, one undo step. Its notes stay where they are. */
  resizeFrame(id: string, r: Rect): void {
    const f = this.frames().get(id);
    if (!f || !this.snap.canEdit || f.locked || this.refuse(id)) return;
    const want = clampFrame(r);
    if (want.x === f.x && want.y === f.y && want.w === f.w && want.h === f.h) return;
    this.undoHistory.transact('resize of the frame', (u) => u.upsertFrame({ ...f, ...want }));
  }

  /** zoomToFrame fits the view to a frame and selects it. */
  zoomToFrame(id: string): void {
    const f = this.frames().get(id);
    if (!f) return;
    this.set({ selected: new Set([id]), panel: null });
    this.view.fitRect(frameRect(f));
    this.announce(`Zoomed to ${f.title || 'the frame'}.`);
  }

  /** startNaming puts a field over a connector's label or a frame's title (double-click, or Enter on a selected one). */
  startNaming(kind: Naming['kind'], id: string): void {
    if (!this.snap.canEdit) return;
    if (!(kind === 'frame' ? this.frames() : this.connectors()).has(id)) return;
    this.set({ naming: { kind, id }, selected: new Set([id]) });
  }

  /** commitName keeps what was typed as the label or title (an empty title keeps the old one), and stops naming. */
  commitName(text: string): void {
    const nm = this.snap.naming;
    if (!nm) return;
    this.set({ naming: null });
    if (nm.kind === 'frame') this.setFrame(nm.id, { title: text });
    else this.setConnector(nm.id, { label: text });
  }

  /** cancelNaming stops naming without a change. */
  cancelNaming(): void {
    if (this.snap.naming) this.set({ naming: null });
  }

  /** selectedConnector and selectedFrame are the one connector or frame selected alone (their toolbars show then). */
  selectedConnector(): Connector | undefined {
    const s = this.snap.selected;
    return s.size === 1 ? this.connectors().get([...s][0]) : undefined;
  }

  selectedFrame(): Frame | undefined {
    const s = this.snap.selected;
    return s.size === 1 ? this.frames().get([...s][0]) : undefined;
  }

  // --- undo and redo -------------------------------------------------------

  /** undo reverts my last step (or asks first when it would delete notes others changed). */
  undo(): void {
    if (this.snap.canEdit) this.said(this.undoHistory.undo(), 'undo');
  }

  /** redo applies again what was undone last. */
  redo(): void {
    if (this.snap.canEdit) this.said(this.undoHistory.redo(), 'redo');
  }

  private said(r: UndoResult, dir: 'undo' | 'redo') {
    if (r.kind === 'empty') this.announce(dir === 'undo' ? 'Nothing to undo.' : 'Nothing to redo.');
    else if (r.kind === 'done') this.announce(`${dir === 'undo' ? 'Undid' : 'Redid'} the ${r.label}.`);
    else this.set({ asking: { kind: 'undo', dir, result: r } });
  }

  /** answerUndo answers the undo question: proceed (delete them anyway) or keep the notes. */
  answerUndo(proceed: boolean): void {
    const a = this.snap.asking;
    if (a?.kind !== 'undo') return;
    this.set({ asking: null });
    if (proceed) this.said(a.result.proceed(), a.dir);
    else {
      a.result.keep();
      this.announce(`Nothing was ${a.dir === 'undo' ? 'undone' : 'redone'}: the note stays.`);
    }
  }

  // --- tools, panels, paste, search ----------------------------------------

  /** setTool picks what a click on the empty canvas does (another tool than connect drops the connect tool's start). */
  setTool(tool: Tool): void {
    if (tool !== 'select' && !this.snap.canEdit) return;
    if (tool !== this.snap.tool) this.set({ tool, connectFrom: tool === 'connect' ? this.snap.connectFrom : null });
  }

  /** paneClick is a click on the empty canvas at a board point: the note tool puts a note there; else the selection clears. */
  paneClick(at: XY): void {
    if (this.snap.tool === 'note') this.createNote(at);
    else {
      if (this.snap.tool === 'connect') this.setTool('select');
      this.clearSelection();
    }
  }

  /** openPanel shows the search or the shortcuts panel (or none). */
  openPanel(panel: Panel): void {
    if (panel !== this.snap.panel) this.set({ panel });
  }

  /**
   * paste makes notes of pasted text (paste.ts: one per paragraph or
   * top-level list item, at most MAX_PASTE_NOTES), at free spots near the
   * centre, in one undoable step, and selects them. Returns how many.
   */
  paste(text: string): number {
    if (!this.snap.canEdit) return 0;
    const { notes, dropped } = parsePaste(text);
    if (!notes.length) return 0;
    if (this.snap.editing) this.commitEdit();
    const spots = freeSpots(this.rects(), this.centre(), notes.length);
    const rows = notes.map((p, i) => ({ ...newNote(this.newId(), spots[i].x, spots[i].y), title: p.title, content: p.content }));
    this.undoHistory.transact(`paste of ${plural(rows.length, 'note')}`, (r) => rows.forEach((n) => r.upsertNote(n)));
    this.set({ selected: new Set(rows.map((n) => n.id)), focused: rows[0].id });
    this.announce(`Pasted ${plural(rows.length, 'note')}${dropped ? ` (the first ${rows.length}; ${dropped} more left out)` : ''}. Press Ctrl+Z to undo.`);
    return rows.length;
  }

  /** jumpTo brings a note into view, selects it, gives it the focus and lights it for HIGHLIGHT_MS. */
  jumpTo(id: string): void {
    const n = this.note(id);
    if (!n) return;
    this.select(id);
    this.view.reveal(rectOf(n));
    this.view.focusNote(id);
    if (this.highlightTimer !== null) this.clearTimer(this.highlightTimer);
    this.set({ highlight: id, panel: null });
    this.highlightTimer = this.setTimer(() => {
      this.highlightTimer = null;
      if (this.snap.highlight === id) this.set({ highlight: null });
    }, HIGHLIGHT_MS);
  }

  // --- the note menu, long-press, expand ------------------------------------

  /**
   * openMenu opens a note's menu (a right-click or a long-press at a screen
   * point; from the keyboard at the note, at: null) and selects the note,
   * so that what the menu does is plainly about it. Not while a note is
   * edited or a question waits.
   */
  openMenu(id: string, at: XY | null = null): boolean {
    if (!this.notes().has(id) || this.snap.editing || this.snap.asking) return false;
    this.set({ menu: { id, at }, selected: new Set([id]), focused: id });
    return true;
  }

  /** closeMenu closes the note menu; refocus gives the keyboard focus back to its note (Escape does, a click elsewhere does not). */
  closeMenu(refocus = true): void {
    const m = this.snap.menu;
    if (!m) return;
    this.set({ menu: null });
    if (refocus && this.notes().has(m.id)) this.view.focusNote(m.id);
  }

  /** menuModel is what the open note menu lists: a viewer can only open the note (read only) and its history. */
  menuModel(): NoteMenuModel | null {
    const m = this.snap.menu;
    const n = m && this.notes().get(m.id);
    if (!n) return null;
    const mine = this.snap.canEdit && !this.whyNot(n.id);
    const lock: MenuEntry[] = this.snap.canEdit && this.rights.isOwner ? [n.locked ? { command: 'unlock', label: 'Unlock' } : { command: 'lock', label: 'Lock' }] : [];
    const entries: MenuEntry[] = mine
      ? [
          { command: 'inplace', label: 'Edit in place' },
          { command: 'full', label: 'Open in the full editor' },
          { command: 'duplicate', label: 'Duplicate' },
          { command: 'history', label: 'History' },
          { command: 'delete', label: 'Delete' },
          ...lock,
        ]
      : [
          { command: 'full', label: 'Open' },
          ...(this.snap.canEdit ? [{ command: 'duplicate' as const, label: 'Duplicate' }] : []),
          { command: 'history', label: 'History' },
        ];
    return { entries, colours: mine ? Object.keys(COLORS) : [], colour: n.color, reason: this.snap.canEdit ? this.whyNot(n.id) : null };
  }

  /** chooseFromMenu carries out a note menu's entry on its note, and closes the menu. */
  chooseFromMenu(command: MenuCommand): void {
    const m = this.snap.menu;
    if (!m) return;
    this.set({ menu: null });
    if (!this.notes().has(m.id)) return;
    switch (command) {
      case 'inplace':
        this.startEdit(m.id, 'inplace');
        return;
      case 'full':
        this.openFull(m.id);
        return;
      case 'duplicate':
        this.duplicate(m.id);
        return;
      case 'history':
        this.openHistory(m.id);
        return;
      case 'delete':
        this.set({ selected: new Set([m.id]) });
        this.deleteSelected();
        return;
      case 'lock':
      case 'unlock':
        this.setLocked(m.id, command === 'lock');
        return;
    }
  }

  /** chooseColour is the note menu's colour: the note takes it (one push, one undo step), and the menu closes. */
  chooseColour(colour: string): void {
    const m = this.snap.menu;
    if (!m) return;
    this.set({ menu: null });
    this.setColour(m.id, colour);
    if (this.notes().has(m.id)) this.view.focusNote(m.id);
  }

  /** setColour gives a note a colour, on the note as it is now (a merge keeps whatever else changed). */
  setColour(id: string, colour: string): void {
    const n = this.notes().get(id);
    if (!n || !this.snap.canEdit || n.color === colour || this.refuse(id)) return;
    this.undoHistory.transact('colour change', (r) => r.upsertNote({ ...n, color: colour }, n));
    this.announce(`Colour: ${colour}.`);
  }

  /**
   * duplicate copies a note (title, content, colour, type, size) to the
   * free spot nearest it, one push and one undo step, and selects the copy.
   * Fields this client does not know are not copied: they belong to the
   * note, not to what it says.
   */
  duplicate(id: string): string | null {
    const n = this.notes().get(id);
    if (!n || !this.snap.canEdit) return null;
    const size = sizeOf(n);
    const r = rectOf(n);
    const p = freeSpot(this.rects(), { x: r.x + r.w / 2, y: r.y + r.h / 2 }, size);
    const copy: Note = { ...newNote(this.newId(), p.x, p.y), title: n.title, content: n.content, color: n.color, type: n.type };
    if (n.w !== undefined || n.h !== undefined) Object.assign(copy, size);
    this.undoHistory.transact('duplicate', (u) => u.upsertNote(copy));
    this.select(copy.id);
    this.view.show(rectOf(copy));
    this.view.focusNote(copy.id);
    this.announce('Note duplicated. Press Ctrl+Z to undo.');
    return copy.id;
  }

  /**
   * pressStart is a finger down on a note: resting there LONG_PRESS_MS
   * without moving opens its menu. The timer is the editor's, so tests
   * drive it with fake timers.
   */
  pressStart(id: string, at: XY): void {
    this.pressCancel();
    const press = { id, at, timer: null as unknown, fired: false, moved: false };
    press.timer = this.setTimer(() => {
      press.timer = null;
      if (this.press !== press || press.moved) return;
      press.fired = this.openMenu(id, at);
    }, LONG_PRESS_MS);
    this.press = press;
  }

  /** pressMove follows the finger: moved further than LONG_PRESS_SLOP, it is a drag or a pan, and no menu opens. */
  pressMove(at: XY): void {
    const p = this.press;
    if (!p || p.fired || p.moved || Math.hypot(at.x - p.at.x, at.y - p.at.y) <= LONG_PRESS_SLOP) return;
    p.moved = true;
    if (p.timer != null) this.clearTimer(p.timer);
    p.timer = null;
  }

  /** pressEnd is the finger up (or the press cancelled); true when the press opened the menu (so it was no tap). */
  pressEnd(): boolean {
    const fired = !!this.press?.fired;
    this.pressCancel();
    return fired;
  }

  /**
   * release is a finger lifted from a note at time t (ms): 'menu' when a
   * long press opened its menu, 'edit' when it was the second tap of a
   * double tap (the note is then edited in place), else 'none'. Only a
   * plain tap starts a double tap: not the end of a drag (a move, a
   * connector dragged from the note's edge, a pan), and not the tap that
   * ended the connect tool's arrow on this note, so that the next tap on
   * it, however soon, selects it rather than editing it. A plain tap
   * selects the note.
   */
  release(id: string, t: number): 'menu' | 'edit' | 'none' {
    const p = this.press;
    const fired = this.pressEnd();
    if (fired || p?.moved || (this.snap.tool === 'connect' && this.snap.connectFrom && this.snap.connectFrom !== id)) {
      this.lastTap = null;
      return fired ? 'menu' : 'none';
    }
    const last = this.lastTap;
    if (last && last.id === id && t - last.t < DOUBLE_TAP_MS) {
      this.lastTap = null;
      this.startEdit(id);
      return 'edit';
    }
    this.lastTap = { id, t };
    // A tap selects the note here rather than by the click the browser makes
    // of it: after a finger's drag that ended on this note (a connector drawn
    // from another's edge), Chromium makes no click of the next tap.
    const sel = this.snap.selected;
    if (sel.size !== 1 || !sel.has(id)) this.select(id);
    return 'none';
  }

  private pressCancel() {
    if (this.press?.timer != null) this.clearTimer(this.press.timer);
    this.press = null;
  }

  /**
   * expand grows a note whose content is cut so that it all shows: `need`
   * is the size its content asks for (measured by the note on screen). It
   * only grows, within MAX_W×MAX_H; a resize, so one push and one undo step.
   */
  expand(id: string, need: Size): void {
    const n = this.notes().get(id);
    if (!n) return;
    const s = sizeOf(n);
    this.resize([{ id, w: Math.max(s.w, Math.ceil(need.w)), h: Math.max(s.h, Math.ceil(need.h)) }]);
  }

  // --- keys ------------------------------------------------------------------

  /**
   * handleKey runs the board binding for a key, if any applies now; true
   * when it did something (the caller then prevents the browser's default).
   * typing: a text field has the focus (only global bindings apply).
   */
  handleKey(e: KeyLike, typing = false): boolean {
    const b = bindingFor(e, 'board');
    // The note menu keeps its keys to itself while open.
    if (!b || (typing && !b.global) || this.snap.menu) return false;
    if (b.edits && !this.snap.canEdit) return false;
    return this.run(b.action, e);
  }

  /** run carries out a keymap action; false when it did not apply. */
  run(action: Action, e?: KeyLike): boolean {
    const first = [...this.snap.selected][0];
    const dir = e ? DIRS[e.key] : undefined;
    switch (action) {
      case 'create':
        return this.createNote() !== null;
      case 'edit':
        if (!first) return false;
        if (this.frames().has(first)) this.startNaming('frame', first);
        else if (this.connectors().has(first)) this.startNaming('connector', first);
        else this.startEdit(first);
        return true;
      case 'openFull':
        if (!first) return false;
        this.openFull(first);
        return true;
      case 'delete': {
        // A connector reached with L: after it goes, the keyboard is back on its note.
        const back = this.cycledFrom();
        this.deleteSelected();
        if (back) this.focus(back);
        return true;
      }
      case 'undo':
        this.undo();
        return true;
      case 'redo':
        this.redo();
        return true;
      case 'focus':
        if (!dir) return false;
        if (!this.snap.selected.size) {
          const step = 40;
          this.view.pan(dir === 'left' ? step : dir === 'right' ? -step : 0, dir === 'up' ? step : dir === 'down' ? -step : 0);
        } else this.focusToward(dir);
        return true;
      case 'move': {
        if (!dir || !this.snap.selected.size) return false;
        const step = e?.shiftKey ? NUDGE_FAR : NUDGE;
        this.nudge(dir === 'left' ? -step : dir === 'right' ? step : 0, dir === 'up' ? -step : dir === 'down' ? step : 0);
        return true;
      }
      case 'resize':
        if (!dir || !this.snap.selected.size) return false;
        this.resizeBy(dir === 'left' ? -RESIZE_STEP : dir === 'right' ? RESIZE_STEP : 0, dir === 'up' ? -RESIZE_STEP : dir === 'down' ? RESIZE_STEP : 0);
        return true;
      case 'clear': {
        if (this.snap.tool !== 'select') this.setTool('select');
        const back = this.cycledFrom();
        if (back) this.focus(back);
        else this.clearSelection();
        return true;
      }
      case 'zoomIn':
        this.view.zoomIn();
        return true;
      case 'zoomOut':
        this.view.zoomOut();
        return true;
      case 'fit':
        this.view.fit();
        return true;
      case 'search':
        this.openPanel('search');
        return true;
      case 'shortcuts':
        this.openPanel('shortcuts');
        return true;
      case 'toolSelect':
        this.setTool('select');
        return true;
      case 'toolNote':
        this.setTool('note');
        return true;
      case 'save':
        this.commitEdit();
        return true;
      case 'cancel':
        this.cancelEdit();
        return true;
      case 'frame':
        return this.createFrame() !== null;
      case 'connect':
        return this.connectSelected() !== null;
      case 'outline':
        this.openPanel('outline');
        return true;
      case 'connectors':
        return this.cycleConnectors(!!e?.shiftKey);
      case 'menu': {
        const id = this.snap.focused && this.snap.selected.has(this.snap.focused) ? this.snap.focused : first;
        return !!id && this.openMenu(id);
      }
    }
  }
}
