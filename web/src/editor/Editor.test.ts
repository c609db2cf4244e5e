import { describe, expect, it } from 'vitest';
import type { Connector, Frame, Note, TrackerItem } from '../api/types';
import { note } from '../sync/testing';
import { mergeNote } from '../sync/merge';
import type { UndoStore } from '../canvas/undo';
import { DOUBLE_TAP_MS, Editor, HIGHLIGHT_MS, LOCKED_REASON, LONG_PRESS_MS, NOT_NOTES_REASON, NOT_YOURS_REASON, noteReason, type EditorView } from './Editor';
import { DEFAULT_H, DEFAULT_W, MAX_H, MAX_W, MIN_H, overlaps, rectOf, type Rect } from './geometry';
import { KEYMAP, type KeyLike } from './keymap';

/** Board is an in-memory store that counts its pushes (one batch = one push). */
class Board implements UndoStore {
  notes = new Map<string, Note>();
  items = new Map<string, TrackerItem>();
  connectors = new Map<string, Connector>();
  frames = new Map<string, Frame>();
  batches = 0;
  getSnapshot = () => ({ notes: this.notes, items: this.items, connectors: this.connectors, frames: this.frames });
  upsertNote(n: Note, base?: Note): Note {
    // As the sync engine does: an edit made on an older base is merged into the note now.
    const cur = this.notes.get(n.id);
    const r = { ...n, updatedAt: 'now' };
    this.notes = new Map(this.notes).set(n.id, base && cur ? mergeNote(base, cur, r).merged : r);
    return r;
  }
  deleteNote(id: string) {
    this.notes = new Map(this.notes);
    this.notes.delete(id);
  }
  upsertItem(i: TrackerItem): TrackerItem {
    this.items.set(i.id, i);
    return i;
  }
  deleteItem(id: string) {
    this.items.delete(id);
  }
  upsertConnector(c: Connector): Connector {
    const r = { ...c, updatedAt: 'now' };
    this.connectors = new Map(this.connectors).set(c.id, r);
    return r;
  }
  deleteConnector(id: string) {
    this.connectors = new Map(this.connectors);
    this.connectors.delete(id);
  }
  upsertFrame(f: Frame): Frame {
    const r = { ...f, updatedAt: 'now' };
    this.frames = new Map(this.frames).set(f.id, r);
    return r;
  }
  deleteFrame(id: string) {
    this.frames = new Map(this.frames);
    this.frames.delete(id);
  }
  batch(fn: () => void) {
    this.batches++;
    fn();
  }
}

/** FakeView is a 1000×600 view at the board's origin that records what the editor asked of it. */
class FakeView implements EditorView {
  rect: Rect = { x: -500, y: -300, w: 1000, h: 600 };
  revealed: Rect[] = [];
  focused: string[] = [];
  panned: [number, number][] = [];
  zooms: string[] = [];
  visible = () => this.rect;
  reveal = (r: Rect) => void this.revealed.push(r);
  shown: Rect[] = [];
  show = (r: Rect) => void this.shown.push(r);
  focusNote = (id: string) => void this.focused.push(id);
  pan = (dx: number, dy: number) => void this.panned.push([dx, dy]);
  zoomIn = () => void this.zooms.push('in');
  zoomOut = () => void this.zooms.push('out');
  fit = () => void this.zooms.push('fit');
  fitted: Rect[] = [];
  fitRect = (r: Rect) => void this.fitted.push(r);
}

function setup(notes: Note[] = []) {
  const board = new Board();
  for (const n of notes) board.notes.set(n.id, n);
  const said: string[] = [];
  const histories: string[] = [];
  const timers: { cb: () => void; ms: number }[] = [];
  let next = 0;
  const editor = new Editor({
    store: board,
    announce: (m) => said.push(m),
    newId: () => `new${++next}`,
    openHistory: (id) => histories.push(id),
    setTimeout: (cb, ms) => timers.push({ cb, ms }),
    clearTimeout: () => {},
  });
  const view = new FakeView();
  editor.setView(view);
  return { board, editor, view, said, timers, histories };
}

const key = (k: string, mods: Partial<KeyLike> = {}): KeyLike => ({ key: k, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });

