import { describe, expect, it } from 'vitest';
import type { Connector, Frame, Note, TrackerItem } from '../api/types';
import { UndoHistory, type UndoStore } from '../canvas/undo';
import { connector, frame, note } from '../sync/testing';
import { Editor, type EditorView } from './Editor';
import type { Rect } from './geometry';
import { KEYMAP, type KeyLike } from './keymap';
import { search } from './search';
import { FRAME_PAD, FRAME_TITLE_H, MIN_FRAME, drawOrder, drawable, frameAround, members, nextFrameTitle, outline, touching } from './structure';

/** Board is an in-memory store of all four kinds that counts its pushes (one batch = one push). */
class Board implements UndoStore {
  notes = new Map<string, Note>();
  items = new Map<string, TrackerItem>();
  connectors = new Map<string, Connector>();
  frames = new Map<string, Frame>();
  batches = 0;
  getSnapshot = () => ({ notes: this.notes, items: this.items, connectors: this.connectors, frames: this.frames });
  private put<T extends { id: string }>(m: 'notes' | 'items' | 'connectors' | 'frames', r: T): T {
    const row = { ...r, updatedAt: 'now' };
    (this[m] as Map<string, unknown>) = new Map(this[m] as Map<string, unknown>).set(r.id, row);
    return row;
  }
  private del(m: 'notes' | 'items' | 'connectors' | 'frames', id: string) {
    const next = new Map(this[m] as Map<string, unknown>);
    next.delete(id);
    (this[m] as Map<string, unknown>) = next;
  }
  upsertNote = (n: Note) => this.put('notes', n);
  deleteNote = (id: string) => this.del('notes', id);
  upsertItem = (i: TrackerItem) => this.put('items', i);
  deleteItem = (id: string) => this.del('items', id);
  upsertConnector = (c: Connector) => this.put('connectors', c);
  deleteConnector = (id: string) => this.del('connectors', id);
  upsertFrame = (f: Frame) => this.put('frames', f);
  deleteFrame = (id: string) => this.del('frames', id);
  batch(fn: () => void) {
    this.batches++;
    fn();
  }
}

const view = (): EditorView & { fitted: Rect[] } => {
  const fitted: Rect[] = [];
  return { fitted, visible: () => ({ x: -500, y: -300, w: 1000, h: 600 }), reveal: () => {}, show: () => {}, focusNote: () => {}, pan: () => {}, zoomIn: () => {}, zoomOut: () => {}, fit: () => {}, fitRect: (r) => void fitted.push(r) };
};

function setup(o: { notes?: Note[]; connectors?: Connector[]; frames?: Frame[]; canEdit?: boolean } = {}) {
  const board = new Board();
  o.notes?.forEach((n) => board.notes.set(n.id, n));
  o.connectors?.forEach((c) => board.connectors.set(c.id, c));
  o.frames?.forEach((f) => board.frames.set(f.id, f));
  const said: string[] = [];
  let next = 0;
  const editor = new Editor({ store: board, undo: new UndoHistory(board), announce: (m) => said.push(m), newId: () => `new${++next}` });
  const v = view();
  editor.setView(v);
  if (o.canEdit === false) editor.setCanEdit(false);
  return { board, editor, said, view: v };
}

const key = (k: string, mods: Partial<KeyLike> = {}): KeyLike => ({ key: k, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });

