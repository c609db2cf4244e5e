import { describe, expect, it } from 'vitest';
import type { Connector, Frame, Note, TrackerItem } from '../api/types';
import { SyncClient } from '../sync/client';
import { mergeNote } from '../sync/merge';
import { MemoryStore } from '../sync/store';
import { FakeClock, FakeLive, FakeServer, note, settle } from '../sync/testing';
import { UNDO_LIMIT, UndoHistory, changedFields, revertField, type UndoResult, type UndoStore } from './undo';

/** Board is an in-memory store; others() changes it the way an edit arriving from someone else would. */
class Board implements UndoStore {
  notes = new Map<string, Note>();
  items = new Map<string, TrackerItem>();
  connectors = new Map<string, Connector>();
  frames = new Map<string, Frame>();
  batches = 0;
  writes = 0;
  getSnapshot = () => ({ notes: this.notes, items: this.items, connectors: this.connectors, frames: this.frames });
  upsertNote(n: Note, base?: Note): Note {
    // An edit made on an older base is merged into the note now, as the
    // sync engine does; like SyncClient, the row returned is the one queued.
    const cur = this.notes.get(n.id);
    const r = { ...n, updatedAt: 'now' };
    this.notes.set(n.id, base && cur ? { ...mergeNote(base, cur, r).merged, version: cur.version } : r);
    this.writes++;
    return r;
  }
  deleteNote(id: string) {
    this.notes.delete(id);
    this.writes++;
  }
  upsertItem(i: TrackerItem): TrackerItem {
    const r = { ...i, updatedAt: 'now' };
    this.items.set(i.id, r);
    this.writes++;
    return r;
  }
  deleteItem(id: string) {
    this.items.delete(id);
    this.writes++;
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
  /** others changes a note as someone else's edit would (not through the history). */
  others(id: string, change: Partial<Note>) {
    this.notes.set(id, { ...this.notes.get(id)!, ...change, version: (this.notes.get(id)!.version ?? 0) + 1 });
  }
}

function setup(notes: Note[] = [note('n1', { title: 'Old title', content: 'one\ntwo\nthree', x: 10, y: 20 })]) {
  const board = new Board();
  for (const n of notes) board.notes.set(n.id, { ...n, version: 1 });
  const h = new UndoHistory(board);
  const edit = (id: string, change: Partial<Note>, label = 'edit') => h.transact(label, (r) => r.upsertNote({ ...board.notes.get(id)!, ...change }));
  return { board, h, edit, n: (id = 'n1') => board.notes.get(id) };
}

const done = (r: UndoResult) => {
  expect(r.kind).toBe('done');
  return r as Extract<UndoResult, { kind: 'done' }>;
};

describe('UndoHistory', () => {
  it('reverts only the fields I changed, on top of what others did since', () => {
    const { board, h, edit, n } = setup();
    edit('n1', { title: 'New title' });
    board.others('n1', { content: 'theirs', color: 'blue' });
    expect(done(h.undo())).toEqual({ kind: 'done', label: 'edit' });
    expect(n()).toMatchObject({ title: 'Old title', content: 'theirs', color: 'blue' });
    expect(board.batches).toBe(2); // the edit and its undo: one push each
  });

  it('leaves a field someone else has since replaced as they left it', () => {
    const { board, h, edit, n } = setup();
    edit('n1', { title: 'Mine', color: 'blue', x: 50, y: 60 });
    board.others('n1', { title: 'Theirs', color: 'green', x: 50, y: 99 });
    done(h.undo());
    // The title's one line was changed by both: theirs stays. Colour and
    // position too (x and y are one value: they moved it after me).
    expect(n()).toMatchObject({ title: 'Theirs', color: 'green', x: 50, y: 99 });
  });

  it('reverts a text others edited since line by line, keeping their lines', () => {
    const { board, h, edit, n } = setup();
    edit('n1', { content: 'ONE\ntwo\nthree' });
    board.others('n1', { content: 'ONE\ntwo\nthree\nfour' });
    done(h.undo());
    expect(n()!.content).toBe('one\ntwo\nthree\nfour');
    // And redo puts my line back, still keeping theirs.
    board.others('n1', { content: 'one\n2\nthree\nfour' });
    done(h.redo());
    expect(n()!.content).toBe('ONE\n2\nthree\nfour');
  });

  it('redoes with the same rule, and a new step empties the redo stack', () => {
    const { board, h, edit, n } = setup();
    edit('n1', { title: 'A' });
    edit('n1', { color: 'pink' }, 'colour');
    expect(done(h.undo()).label).toBe('colour');
    expect(done(h.undo()).label).toBe('edit');
    expect(n()).toMatchObject({ title: 'Old title', color: 'yellow' });
    expect(h.undo()).toEqual({ kind: 'empty' });
    board.others('n1', { content: 'theirs' });
    done(h.redo());
    expect(n()).toMatchObject({ title: 'A', color: 'yellow', content: 'theirs' });
    expect(h.canRedo).toBe(true);
    edit('n1', { type: 'idea' });
    expect(h.canRedo).toBe(false);
    expect(h.redo()).toEqual({ kind: 'empty' });
  });

  it('moves x and y back together', () => {
    const { h, n } = setup([note('a', { x: 0, y: 0 }), note('b', { x: 100, y: 0 })]);
    h.transact('move of 2 notes', (r) => {
      r.upsertNote({ ...n('a')!, x: 10, y: 10 });
      r.upsertNote({ ...n('b')!, x: 110, y: 10 });
    });
    done(h.undo());
    expect([n('a')!.x, n('a')!.y, n('b')!.x, n('b')!.y]).toEqual([0, 0, 100, 0]);
  });

  it('undoes a creation by deleting the note, and redo brings it back', () => {
    const { board, h, n } = setup([]);
    h.transact('new note', (r) => r.upsertNote(note('c1', { title: '' })));
    h.transact('edit', (r) => r.upsertNote({ ...n('c1')!, title: 'Mine' }));
    done(h.undo());
    expect(n('c1')!.title).toBe('');
    done(h.undo());
    expect(board.notes.has('c1')).toBe(false);
    done(h.redo());
    expect(n('c1')).toMatchObject({ id: 'c1', title: '' });
  });

  it('asks before undoing the creation of a note others have changed, and Keep it undoes nothing', () => {
    const { board, h, n } = setup([]);
    h.transact('new note', (r) => r.upsertNote(note('c1', { content: 'mine' })));
    board.others('c1', { content: 'mine\ntheirs' });
    const writes = board.writes;
    const r = h.undo();
    if (r.kind !== 'confirm') throw new Error(`expected a question, got ${r.kind}`);
    expect([r.title, r.text]).toEqual(['Delete this note?', 'Others have changed this note since you created it.']);
    expect(board.writes).toBe(writes); // nothing done while asking
    r.keep();
    expect(n('c1')!.content).toBe('mine\ntheirs');
    expect([h.canUndo, h.canRedo]).toEqual([false, false]);
    expect(board.writes).toBe(writes);
  });

  it('deletes the note others changed when the person says Delete; redo brings it back with their change', () => {
    const { board, h, n } = setup([]);
    h.transact('new note', (r) => r.upsertNote(note('c1', { content: 'mine' })));
    board.others('c1', { color: 'green' });
    const r = h.undo();
    if (r.kind !== 'confirm') throw new Error('expected a question');
    expect(r.proceed()).toEqual({ kind: 'done', label: 'new note' });
    expect(board.notes.has('c1')).toBe(false);
    done(h.redo());
    expect(n('c1')).toMatchObject({ content: 'mine', color: 'green' });
  });

  it('does not ask when the note I created is as I left it', () => {
    const { board, h } = setup([]);
    h.transact('new note', (r) => r.upsertNote(note('c1')));
    // The server's copy of it carries a version and its own updatedAt: not a change.
    board.notes.set('c1', { ...board.notes.get('c1')!, version: 7, updatedAt: 'later' });
    done(h.undo());
    expect(board.notes.has('c1')).toBe(false);
  });

  it('undoes a deletion: the notes come back as they were when I deleted them', () => {
    const { board, h, n } = setup([note('a', { title: 'A', content: 'text', tags: ['x'] }), note('b', { title: 'B' })]);
    h.transact('deletion of 2 notes', (r) => {
      r.deleteNote('a');
      r.deleteNote('b');
    });
    expect(board.notes.size).toBe(0);
    done(h.undo());
    expect(n('a')).toMatchObject({ title: 'A', content: 'text', tags: ['x'] });
    expect(n('b')).toMatchObject({ title: 'B' });
    done(h.redo());
    expect(board.notes.size).toBe(0);
  });

  it('leaves a note someone brought back meanwhile as it is, and a note someone deleted stays deleted', () => {
    const { board, h, edit, n } = setup([note('a', { title: 'A' }), note('b', { title: 'B' })]);
    h.transact('deletion', (r) => r.deleteNote('a'));
    board.notes.set('a', note('a', { title: 'Revived by them', version: 5 }));
    done(h.undo());
    expect(n('a')!.title).toBe('Revived by them');

    edit('b', { title: 'B2' });
    board.notes.delete('b');
    done(h.undo());
    expect(board.notes.has('b')).toBe(false);
  });

  it('records only my fields for a save made on an older base (the editor), so undo leaves the rest', () => {
    const { board, h, n } = setup();
    const opened = n()!;
    board.others('n1', { content: 'one\ntwo\nthree\nfour', color: 'blue' });
    h.transact('edit', (r) => r.upsertNote({ ...opened, title: 'Mine' }, opened));
    expect(n()).toMatchObject({ title: 'Mine', content: 'one\ntwo\nthree\nfour', color: 'blue' });
    done(h.undo());
    expect(n()).toMatchObject({ title: 'Old title', content: 'one\ntwo\nthree\nfour', color: 'blue' });
    // Redo too: the colour and the line others set were never mine to change.
    done(h.redo());
    expect(n()).toMatchObject({ title: 'Mine', content: 'one\ntwo\nthree\nfour', color: 'blue' });
  });

  it('records a save that changed nothing as no step', () => {
    const { h, edit } = setup();
    edit('n1', {});
    expect(h.canUndo).toBe(false);
  });

  it('keeps an AI turn as one step while it lasts, and starts a new one after it is undone', () => {
    const { board, h, n } = setup([note('h1', { title: 'Keep' }), note('h2', { title: 'Doomed' })]);
    const turn = h.begin('AI changes');
    turn.upsertNote(note('ai1', { title: 'New', aiEdit: 'created' }));
    turn.upsertNote({ ...n('h1')!, title: 'Changed', aiEdit: 'updated' });
    board.others('h1', { color: 'blue' });
    turn.upsertNote({ ...n('h1')!, content: 'twice', aiEdit: 'updated' });
    turn.deleteNote('h2');
    expect(h.size).toBe(1);
    done(h.undo());
    expect(board.notes.has('ai1')).toBe(false);
    // The AI's fields back (its mark gone), the colour someone set kept.
    expect(n('h1')).toMatchObject({ title: 'Keep', content: '', color: 'blue' });
    expect(n('h1')!.aiEdit).toBeUndefined();
    expect(n('h2')!.title).toBe('Doomed');
    turn.upsertNote(note('ai2'));
    expect(h.size).toBe(1);
    expect(h.canRedo).toBe(false);
  });

  it('undoes and redoes work items field by field', () => {
    const board = new Board();
    board.items.set('i1', { id: 'i1', key: 'CB-1', type: 'task', summary: 'Write it', description: 'a\nb\nc', status: 'todo', updatedAt: '' });
    const h = new UndoHistory(board);
    h.transact('edit of CB-1', (r) => r.upsertItem({ ...board.items.get('i1')!, status: 'done', description: 'a\nb\nC', parentId: 'i0' }));
    board.items.set('i1', { ...board.items.get('i1')!, summary: 'Write it well', description: 'A\nb\nC' });
    done(h.undo());
    expect(board.items.get('i1')).toMatchObject({ summary: 'Write it well', status: 'todo', description: 'A\nb\nc' });
    expect(board.items.get('i1')!.parentId).toBeUndefined();
    done(h.redo());
    expect(board.items.get('i1')).toMatchObject({ status: 'done', description: 'A\nb\nC', parentId: 'i0' });
    h.transact('deletion of CB-1', (r) => r.deleteItem('i1'));
    done(h.undo());
    expect(board.items.get('i1')!.key).toBe('CB-1');
  });

  it(`keeps the last ${UNDO_LIMIT} steps`, () => {
    const { h, edit } = setup();
    for (let i = 0; i < UNDO_LIMIT + 5; i++) edit('n1', { title: `t${i}` });
    expect(h.size).toBe(UNDO_LIMIT);
  });

  it('tells subscribers when the stacks change', () => {
    const { h, edit } = setup();
    let calls = 0;
    const off = h.onChange(() => calls++);
    edit('n1', { title: 'x' });
    h.undo();
    h.redo();
    off();
    h.undo();
    expect(calls).toBe(3);
  });
});

describe('revertField', () => {
  it.each([
    ['still mine: back to before', 'color', 'blue', 'yellow', 'blue', 'yellow'],
    ['replaced by someone: theirs', 'color', 'blue', 'yellow', 'green', 'green'],
    ['text, other lines changed: merged', 'content', 'a\nB\nc', 'a\nb\nc', 'x\nB\nc', 'x\nb\nc'],
    ['text, my line changed again: theirs', 'content', 'a\nB\nc', 'a\nb\nc', 'a\nBB\nc', 'a\nBB\nc'],
    ['absent extra field: removed again', 'tags', ['x'], undefined, ['x'], undefined],
  ])('%s', (_name, k, from, to, cur, want) => {
    expect(revertField('note', k, from, to, cur)).toEqual(want);
  });
});

describe('UndoHistory on the sync engine', () => {
  it('two people: A renames, B edits the content, A undoes: A\'s title is back and B\'s content stays, on the server too', async () => {
    const server = new FakeServer();
    server.apply({ notes: { upserted: [note('n1', { title: 'Plan', content: 'first' })], deleted: [] } });
    let k = 0;
    const person = async () => {
      const c = new SyncClient({ boardId: 'b1', transport: server, store: new MemoryStore(), live: new FakeLive(), clock: new FakeClock(), newKey: () => `k${++k}` });
      await c.start();
      return c;
    };
    const a = await person();
    const b = await person();
    const ha = new UndoHistory(a);
    ha.transact('edit', (r) => r.upsertNote({ ...a.getSnapshot().notes.get('n1')!, title: 'Roadmap' }));
    await settle();
    await b.pull();
    b.upsertNote({ ...b.getSnapshot().notes.get('n1')!, content: 'first\nsecond' });
    await settle();
    await a.pull();
    expect(a.getSnapshot().notes.get('n1')).toMatchObject({ title: 'Roadmap', content: 'first\nsecond' });
    done(ha.undo());
    await settle();
    expect(server.rows.get('n1')).toMatchObject({ title: 'Plan', content: 'first\nsecond' });
    done(ha.redo());
    await settle();
    expect(server.rows.get('n1')).toMatchObject({ title: 'Roadmap', content: 'first\nsecond' });
    a.close();
    b.close();
  });
});

describe('createdBy', () => {
  it('is no change of a row: the server setting it does not make an undo ask', () => {
    const a = { id: 'n', title: 'T', content: '', x: 0, y: 0, color: 'yellow', type: 'note', updatedAt: '' };
    expect(changedFields('note', a, { ...a, createdBy: 'ada@example.com' })).toEqual([]);
    expect(changedFields('note', a, { ...a, locked: true })).toEqual(['locked']);
  });
});