describe('createNote', () => {
  it('starts a draft in the middle of the view, edited in place, pushing nothing', () => {
    const { board, editor } = setup();
    const id = editor.createNote()!;
    const s = editor.getSnapshot();
    expect(s.draft).toMatchObject({ id, x: -DEFAULT_W / 2, y: -DEFAULT_H / 2 });
    expect(s.editing).toEqual({ id, mode: 'inplace', draft: true });
    expect([...s.selected]).toEqual([id]);
    expect(board.batches).toBe(0);
    expect(board.notes.size).toBe(0);
  });

  it('saved with a title, becomes one note in one push and one undo step', () => {
    const { board, editor } = setup();
    const id = editor.createNote()!;
    editor.type('title', 'Typed');
    editor.commitEdit();
    expect(board.batches).toBe(1);
    expect(board.notes.get(id)).toMatchObject({ title: 'Typed', content: '' });
    expect(editor.getSnapshot().editing).toBeNull();
    expect(editor.getSnapshot().draft).toBeNull();
    editor.undo();
    expect(board.notes.has(id)).toBe(false);
  });

  it('cancelled, or saved with nothing typed, leaves nothing behind', () => {
    for (const end of ['cancel', 'commit'] as const) {
      const { board, editor } = setup();
      const id = editor.createNote()!;
      if (end === 'cancel') editor.cancelEdit();
      else editor.commitEdit();
      expect(board.batches).toBe(0);
      expect(editor.getSnapshot().draft).toBeNull();
      expect(editor.getSnapshot().selected.has(id)).toBe(false);
    }
  });

  it('cancelled with typed text asks; keep editing keeps the text, discard drops it', () => {
    const { board, editor } = setup();
    editor.createNote();
    editor.type('content', 'half a thought');
    editor.cancelEdit();
    expect(editor.getSnapshot().asking).toEqual({ kind: 'discard' });
    editor.keepEditing();
    expect(editor.getSnapshot().asking).toBeNull();
    expect(editor.getEdit()?.values.content).toBe('half a thought');
    editor.cancelEdit();
    editor.discardEdit();
    expect(editor.getSnapshot().editing).toBeNull();
    expect(board.batches).toBe(0);
  });

  it('ten notes in a row never overlap, and stay near the centre', () => {
    const { editor, board } = setup([note('a', { x: -110, y: -80 })]);
    for (let i = 0; i < 10; i++) {
      editor.createNote();
      editor.type('title', `n${i}`);
      editor.commitEdit();
    }
    const rects = [...board.notes.values()].map(rectOf);
    expect(rects).toHaveLength(11);
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i], rects[j])).toBe(false);
    for (const r of rects) expect(Math.abs(r.x + r.w / 2) + Math.abs(r.y + r.h / 2)).toBeLessThan(1000);
  });

  it('is refused to a viewer', () => {
    const { editor } = setup();
    editor.setCanEdit(false);
    expect(editor.createNote()).toBeNull();
    expect(editor.handleKey(key('n'))).toBe(false);
  });
});

describe('edit in place', () => {
  it('saves only the fields typed in, merged into the note as it is now', () => {
    const { board, editor } = setup([note('n1', { title: 'Plan', content: 'one\ntwo' })]);
    editor.startEdit('n1');
    editor.type('title', 'Roadmap');
    // Someone else changes the content meanwhile: the untouched field follows.
    board.notes.set('n1', { ...board.notes.get('n1')!, content: 'one\ntwo\nthree' });
    editor.notesChanged();
    expect(editor.getEdit()?.values.content).toBe('one\ntwo\nthree');
    editor.commitEdit();
    expect(board.notes.get('n1')).toMatchObject({ title: 'Roadmap', content: 'one\ntwo\nthree' });
  });

  it('moves to the full editor with the typed text when the note is deleted meanwhile', () => {
    const { board, editor } = setup([note('n1')]);
    editor.startEdit('n1');
    editor.type('title', 'mine');
    board.deleteNote('n1');
    editor.notesChanged();
    expect(editor.getSnapshot().editing?.mode).toBe('full');
    expect(editor.getEdit()?.values.title).toBe('mine');
  });

  it('openFull carries a draft to the full editor, whose Save creates the note', () => {
    const { board, editor } = setup();
    const id = editor.createNote()!;
    editor.type('title', 'Draft');
    editor.openFull();
    expect(editor.getSnapshot().editing).toEqual({ id, mode: 'full', draft: true });
    const row = { ...editor.getSnapshot().draft!, title: 'Draft', content: 'body' };
    expect(editor.saveFull({ row, base: editor.getSnapshot().draft! })).toMatchObject({ title: 'Draft', content: 'body' });
    expect(editor.getSnapshot().draft).toBeNull();
    expect(board.notes.has(id)).toBe(true);
  });
});