describe('connectors', () => {
  it('connects two notes with one push and one undo step, and undo and redo take it away and back', () => {
    const { board, editor } = setup({ notes: [note('a'), note('b', { x: 400 })] });
    const id = editor.connect('a', 'b')!;
    expect(board.connectors.get(id)).toMatchObject({ from: 'a', to: 'b', style: 'arrow', dash: 'solid', label: '' });
    expect(board.batches).toBe(1);
    expect([...editor.getSnapshot().selected]).toEqual([id]);
    editor.undo();
    expect(board.connectors.size).toBe(0);
    editor.redo();
    expect(board.connectors.get(id)?.to).toBe('b');
  });

  it('refuses a connector to itself, to nothing, a second identical one, and for a viewer', () => {
    const { board, editor } = setup({ notes: [note('a'), note('b')] });
    expect(editor.connect('a', 'a')).toBeNull();
    expect(editor.connect('a', 'gone')).toBeNull();
    const id = editor.connect('a', 'b');
    expect(editor.connect('a', 'b')).toBe(id);
    expect(board.connectors.size).toBe(1);
    const viewer = setup({ notes: [note('a'), note('b')], canEdit: false });
    expect(viewer.editor.connect('a', 'b')).toBeNull();
  });

  it('C connects the two selected notes, in the order they were selected; with none it says what to do', () => {
    const { board, editor, said } = setup({ notes: [note('a'), note('b'), note('f')] });
    expect(editor.handleKey(key('c'))).toBe(false);
    expect(said.at(-1)).toMatch(/Select a note/);
    editor.select('b');
    editor.select('a', true);
    expect(editor.handleKey(key('c'))).toBe(true);
    expect([...board.connectors.values()][0]).toMatchObject({ from: 'b', to: 'a' });
  });

  it('deleting a note deletes its connectors in the same push, and undo brings both back', () => {
    const { board, editor, said } = setup({ notes: [note('a'), note('b'), note('c')], connectors: [connector('ab', 'a', 'b'), connector('bc', 'b', 'c'), connector('ac', 'a', 'c')] });
    editor.select('b');
    editor.deleteSelected();
    expect(board.batches).toBe(1);
    expect([...board.notes.keys()]).toEqual(['a', 'c']);
    expect([...board.connectors.keys()]).toEqual(['ac']);
    expect(said.at(-1)).toBe('1 note and 2 connectors deleted. Press Ctrl+Z to undo.');
    editor.undo();
    expect([...board.notes.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect([...board.connectors.keys()].sort()).toEqual(['ab', 'ac', 'bc']);
  });

  it('a selected connector is deleted alone, its notes stay', () => {
    const { board, editor } = setup({ notes: [note('a'), note('b')], connectors: [connector('ab', 'a', 'b')] });
    editor.setSelection(['ab']);
    editor.handleKey(key('Delete'));
    expect(board.connectors.size).toBe(0);
    expect(board.notes.size).toBe(2);
  });

  it('relabels (trimmed, at most 200 characters) and restyles, each one undo step on the row as it is now', () => {
    const { board, editor } = setup({ notes: [note('a'), note('b')], connectors: [connector('ab', 'a', 'b')] });
    editor.setSelection(['ab']);
    editor.handleKey(key('Enter'));
    expect(editor.getSnapshot().naming).toEqual({ kind: 'connector', id: 'ab' });
    editor.commitName('  needs ' + 'x'.repeat(300));
    expect([...board.connectors.get('ab')!.label].length).toBe(200);
    editor.setConnector('ab', { style: 'line', dash: 'dashed', color: 'blue' });
    expect(board.connectors.get('ab')).toMatchObject({ style: 'line', dash: 'dashed', color: 'blue' });
    const before = board.batches;
    editor.setConnector('ab', { style: 'line' });
    expect(board.batches).toBe(before); // nothing changed: no push
    editor.undo();
    expect(board.connectors.get('ab')).toMatchObject({ style: 'arrow', dash: 'solid', color: 'gray' });
  });
});

describe('frames', () => {
  const three = [note('a', { x: 0, y: 0 }), note('b', { x: 300, y: 0 }), note('c', { x: 0, y: 250 }), note('out', { x: 2000, y: 2000 })];

  it('F makes a frame around the selected notes, titled Frame N, with its title ready to type', () => {
    const { board, editor } = setup({ notes: three, frames: [frame('f0', { title: 'Frame 4', x: -5000 })] });
    editor.setSelection(['a', 'b', 'c']);
    expect(editor.handleKey(key('f'))).toBe(true);
    const f = [...board.frames.values()].find((x) => x.id !== 'f0')!;
    expect(f.title).toBe('Frame 5');
    expect(f).toMatchObject({ x: -FRAME_PAD, y: -FRAME_PAD - FRAME_TITLE_H, w: 520 + 2 * FRAME_PAD, h: 410 + 2 * FRAME_PAD + FRAME_TITLE_H, locked: false });
    expect(members(f, board.notes.values()).map((n) => n.id)).toEqual(['a', 'b', 'c']);
    expect(editor.getSnapshot().naming).toEqual({ kind: 'frame', id: f.id });
    editor.commitName('Launch');
    expect(board.frames.get(f.id)?.title).toBe('Launch');
  });

  it('with nothing selected the frame goes to the middle of the view, smaller on a small screen', () => {
    const { board, editor, view } = setup();
    const id = editor.createFrame()!;
    expect(board.frames.get(id)).toMatchObject({ x: -320, y: -200, w: 640, h: 400 });
    view.visible = () => ({ x: 0, y: 0, w: 390, h: 700 });
    const small = editor.createFrame()!;
    expect(board.frames.get(small)).toMatchObject({ x: 39, y: 150, w: 312, h: 400 });
  });

  it('dragging a frame moves the notes inside it: previewed, then one push and one undo step', () => {
    const { board, editor } = setup({ notes: three, frames: [frame('f', { x: -50, y: -50, w: 700, h: 600 })] });
    editor.previewMove(new Map([['f', { x: 50, y: 0 }]]));
    const moving = editor.getSnapshot().moving;
    expect(moving.get('a')).toEqual({ x: 100, y: 50 });
    expect(moving.has('out')).toBe(false);
    editor.moveNotes([{ id: 'f', x: 50, y: 0 }]);
    expect(board.batches).toBe(1);
    expect(board.frames.get('f')).toMatchObject({ x: 50, y: 0 });
    expect(['a', 'b', 'c', 'out'].map((id) => [board.notes.get(id)!.x, board.notes.get(id)!.y])).toEqual([[100, 50], [400, 50], [100, 300], [2000, 2000]]);
    editor.undo();
    expect(board.frames.get('f')).toMatchObject({ x: -50, y: -50 });
    expect(board.notes.get('b')).toMatchObject({ x: 300, y: 0 });
  });

  it('dragging a frame moves the frames inside it and their notes, each once, in one push and one undo step', () => {
    // outer holds mid, which holds inner; a holds... a is in inner (and so in mid and outer); b in mid only; out in none.
    const { board, editor } = setup({
      notes: [note('a', { x: 100, y: 100 }), note('b', { x: 500, y: 100 }), note('out', { x: 3000, y: 0 })],
      frames: [
        frame('outer', { x: 0, y: 0, w: 2000, h: 1000 }),
        frame('mid', { x: 50, y: 50, w: 900, h: 500 }),
        frame('inner', { x: 80, y: 80, w: 300, h: 300, locked: true }),
        frame('beside', { x: 2500, y: 0, w: 400, h: 400 }),
        // Overlapping outer but not wholly inside it: not held.
        frame('across', { x: 1900, y: 900, w: 400, h: 400 }),
      ],
    });
    editor.previewMove(new Map([['outer', { x: 30, y: 40 }]]));
    const moving = editor.getSnapshot().moving;
    expect(moving.get('mid')).toEqual({ x: 80, y: 90 });
    expect(moving.get('inner')).toEqual({ x: 110, y: 120 });
    expect(moving.get('a')).toEqual({ x: 130, y: 140 });
    expect(['beside', 'across', 'out'].some((id) => moving.has(id))).toBe(false);
    editor.moveNotes([{ id: 'outer', x: 30, y: 40 }]);
    expect(board.batches).toBe(1);
    const at = (m: Map<string, { x: number; y: number }>, id: string) => [m.get(id)!.x, m.get(id)!.y];
    expect(['outer', 'mid', 'inner', 'beside', 'across'].map((id) => at(board.frames, id))).toEqual([[30, 40], [80, 90], [110, 120], [2500, 0], [1900, 900]]);
    expect(['a', 'b', 'out'].map((id) => at(board.notes, id))).toEqual([[130, 140], [530, 140], [3000, 0]]);
    editor.undo();
    expect(['outer', 'mid', 'inner'].map((id) => at(board.frames, id))).toEqual([[0, 0], [50, 50], [80, 80]]);
    expect(at(board.notes, 'a')).toEqual([100, 100]);
  });

  it('a frame and the frame inside it dragged together (both selected) move by the drag, not twice', () => {
    const { board, editor } = setup({
      notes: [note('a', { x: 100, y: 100 })],
      frames: [frame('outer', { x: 0, y: 0, w: 2000, h: 1000 }), frame('mid', { x: 50, y: 50, w: 900, h: 500 })],
    });
    editor.moveNotes([{ id: 'outer', x: 100, y: 0 }, { id: 'mid', x: 150, y: 50 }]);
    expect(board.frames.get('mid')).toMatchObject({ x: 150, y: 50 });
    expect(board.notes.get('a')).toMatchObject({ x: 200, y: 100 });
  });

  it('stacks frames largest first, so a frame inside another is drawn over it', () => {
    const fs = [frame('small', { w: 300, h: 300 }), frame('big', { w: 3000, h: 2000 }), frame('mid', { w: 900, h: 500 })];
    expect(drawOrder(fs).map((f) => f.id)).toEqual(['big', 'mid', 'small']);
  });

  it('two frames of the same box do not carry each other', () => {
    const { board, editor } = setup({ frames: [frame('f1', { x: 0, y: 0, w: 500, h: 500 }), frame('f2', { x: 0, y: 0, w: 500, h: 500 })] });
    editor.moveNotes([{ id: 'f1', x: 100, y: 0 }]);
    expect(board.frames.get('f2')).toMatchObject({ x: 0, y: 0 });
  });

  it('membership is where a note is: one dropped into a frame moves with it, one dragged out does not', () => {
    const { board, editor } = setup({ notes: three, frames: [frame('f', { x: -50, y: -50, w: 700, h: 600 })] });
    editor.moveNotes([{ id: 'out', x: 100, y: 100 }]); // dropped in
    editor.moveNotes([{ id: 'a', x: 3000, y: 0 }]); // dragged out
    editor.moveNotes([{ id: 'f', x: -50, y: 950 }]);
    expect(board.notes.get('out')).toMatchObject({ x: 100, y: 1100 });
    expect(board.notes.get('a')).toMatchObject({ x: 3000, y: 0 });
  });

  it('a locked frame neither moves nor resizes; unlocked it does', () => {
    const { board, editor, said } = setup({ notes: three, frames: [frame('f', { x: -50, y: -50, w: 700, h: 600 })] });
    editor.setFrame('f', { locked: true });
    expect(said.at(-1)).toMatch(/locked/);
    editor.moveNotes([{ id: 'f', x: 500, y: 500 }]);
    editor.resizeFrame('f', { x: -50, y: -50, w: 900, h: 900 });
    expect(board.frames.get('f')).toMatchObject({ x: -50, y: -50, w: 700, h: 600 });
    expect(board.notes.get('a')).toMatchObject({ x: 0, y: 0 });
    editor.setFrame('f', { locked: false });
    editor.resizeFrame('f', { x: -50, y: -50, w: 10, h: 900 });
    expect(board.frames.get('f')).toMatchObject({ w: MIN_FRAME, h: 900 });
  });

  it('renames (an empty name keeps the old one), colours, zooms to a frame, and deletes it without its notes', () => {
    const { board, editor, view } = setup({ notes: three, frames: [frame('f', { title: 'Risks', x: -50, y: -50, w: 700, h: 600 })], connectors: [connector('fa', 'f', 'out')] });
    editor.startNaming('frame', 'f');
    editor.commitName('   ');
    expect(board.frames.get('f')?.title).toBe('Risks');
    editor.setFrame('f', { color: 'blue' });
    expect(board.frames.get('f')?.color).toBe('blue');
    editor.zoomToFrame('f');
    expect(view.fitted).toEqual([{ x: -50, y: -50, w: 700, h: 600 }]);
    editor.deleteSelected();
    expect(board.frames.size).toBe(0);
    expect(board.connectors.size).toBe(0);
    expect(board.notes.size).toBe(4);
  });

  it('a selection keeps frames and connectors when the board changes', () => {
    const { editor } = setup({ notes: three, frames: [frame('f')], connectors: [connector('ab', 'a', 'b')] });
    editor.setSelection(['f', 'ab', 'a']);
    editor.notesChanged();
    expect(editor.getSnapshot().selected.size).toBe(3);
  });
});

describe('structure helpers', () => {
  it('touching and drawable find the connectors of rows that go', () => {
    const cs = [connector('ab', 'a', 'b'), connector('bc', 'b', 'c')];
    expect(touching(new Set(['c']), cs).map((c) => c.id)).toEqual(['bc']);
    const notes = new Map([['a', 1], ['b', 1]]);
    expect(cs.map((c) => drawable(c, notes, new Map()))).toEqual([true, false]);
  });

  it('frameAround and nextFrameTitle', () => {
    expect(frameAround([{ x: 0, y: 0, w: 10, h: 10 }])).toEqual({ x: -FRAME_PAD, y: -FRAME_PAD - FRAME_TITLE_H, w: 10 + 2 * FRAME_PAD, h: 10 + 2 * FRAME_PAD + FRAME_TITLE_H });
    expect(nextFrameTitle([frame('x', { title: 'Frame 2' }), frame('y', { title: 'Ideas' })])).toBe('Frame 3');
  });

  it('outline lists frames top to bottom with their notes, a note in nested frames under the smaller, then the rest', () => {
    const big = frame('big', { title: 'Big', x: 0, y: 0, w: 2000, h: 2000 });
    const small = frame('small', { title: 'Small', x: 0, y: 0, w: 400, h: 400 });
    const top = frame('top', { title: 'Top', x: 5000, y: -500, w: 400, h: 400 });
    const o = outline([big, small, top], [note('in-small', { x: 10, y: 10 }), note('in-big', { x: 1000, y: 1000 }), note('loose', { x: -900, y: 0 })]);
    expect(o.map((e) => [e.frame?.id ?? null, e.notes.map((n) => n.id)])).toEqual([
      ['top', []],
      ['big', ['in-big']],
      ['small', ['in-small']],
      [null, ['loose']],
    ]);
  });

  it('search finds frames by title, first', () => {
    const r = search('risk', [note('n', { title: 'Risk register' })], [], 50, [frame('f', { title: 'Risks' })]);
    expect(r.map((x) => [x.kind, x.id])).toEqual([['frame', 'f'], ['note', 'n']]);
  });

  it('every new action has a key in the keymap', () => {
    for (const a of ['frame', 'connect', 'outline']) expect(KEYMAP.some((b) => b.action === a)).toBe(true);
  });
});

describe('the connect tool', () => {
  it('with one note selected, Connect waits for the next note selected and draws the arrow to it', () => {
    const { board, editor, said } = setup({ notes: [note('a'), note('b'), note('c')] });
    editor.select('a');
    expect(editor.connectSelected()).toBeNull();
    expect(editor.getSnapshot()).toMatchObject({ tool: 'connect', connectFrom: 'a' });
    expect(said.at(-1)).toMatch(/tap or click the note/);
    editor.setSelection(['b']);
    expect([...board.connectors.values()].map((c) => [c.from, c.to])).toEqual([['a', 'b']]);
    expect(editor.getSnapshot()).toMatchObject({ tool: 'select', connectFrom: null });
  });

  it('Escape or a click on the empty canvas stops it without an arrow', () => {
    const { board, editor } = setup({ notes: [note('a'), note('b')] });
    editor.select('a');
    editor.connectSelected();
    editor.handleKey(key('Escape'));
    expect(editor.getSnapshot()).toMatchObject({ tool: 'select', connectFrom: null });
    editor.select('a');
    editor.connectSelected();
    editor.paneClick({ x: 0, y: 0 });
    editor.setSelection(['b']);
    expect(board.connectors.size).toBe(0);
  });
});

describe('the keyboard on connectors and frames', () => {
  // hub is joined to three notes: north (above), east, south; far is joined to nothing.
  const board = () =>
    setup({
      notes: [note('hub', { title: 'Hub', x: 0, y: 0 }), note('north', { title: 'North', x: 0, y: -400 }), note('east', { title: 'East', x: 600, y: 0 }), note('south', { title: 'South', x: 0, y: 400 }), note('far', { title: 'Far', x: 3000, y: 3000 })],
      connectors: [connector('c-south', 'hub', 'south'), connector('c-north', 'north', 'hub', { label: 'feeds' }), connector('c-east', 'hub', 'east'), connector('c-other', 'north', 'east')],
    });
  const sel = (e: { getSnapshot(): { selected: ReadonlySet<string> } }) => [...e.getSnapshot().selected];

  it('L goes through the selected note’s connectors, top to bottom by their other end, and round; Shift+L goes back', () => {
    const { editor, said } = board();
    editor.select('hub');
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      expect(editor.handleKey(key('l'))).toBe(true);
      seen.push(sel(editor)[0]);
    }
    expect(seen).toEqual(['c-north', 'c-east', 'c-south', 'c-north']);
    expect(said.at(-1)).toBe('Connector 1 of 3: North → Hub (“feeds”). Enter relabels it, Delete removes it, Escape goes back to Hub.');
    editor.handleKey(key('L', { shiftKey: true }));
    expect(sel(editor)).toEqual(['c-south']);
  });

  it('Enter relabels the connector reached, Delete removes it and the keyboard is back on the note, Escape goes back too', () => {
    const { board: b, editor } = board();
    editor.select('hub');
    editor.handleKey(key('l'));
    editor.handleKey(key('Enter'));
    expect(editor.getSnapshot().naming).toEqual({ kind: 'connector', id: 'c-north' });
    editor.commitName('supplies');
    expect(b.connectors.get('c-north')!.label).toBe('supplies');
    editor.handleKey(key('l'));
    expect(sel(editor)).toEqual(['c-east']);
    editor.handleKey(key('Delete'));
    expect(b.connectors.has('c-east')).toBe(false);
    expect(b.notes.has('east')).toBe(true);
    expect(sel(editor)).toEqual(['hub']);
    editor.handleKey(key('l'));
    editor.handleKey(key('Escape'));
    expect(sel(editor)).toEqual(['hub']);
    // From a connector, the arrows start at its note.
    editor.handleKey(key('l'));
    editor.handleKey(key('ArrowDown'));
    expect(sel(editor)).toEqual(['south']);
  });

  it('L on a note without connectors says so, and without a selection asks for one', () => {
    const { editor, said } = board();
    editor.select('far');
    expect(editor.handleKey(key('l'))).toBe(true);
    expect(said.at(-1)).toBe('Far has no connectors.');
    expect(sel(editor)).toEqual(['far']);
    editor.clearSelection();
    expect(editor.handleKey(key('l'))).toBe(false);
  });

  it('the arrows reach frames by their title bar, and leave them to the notes', () => {
    const { editor, view } = setup({
      notes: [note('inside', { x: 40, y: 80 }), note('below', { x: 40, y: 700 })],
      frames: [frame('f', { title: 'Risks', x: 0, y: 0, w: 700, h: 500 })],
    });
    const focused: string[] = [];
    view.focusNote = (id) => void focused.push(id);
    editor.select('inside');
    editor.handleKey(key('ArrowUp'));
    expect(sel(editor)).toEqual(['f']);
    expect(focused.at(-1)).toBe('f');
    editor.handleKey(key('ArrowDown'));
    expect(sel(editor)).toEqual(['inside']);
    editor.handleKey(key('ArrowDown'));
    expect(sel(editor)).toEqual(['below']);
  });

  it('the shortcuts panel lists L', () => {
    expect(KEYMAP.find((b) => b.action === 'connectors')?.keys).toEqual(['L', 'Shift+L']);
  });
});