describe('move, resize, delete', () => {
  it('Alt+arrows move the selected notes 10 px (50 with Shift), one undo step each', () => {
    const { board, editor } = setup([note('n1', { x: 0, y: 0 })]);
    editor.select('n1');
    expect(editor.handleKey(key('ArrowRight', { altKey: true }))).toBe(true);
    expect(editor.handleKey(key('ArrowDown', { altKey: true, shiftKey: true }))).toBe(true);
    expect(board.notes.get('n1')).toMatchObject({ x: 10, y: 50 });
    editor.undo();
    expect(board.notes.get('n1')).toMatchObject({ x: 10, y: 0 });
  });

  it('a drop is one push for every dragged note', () => {
    const { board, editor } = setup([note('a'), note('b', { x: 300 })]);
    editor.previewMove(new Map([['a', { x: 5, y: 5 }]]));
    expect(editor.getSnapshot().moving.get('a')).toEqual({ x: 5, y: 5 });
    editor.moveNotes([
      { id: 'a', x: 5.4, y: 5 },
      { id: 'b', x: 305, y: 0 },
    ]);
    expect(board.batches).toBe(1);
    expect(board.notes.get('a')).toMatchObject({ x: 5, y: 5 });
    expect(editor.getSnapshot().moving.size).toBe(0);
  });

  it('resize stores w and h within the limits, and undo takes them back', () => {
    const { board, editor } = setup([note('n1')]);
    editor.previewSize('n1', 5000, 10);
    expect(editor.getSnapshot().sizing.get('n1')).toEqual({ w: MAX_W, h: MIN_H });
    editor.endResize('n1');
    expect(board.notes.get('n1')).toMatchObject({ w: MAX_W, h: MIN_H });
    editor.select('n1');
    editor.handleKey(key('ArrowLeft', { shiftKey: true }));
    expect(board.notes.get('n1')).toMatchObject({ w: MAX_W - 10, h: MIN_H });
    editor.undo();
    editor.undo();
    expect(board.notes.get('n1')!.w).toBeUndefined();
    expect(board.notes.get('n1')!.h).toBeUndefined();
  });

  it('keeps fields it does not know when it moves or resizes a note', () => {
    const { board, editor } = setup([note('n1', { tags: ['x'] })]);
    editor.resize([{ id: 'n1', w: 300, h: 200 }]);
    editor.moveNotes([{ id: 'n1', x: 9, y: 9 }]);
    expect(board.notes.get('n1')).toMatchObject({ tags: ['x'], w: 300, h: 200, x: 9, y: 9 });
  });

  it('Delete deletes the selection in one step that Ctrl+Z brings back', () => {
    const { board, editor, said } = setup([note('a'), note('b', { x: 400 })]);
    editor.setSelection(['a', 'b']);
    editor.handleKey(key('Delete'));
    expect(board.notes.size).toBe(0);
    expect(said.at(-1)).toBe('2 notes deleted. Press Ctrl+Z to undo.');
    editor.handleKey(key('z', { ctrlKey: true }));
    expect(board.notes.size).toBe(2);
    expect(said.at(-1)).toBe('Undid the deletion of 2 notes.');
  });
});

describe('focus and keys', () => {
  const grid = [note('c', { x: 0, y: 0 }), note('r', { x: 400, y: 30 }), note('far', { x: 900, y: 0 }), note('d', { x: 20, y: 400 }), note('diag', { x: 400, y: 380 })];

  it('arrows go to the nearest note in their direction and give it the focus', () => {
    const { editor, view } = setup(grid);
    editor.select('c');
    editor.handleKey(key('ArrowRight'));
    expect([...editor.getSnapshot().selected]).toEqual(['r']);
    expect(view.focused.at(-1)).toBe('r');
    expect(view.shown.at(-1)).toMatchObject({ x: 400, y: 30 });
    editor.handleKey(key('ArrowDown'));
    expect(editor.getSnapshot().focused).toBe('diag');
    editor.handleKey(key('ArrowLeft'));
    expect(editor.getSnapshot().focused).toBe('d');
    editor.handleKey(key('ArrowUp'));
    expect(editor.getSnapshot().focused).toBe('c');
  });

  it('says so when there is no note that way, and pans when nothing is selected', () => {
    const { editor, said, view } = setup(grid);
    editor.select('c');
    editor.handleKey(key('ArrowLeft'));
    expect(said.at(-1)).toBe('No note or frame to the left.');
    editor.clearSelection();
    editor.handleKey(key('ArrowLeft'));
    expect(view.panned).toEqual([[40, 0]]);
  });

  it('Enter edits in place, Shift+Enter opens the full editor', () => {
    const { editor } = setup(grid);
    expect(editor.handleKey(key('Enter'))).toBe(false);
    editor.select('r');
    editor.handleKey(key('Enter'));
    expect(editor.getSnapshot().editing).toEqual({ id: 'r', mode: 'inplace', draft: false });
    editor.handleKey(key('Enter', { shiftKey: true }));
    expect(editor.getSnapshot().editing?.mode).toBe('full');
  });

  it('a focused text field gets only the global keys', () => {
    const { editor } = setup(grid);
    expect(editor.handleKey(key('n'), true)).toBe(false);
    expect(editor.handleKey(key('f', { ctrlKey: true }), true)).toBe(true);
    expect(editor.getSnapshot().panel).toBe('search');
    editor.handleKey(key('?'));
    expect(editor.getSnapshot().panel).toBe('shortcuts');
  });

  it('every keymap action does something when it applies', () => {
    for (const b of KEYMAP) {
      const { editor } = setup(grid);
      editor.select('c');
      if (b.action === 'save' || b.action === 'cancel') editor.startEdit('c');
      if (b.action === 'connect') editor.select('r', true);
      expect(editor.run(b.action, key('ArrowRight')), b.action).toBe(true);
    }
  });

  it('the note tool puts a note where the canvas is clicked, then goes back to select', () => {
    const { editor } = setup();
    editor.setTool('note');
    editor.paneClick({ x: 1000, y: 1000 });
    const s = editor.getSnapshot();
    expect(s.draft).toMatchObject({ x: 1000 - DEFAULT_W / 2, y: 1000 - DEFAULT_H / 2 });
    expect(s.tool).toBe('select');
  });
});

describe('paste and search jumps', () => {
  it('pastes one note per paragraph at free spots, in one push and one undo step', () => {
    const { board, editor, said } = setup([note('x', { x: -110, y: -80 })]);
    expect(editor.paste('First idea\nwith detail\n\n- a point\n- another')).toBe(3);
    expect(board.batches).toBe(1);
    const titles = [...board.notes.values()].map((n) => n.title).sort();
    expect(titles).toEqual(['First idea', 'a point', 'another', 'x']);
    const rects = [...board.notes.values()].map(rectOf);
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i], rects[j])).toBe(false);
    expect(editor.getSnapshot().selected.size).toBe(3);
    expect(said.at(-1)).toBe('Pasted 3 notes. Press Ctrl+Z to undo.');
    editor.undo();
    expect(board.notes.size).toBe(1);
  });

  it('jumpTo reveals, selects and lights the note, and the light goes out', () => {
    const { editor, view, timers } = setup([note('far', { x: 5000, y: 5000 })]);
    editor.openPanel('search');
    editor.jumpTo('far');
    const s = editor.getSnapshot();
    expect(s.highlight).toBe('far');
    expect(s.panel).toBeNull();
    expect([...s.selected]).toEqual(['far']);
    expect(view.revealed.at(-1)).toMatchObject({ x: 5000, y: 5000 });
    expect(timers.at(-1)!.ms).toBe(HIGHLIGHT_MS);
    timers.at(-1)!.cb();
    expect(editor.getSnapshot().highlight).toBeNull();
  });
});

describe('undo that asks', () => {
  it('asks before undoing a creation others changed since; keep leaves the note', () => {
    const { board, editor, said } = setup();
    const id = editor.createNote()!;
    editor.type('title', 'Mine');
    editor.commitEdit();
    board.notes.set(id, { ...board.notes.get(id)!, content: 'theirs' });
    editor.undo();
    expect(editor.getSnapshot().asking?.kind).toBe('undo');
    editor.answerUndo(false);
    expect(board.notes.has(id)).toBe(true);
    expect(said.at(-1)).toBe('Nothing was undone: the note stays.');
  });
});

describe('a viewer', () => {
  it('keeps what was typed in place when the right to edit goes', () => {
    const { editor } = setup([note('n1')]);
    editor.startEdit('n1');
    editor.type('content', 'typed before the plan changed');
    editor.setCanEdit(false);
    expect(editor.getSnapshot().editing?.mode).toBe('full');
    expect(editor.getEdit()?.values.content).toBe('typed before the plan changed');
  });

  it('reads a note in the full editor, and moves, resizes and deletes nothing', () => {
    const { board, editor } = setup([note('n1', { x: 0, y: 0 })]);
    editor.setCanEdit(false);
    editor.select('n1');
    editor.handleKey(key('Enter'));
    expect(editor.getSnapshot().editing).toEqual({ id: 'n1', mode: 'full', draft: false });
    editor.closeEdit();
    expect(editor.handleKey(key('ArrowRight', { altKey: true }))).toBe(false);
    expect(editor.handleKey(key('ArrowRight', { shiftKey: true }))).toBe(false);
    expect(editor.handleKey(key('Delete'))).toBe(false);
    editor.resize([{ id: 'n1', w: 500, h: 500 }]);
    expect(editor.paste('a\n\nb')).toBe(0);
    expect(board.batches).toBe(0);
  });
});

describe('the note menu', () => {
  it('opens for a note (selecting it) from a right-click point or the keyboard, and Escape gives the focus back', () => {
    const { editor, view } = setup([note('a'), note('b', { x: 300 })]);
    editor.select('b');
    expect(editor.openMenu('a', { x: 10, y: 20 })).toBe(true);
    expect(editor.getSnapshot().menu).toEqual({ id: 'a', at: { x: 10, y: 20 } });
    expect([...editor.getSnapshot().selected]).toEqual(['a']);
    editor.closeMenu();
    expect(editor.getSnapshot().menu).toBeNull();
    expect(view.focused.at(-1)).toBe('a');
    // Shift+F10 and the menu key open it on the focused note, at the note.
    for (const k of [key('F10', { shiftKey: true }), key('ContextMenu')]) {
      editor.focus('b');
      expect(editor.handleKey(k)).toBe(true);
      expect(editor.getSnapshot().menu).toEqual({ id: 'b', at: null });
      // While it is open the board's keys are the menu's: Delete does not delete.
      expect(editor.handleKey(key('Delete'))).toBe(false);
      editor.closeMenu();
    }
    expect(editor.handleKey(key('F10'))).toBe(false);
  });

  it('does not open with nothing selected, for a draft, or while a note is edited', () => {
    const { editor } = setup([note('a')]);
    expect(editor.handleKey(key('ContextMenu'))).toBe(false);
    const id = editor.createNote()!;
    expect(editor.openMenu(id)).toBe(false);
    editor.cancelEdit();
    editor.startEdit('a');
    expect(editor.openMenu('a')).toBe(false);
    expect(editor.getSnapshot().menu).toBeNull();
  });

  it('lists every action to an editor and only Open and History to a viewer', () => {
    const { editor } = setup([note('a', { color: 'blue' })]);
    editor.setRights({ isOwner: false, role: 'edit', me: 'ed@x' });
    editor.openMenu('a');
    expect(editor.menuModel()).toEqual({
      entries: ['Edit in place', 'Open in the full editor', 'Duplicate', 'History', 'Delete'].map((label) => expect.objectContaining({ label })),
      colours: ['yellow', 'orange', 'pink', 'purple', 'blue', 'green', 'gray'],
      colour: 'blue',
      reason: null,
    });
    editor.setCanEdit(false);
    expect(editor.menuModel()).toEqual({ entries: [expect.objectContaining({ command: 'full' }), expect.objectContaining({ command: 'history' })], colours: [], colour: 'blue', reason: null });
  });

  it('edits in place, opens the full editor or the history of its note', () => {
    const { editor, histories } = setup([note('a')]);
    editor.openMenu('a');
    editor.chooseFromMenu('inplace');
    expect(editor.getSnapshot().editing).toEqual({ id: 'a', mode: 'inplace', draft: false });
    expect(editor.getSnapshot().menu).toBeNull();
    editor.closeEdit();
    editor.openMenu('a');
    editor.chooseFromMenu('full');
    expect(editor.getSnapshot().editing).toEqual({ id: 'a', mode: 'full', draft: false });
    editor.closeEdit();
    editor.openMenu('a');
    editor.chooseFromMenu('history');
    expect(histories).toEqual(['a']);
  });

  it('colours the note in one undoable push, keeping what someone else changed meanwhile', () => {
    const { board, editor } = setup([note('a', { color: 'yellow', title: 'T' })]);
    editor.openMenu('a');
    editor.chooseColour('green');
    expect(board.batches).toBe(1);
    expect(board.notes.get('a')).toMatchObject({ color: 'green', title: 'T' });
    expect(editor.getSnapshot().menu).toBeNull();
    board.notes.set('a', { ...board.notes.get('a')!, title: 'Theirs' });
    editor.undo();
    expect(board.notes.get('a')).toMatchObject({ color: 'yellow', title: 'Theirs' });
    // The colour it has already: nothing to push.
    editor.openMenu('a');
    editor.chooseColour('yellow');
    expect(board.batches).toBe(2);
  });

  it('duplicates at a free spot beside the note, size and all, selected, one undo step', () => {
    const { board, editor } = setup([note('a', { title: 'T', content: 'C', color: 'pink', type: 'idea', x: 0, y: 0, w: 300, h: 200 }), note('b', { x: 0, y: 400 })]);
    editor.openMenu('a');
    editor.chooseFromMenu('duplicate');
    expect(board.batches).toBe(1);
    expect(board.notes.size).toBe(3);
    const copy = board.notes.get('new1')!;
    expect(copy).toMatchObject({ title: 'T', content: 'C', color: 'pink', type: 'idea', w: 300, h: 200 });
    const rects = [...board.notes.values()].map(rectOf);
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i], rects[j])).toBe(false);
    // Beside it: within one note's size and a gap of the original.
    expect(Math.abs(copy.x) + Math.abs(copy.y)).toBeLessThanOrEqual(300 + 24 + 200 + 24);
    expect([...editor.getSnapshot().selected]).toEqual(['new1']);
    editor.undo();
    expect(board.notes.has('new1')).toBe(false);
  });

  it('deletes the note, undoably', () => {
    const { board, editor, said } = setup([note('a'), note('b', { x: 300 })]);
    editor.select('b');
    editor.openMenu('a');
    editor.chooseFromMenu('delete');
    expect([...board.notes.keys()]).toEqual(['b']);
    expect(said.at(-1)).toMatch(/1 note deleted/);
    editor.undo();
    expect(board.notes.has('a')).toBe(true);
  });

  it('closes when someone else deletes its note', () => {
    const { board, editor } = setup([note('a')]);
    editor.openMenu('a');
    board.deleteNote('a');
    editor.notesChanged();
    expect(editor.getSnapshot().menu).toBeNull();
  });
});

describe('long-press', () => {
  it('opens the menu after LONG_PRESS_MS without moving, and the finger up is then no tap', () => {
    const { editor, timers } = setup([note('a')]);
    editor.pressStart('a', { x: 100, y: 100 });
    editor.pressMove({ x: 104, y: 103 });
    expect(timers.at(-1)!.ms).toBe(LONG_PRESS_MS);
    expect(editor.getSnapshot().menu).toBeNull();
    timers.at(-1)!.cb();
    expect(editor.getSnapshot().menu).toEqual({ id: 'a', at: { x: 100, y: 100 } });
    expect(editor.pressEnd()).toBe(true);
  });

  it('opens nothing when the finger moves (a drag) or lifts first (a tap)', () => {
    for (const end of ['move', 'lift'] as const) {
      const { editor, timers } = setup([note('a')]);
      editor.pressStart('a', { x: 100, y: 100 });
      if (end === 'move') editor.pressMove({ x: 100, y: 120 });
      else expect(editor.pressEnd()).toBe(false);
      timers.at(-1)!.cb();
      expect(editor.getSnapshot().menu).toBeNull();
    }
  });
});

describe('double tap', () => {
  const tap = (editor: Editor, id: string, t: number, move = false) => {
    editor.pressStart(id, { x: 100, y: 100 });
    if (move) editor.pressMove({ x: 100, y: 160 });
    return editor.release(id, t);
  };

  it('edits a note tapped twice within DOUBLE_TAP_MS; slower, or on two notes, it does not', () => {
    const { editor } = setup([note('a'), note('b', { x: 500 })]);
    expect(tap(editor, 'a', 1000)).toBe('none');
    expect(tap(editor, 'a', 1000 + DOUBLE_TAP_MS + 1)).toBe('none');
    expect(tap(editor, 'b', 1000 + DOUBLE_TAP_MS + 50)).toBe('none');
    expect(editor.getSnapshot().editing).toBeNull();
    expect(tap(editor, 'b', 1000 + DOUBLE_TAP_MS + 100)).toBe('edit');
    expect(editor.getSnapshot().editing).toMatchObject({ id: 'b', mode: 'inplace' });
  });

  it('does not count the end of a drag (a move, or a connector dragged from the edge) as a first tap', () => {
    const { editor } = setup([note('a')]);
    expect(tap(editor, 'a', 1000, true)).toBe('none');
    expect(tap(editor, 'a', 1100)).toBe('none');
    expect(editor.getSnapshot().editing).toBeNull();
  });

  it('does not count the tap that ended the connect tool’s arrow: the next tap on that note selects it', () => {
    const { board, editor } = setup([note('a'), note('b', { x: 500 })]);
    editor.select('a');
    editor.connectSelected();
    expect(editor.getSnapshot().tool).toBe('connect');
    // The finger lifts on b (the tap's click then ends the arrow there, as xyflow selects b).
    expect(tap(editor, 'b', 1000)).toBe('none');
    editor.setSelection(['b']);
    expect(board.connectors.size).toBe(1);
    // Tapped again at once: selected, not edited.
    expect(tap(editor, 'b', 1100)).toBe('none');
    editor.setSelection(['b']);
    expect(editor.getSnapshot().editing).toBeNull();
    expect([...editor.getSnapshot().selected]).toEqual(['b']);
  });

  it('a tap selects the note tapped (the browser may make no click of it)', () => {
    const { editor } = setup([note('a'), note('b', { x: 500 })]);
    editor.setSelection(['a', 'b']);
    tap(editor, 'b', 1000);
    expect([...editor.getSnapshot().selected]).toEqual(['b']);
    tap(editor, 'a', 2000, true);
    expect([...editor.getSnapshot().selected]).toEqual(['b']);
  });

  it('a long press is no tap either', () => {
    const { editor, timers } = setup([note('a')]);
    editor.pressStart('a', { x: 100, y: 100 });
    timers.at(-1)!.cb();
    expect(editor.release('a', 1000)).toBe('menu');
    editor.closeMenu();
    expect(tap(editor, 'a', 1100)).toBe('none');
  });
});

describe('expand', () => {
  it('grows a cut note to what its content needs, one undoable push, never shrinking', () => {
    const { board, editor } = setup([note('a', { w: 300, h: 160 })]);
    editor.expand('a', { w: 250, h: 612.4 });
    expect(board.notes.get('a')).toMatchObject({ w: 300, h: 613 });
    expect(board.batches).toBe(1);
    editor.undo();
    expect(board.notes.get('a')).toMatchObject({ w: 300, h: 160 });
  });

  it('stops at the largest size a note may have', () => {
    const { board, editor } = setup([note('a')]);
    editor.expand('a', { w: DEFAULT_W, h: 90_000 });
    expect(board.notes.get('a')).toMatchObject({ w: DEFAULT_W, h: MAX_H });
    expect(MAX_H).toBe(4000);
  });
});

describe('locks and roles (docs/api.md, "Locks and roles")', () => {
  const owner = { isOwner: true, role: 'edit' as const, me: 'owner@x' };
  const ed = { isOwner: false, role: 'edit' as const, me: 'ed@x' };
  const adder = { isOwner: false, role: 'add' as const, me: 'add@x' };

  it('tells why a note may not change: a lock, or someone else\'s note for "can add notes" (no createdBy: the owner\'s)', () => {
    expect(noteReason(note('a', { locked: true }), owner)).toBeNull();
    expect(noteReason(note('a', { locked: true }), ed)).toBe(LOCKED_REASON);
    expect(noteReason(note('a'), ed)).toBeNull();
    expect(noteReason(note('a', { createdBy: 'add@x' }), adder)).toBeNull();
    expect(noteReason(note('a', { createdBy: 'owner@x' }), adder)).toBe(NOT_YOURS_REASON);
    expect(noteReason(note('a'), adder)).toBe(NOT_YOURS_REASON);
    expect(noteReason(note('a', { createdBy: 'add@x', locked: true }), adder)).toBe(LOCKED_REASON);
  });

  it('lets the owner lock and unlock a note from its menu, one undo step each', () => {
    const { board, editor } = setup([note('a')]);
    editor.setRights(owner);
    editor.openMenu('a');
    expect(editor.menuModel()!.entries.map((e) => e.label)).toContain('Lock');
    editor.chooseFromMenu('lock');
    expect(board.notes.get('a')!.locked).toBe(true);
    editor.openMenu('a');
    expect(editor.menuModel()!.entries.map((e) => e.label)).toContain('Unlock');
    editor.chooseFromMenu('unlock');
    expect(board.notes.get('a')!.locked).toBeUndefined();
    editor.undo();
    expect(board.notes.get('a')!.locked).toBe(true);
    // The owner still moves a locked note.
    editor.moveNotes([{ id: 'a', x: 300, y: 0 }]);
    expect(board.notes.get('a')!.x).toBe(300);
  });

  it('keeps an editor from moving, resizing, recolouring, deleting or editing a locked note, and says why', () => {
    const { board, editor, said } = setup([note('a', { locked: true, x: 0 }), note('b', { x: 500 })]);
    editor.setRights(ed);
    editor.moveNotes([{ id: 'a', x: 300, y: 0 }, { id: 'b', x: 700, y: 0 }]);
    expect(board.notes.get('a')!.x).toBe(0);
    expect(board.notes.get('b')!.x).toBe(700);
    expect(said.at(-1)).toBe(LOCKED_REASON);
    expect(editor.getSnapshot().refused).toEqual({ id: 'a', message: LOCKED_REASON });
    editor.resize([{ id: 'a', w: 400, h: 300 }]);
    expect(board.notes.get('a')!.w).toBeUndefined();
    editor.setColour('a', 'pink');
    expect(board.notes.get('a')!.color).not.toBe('pink');
    editor.setSelection(['a', 'b']);
    editor.deleteSelected();
    expect([...board.notes.keys()]).toEqual(['a', 'b']);
    editor.startEdit('a');
    expect(editor.getSnapshot().editing).toMatchObject({ id: 'a', mode: 'full' });
    editor.closeEdit();
    editor.openMenu('a');
    const m = editor.menuModel()!;
    expect(m.entries.map((e) => e.command)).toEqual(['full', 'duplicate', 'history']);
    expect(m.reason).toBe(LOCKED_REASON);
    expect(m.colours).toEqual([]);
  });

  it('lets a "can add notes" invitee change their own notes only, and no frames or connectors', () => {
    const { board, editor, said } = setup([note('mine', { createdBy: 'add@x' }), note('theirs', { createdBy: 'owner@x', x: 600 })]);
    editor.setRights(adder);
    editor.moveNotes([{ id: 'mine', x: 40, y: 0 }]);
    expect(board.notes.get('mine')!.x).toBe(40);
    editor.moveNotes([{ id: 'theirs', x: 900, y: 0 }]);
    expect(board.notes.get('theirs')!.x).toBe(600);
    expect(said.at(-1)).toBe(NOT_YOURS_REASON);
    expect(editor.createFrame()).toBeNull();
    expect(said.at(-1)).toBe(NOT_NOTES_REASON);
    expect(editor.connect('mine', 'theirs')).toBeNull();
    expect(board.connectors.size).toBe(0);
    // A new note is theirs to type into.
    const id = editor.createNote()!;
    expect(editor.getSnapshot().editing).toMatchObject({ id, mode: 'inplace' });
  });
});
