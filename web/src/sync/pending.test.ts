import { describe, expect, it } from 'vitest';
import type { Note } from '../api/types';
import type { Row } from './merge';
import { PendingQueue, type Batch, type NewEdit, type RowKind, type ServerCopy } from './pending';
import { note } from './testing';

/** Copy is a server copy the tests move by hand. */
class Copy implements ServerCopy {
  version = 0;
  notes = new Map<string, Note>();
  row(kind: RowKind, id: string): Row | undefined {
    return kind === 'note' ? this.notes.get(id) : undefined;
  }
  /** put stores rows at a new version and rebases q, as the sync client does. */
  put(q: PendingQueue, version: number, ...rows: Note[]) {
    this.version = version;
    rows.forEach((r) => this.notes.set(r.id, { ...r, version }));
    q.rebase(
      rows.map((r) => ({ kind: 'note', row: this.notes.get(r.id)! })),
      this,
    );
  }
  del(q: PendingQueue, version: number, id: string) {
    this.version = version;
    this.notes.delete(id);
    q.rebase([], this);
  }
}

let keyN = 0;
const newKey = () => `k${++keyN}`;
const AT = '2026-11-26T10:00:00.000Z';

function setup() {
  const q = new PendingQueue();
  const copy = new Copy();
  /** edit queues an upsert of the row as shown with changes. */
  const edit = (id: string, change: Partial<Note>) => {
    const shown = q.row('note', id, copy) as Note | undefined;
    const row = { ...(shown ?? note(id)), ...change };
    delete row.version;
    delete row.deletedAt;
    return q.add({ kind: 'note', id, op: 'upsert', row } as NewEdit, AT, copy, shown);
  };
  const shown = (id: string) => q.row('note', id, copy) as Note | undefined;
  const send = () => {
    const b = q.nextBatch(newKey);
    if (b) q.sending(b);
    return b;
  };
  const body = (b: Batch) => q.buildPush(b, copy.version);
  return { q, copy, edit, shown, send, body };
}

describe('PendingQueue: bases', () => {
  it('keeps the server copy an edit was made on, and pushes its version as baseVersion', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 3, note('n1', { title: 'T' }));
    const e = edit('n1', { title: 'T2' });
    expect(e.base).toMatchObject({ id: 'n1', title: 'T', version: 3 });
    expect(e.baseVersion).toBe(3);
    const b = send()!;
    expect(body(b).notes.upserted[0]).toMatchObject({ id: 'n1', title: 'T2', baseVersion: 3 });
  });

  it('pushes a new row without baseVersion', () => {
    const { edit, send, body } = setup();
    const e = edit('new', { title: 'hi' });
    expect(e.base).toBeNull();
    expect(body(send()!).notes.upserted[0].baseVersion).toBeUndefined();
  });

  it('keeps the oldest base when edits of a row coalesce', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 2, note('n1', { title: 'a' }));
    edit('n1', { title: 'b' });
    edit('n1', { title: 'c' });
    q.add({ kind: 'note', id: 'n1', op: 'delete' }, AT, copy, undefined);
    const last = edit('n1', { title: 'd' });
    expect(q.size).toBe(1);
    expect(last.base).toMatchObject({ title: 'a', version: 2 });
    expect(body(send()!).notes.upserted[0]).toMatchObject({ title: 'd', baseVersion: 2 });
  });

  it('takes an older base given with the edit (an editor open for a while), shown and pushed merged against it', () => {
    const { q, copy, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { title: 'T', content: 'one\ntwo' }));
    const opened = copy.notes.get('n1')!;
    copy.put(q, 2, note('n1', { title: 'T', content: 'one\ntwo\nthree' }));
    const mine = { ...opened, content: 'ONE\ntwo' };
    delete mine.version;
    const e = q.add({ kind: 'note', id: 'n1', op: 'upsert', row: mine }, AT, copy, shown('n1'), opened);
    expect(e.baseVersion).toBe(1);
    expect(shown('n1')!.content).toBe('ONE\ntwo\nthree');
    expect(body(send()!).notes.upserted[0]).toMatchObject({ content: 'ONE\ntwo', baseVersion: 1 });
  });

  it('ignores a given base when the row has an unsent edit (coalescing keeps the oldest base)', () => {
    const { q, copy, edit } = setup();
    copy.put(q, 1, note('n1', { title: 'a' }));
    const opened = copy.notes.get('n1')!;
    copy.put(q, 2, note('n1', { title: 'b' }));
    edit('n1', { color: 'pink' });
    const e = q.add({ kind: 'note', id: 'n1', op: 'upsert', row: { ...note('n1'), title: 'c' } }, AT, copy, undefined, opened);
    expect(e.baseVersion).toBe(2);
  });

  it('reports what to write: the new edit, and the seqs it replaced', () => {
    const { q, edit } = setup();
    const a = edit('n1', { title: 'a' });
    q.takeWrites();
    const b = edit('n1', { title: 'b' });
    expect(q.takeWrites()).toEqual({ put: [b], del: [a.seq] });
    expect(q.takeWrites()).toEqual({ put: [], del: [] });
  });
});

describe('PendingQueue: the merge rule', () => {
  it('merges an unsent edit onto a newer server row, which becomes its base', () => {
    const { q, copy, edit, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { content: 'one\ntwo\nthree', color: 'yellow' }));
    edit('n1', { content: 'one\ntwo\nTHREE' });
    copy.put(q, 2, note('n1', { content: 'ONE\ntwo\nthree', color: 'blue', x: 5 }));
    expect(shown('n1')).toMatchObject({ content: 'ONE\ntwo\nTHREE', color: 'blue', x: 5 });
    const [e] = q.list();
    expect(e.baseVersion).toBe(2);
    expect(e.row).not.toHaveProperty('version');
    expect(body(send()!).notes.upserted[0]).toMatchObject({ content: 'ONE\ntwo\nTHREE', baseVersion: 2 });
  });

  it('keeps the old base when the newer row changed the same lines, so the server logs the lines mine overwrites', () => {
    const { q, copy, edit, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { content: 'plan\nend' }));
    edit('n1', { content: 'my plan\nend' });
    copy.put(q, 2, note('n1', { content: 'their plan\nend', color: 'blue' }));
    // Mine wins the line on screen, as it will on the server…
    expect(shown('n1')).toMatchObject({ content: 'my plan\nend', color: 'blue' });
    // …but the push names base 1: pushed on 2 it would replace their line
    // with nobody told, and their text would be in no changelog.
    const [e] = q.list();
    expect(e.baseVersion).toBe(1);
    expect(body(send()!).notes.upserted[0]).toMatchObject({ content: 'my plan\nend', baseVersion: 1 });
  });

  it('keeps an edit of a row deleted on the server, with its base: the push revives it', () => {
    const { q, copy, edit, shown } = setup();
    copy.put(q, 1, note('n1', { title: 'a' }));
    edit('n1', { title: 'mine' });
    copy.del(q, 2, 'n1');
    expect(shown('n1')?.title).toBe('mine');
    expect(q.list()[0].baseVersion).toBe(1);
  });

  it('never compares clocks: an edit older than the server row is merged, not dropped', () => {
    const { q, copy, edit, shown } = setup();
    copy.put(q, 1, note('n1', { title: 'a', content: 'x' }));
    edit('n1', { title: 'mine' });
    copy.put(q, 2, note('n1', { title: 'a', content: 'theirs', updatedAt: '2099-01-01T00:00:00Z' }));
    expect(shown('n1')).toMatchObject({ title: 'mine', content: 'theirs' });
  });

  it('leaves a push on its way alone, and shows it merged onto the newer row', () => {
    const { q, copy, edit, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { content: 'a\nb' }));
    edit('n1', { content: 'A\nb' });
    const b = send()!;
    const sent = body(b);
    copy.put(q, 2, note('n1', { content: 'a\nB', x: 9 }));
    expect(q.list()[0].row).toMatchObject({ content: 'A\nb' }); // not rebased: the push is the same if sent again
    expect(shown('n1')).toMatchObject({ content: 'A\nB', x: 9 });
    expect(q.buildPush(b, 2).notes.upserted).toEqual(sent.notes.upserted);
  });

  it('rebases a push that got no answer (it is sent again, same key, merged)', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 1, note('n1', { content: 'a\nb' }));
    edit('n1', { content: 'A\nb' });
    const b = send()!;
    q.unanswered(b);
    copy.put(q, 2, note('n1', { content: 'a\nB' }));
    const again = q.nextBatch(newKey)!;
    expect(again.key).toBe(b.key);
    expect(body(again).notes.upserted[0]).toMatchObject({ content: 'A\nB', baseVersion: 2 });
  });
});

describe('PendingQueue: edits on top of a push on its way', () => {
  it('waits for the pushed row, then goes with it as base', () => {
    const { q, copy, edit, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { title: 'a', x: 0 }));
    edit('n1', { x: 10 });
    const b1 = send()!;
    const e2 = edit('n1', { title: 'b' });
    expect(e2.afterSeq).toBe(b1.edits[0].seq);
    expect(shown('n1')).toMatchObject({ x: 10, title: 'b' });
    expect(q.nextBatch(newKey)!.edits).toEqual(b1.edits); // it waits: only the push on its way
    const rows = q.acked(b1, body(b1), 2, copy)!;
    expect(rows.notes).toMatchObject([{ id: 'n1', x: 10, title: 'a', version: 2 }]);
    copy.put(q, 2, ...rows.notes!);
    expect(e2.afterVersion).toBeUndefined();
    expect(e2.baseVersion).toBe(2);
    expect(body(send()!).notes.upserted[0]).toMatchObject({ x: 10, title: 'b', baseVersion: 2 });
  });

  it('does not lose an edit that reverts the push below it', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 1, note('n1', { color: 'yellow' }));
    edit('n1', { color: 'pink' });
    const b1 = send()!;
    edit('n1', { color: 'yellow' }); // changed my mind while the push was on its way
    copy.put(q, 2, ...q.acked(b1, body(b1), 2, copy)!.notes!);
    expect(body(send()!).notes.upserted[0]).toMatchObject({ color: 'yellow', baseVersion: 2 });
  });

  it('keeps typing on one line as one edit of mine, not an overlap', () => {
    const { q, copy, edit, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { content: '' }));
    edit('n1', { content: 'hel' });
    const b1 = send()!;
    edit('n1', { content: 'hello' });
    // Someone else's change lands before ours: ours is merged onto it.
    copy.put(q, 2, note('n1', { content: '', title: 'Theirs' }));
    expect(shown('n1')).toMatchObject({ content: 'hello', title: 'Theirs' });
    // Our push became 3, merged onto 2 as the server merged it.
    const rows = q.acked(b1, body(b1), 3, copy)!;
    expect(rows.notes).toMatchObject([{ content: 'hel', title: 'Theirs', version: 3 }]);
    copy.put(q, 3, ...rows.notes!);
    // "hel" then "hello" is one line typed by me: based on "hel", it is no overlap.
    const e2 = q.list()[0];
    expect(e2.base).toMatchObject({ content: 'hel', version: 3 });
    expect(body(send()!).notes.upserted[0]).toMatchObject({ content: 'hello', title: 'Theirs', baseVersion: 3 });
  });

  it('shows a push answered ahead of the copy until the copy gets there', () => {
    const { q, copy, edit, shown, send, body } = setup();
    copy.put(q, 1, note('n1', { content: 'a' }));
    edit('n1', { content: 'mine' });
    const b1 = send()!;
    const e2 = edit('n1', { title: 'later' });
    // Someone else pushed version 2; ours is 3. The copy is still at 1.
    expect(q.acked(b1, body(b1), 3, copy)).toBeNull();
    expect(q.size).toBe(1);
    expect(e2.afterVersion).toBe(3);
    expect(shown('n1')).toMatchObject({ content: 'mine', title: 'later' }); // no flicker back to 'a'
    copy.put(q, 2, note('n1', { content: 'a', color: 'blue' })); // the pull brings 2…
    expect(shown('n1')).toMatchObject({ content: 'mine', title: 'later', color: 'blue' });
    expect(q.nextBatch(newKey)).toBeNull();
    copy.put(q, 3, note('n1', { content: 'mine', color: 'blue' })); // …and 3
    expect(e2.afterVersion).toBeUndefined();
    expect(shown('n1')).toMatchObject({ content: 'mine', title: 'later', color: 'blue' });
    expect(body(send()!).notes.upserted[0]).toMatchObject({ title: 'later', content: 'mine', color: 'blue', baseVersion: 3 });
  });

  it('resolves at once when the copy already holds the pushed version (a live change came first)', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 1, note('n1', { content: 'a' }));
    edit('n1', { content: 'mine' });
    const b1 = send()!;
    const e2 = edit('n1', { title: 'later' });
    copy.put(q, 2, note('n1', { content: 'mine' })); // our own push, live
    expect(q.acked(b1, body(b1), 2, copy, true)).toBeNull();
    expect(e2.baseVersion).toBe(2);
    expect(e2.afterVersion).toBeUndefined();
  });

  it('revives a row deleted after the push it waited for', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 1, note('n1'));
    edit('n1', { x: 1 });
    const b1 = send()!;
    const e2 = edit('n1', { x: 2 });
    q.acked(b1, body(b1), 3, copy);
    copy.version = 4; // 2: someone's push, 3: ours, 4: someone deleted the row
    copy.del(q, 4, 'n1');
    expect(e2.baseVersion).toBe(3);
    expect(body(send()!).notes.upserted[0]).toMatchObject({ x: 2, baseVersion: 3 });
  });

  it('a refused push: the edit made on top takes its place, with its base', () => {
    const { q, copy, edit, send, body } = setup();
    copy.put(q, 4, note('n1'));
    edit('n1', { content: 'x'.repeat(10) });
    const b1 = send()!;
    const e2 = edit('n1', { content: 'short' });
    q.reject(b1, body(b1), { status: 400, message: 'too long', field: 'notes.upserted[0].content' });
    expect(q.list()).toEqual([e2]);
    expect(e2.afterSeq).toBeUndefined();
    expect(body(send()!).notes.upserted[0]).toMatchObject({ content: 'short', baseVersion: 4 });
  });

  it('an upsert after a deletion on its way starts from nothing', () => {
    const { q, copy, edit } = setup();
    copy.put(q, 1, note('n1'));
    q.add({ kind: 'note', id: 'n1', op: 'delete' }, AT, copy, undefined);
    q.sending(q.nextBatch(newKey)!);
    const e = edit('n1', { title: 'back' });
    expect(e.base).toBeNull();
    expect(e.afterSeq).toBeUndefined();
  });
});

describe('PendingQueue: loading', () => {
  it('does not wait for a push that is gone (a page closed between two writes)', () => {
    const { q, copy, shown } = setup();
    copy.notes.set('n1', { ...note('n1', { color: 'yellow' }), version: 1 });
    copy.version = 1;
    // Edit 1 (color: pink) was pushed as version 2 and deleted; edit 2 was made on top of it.
    q.load([{ seq: 2, kind: 'note', id: 'n1', op: 'upsert', at: AT, row: note('n1', { color: 'pink', title: 'later' }), base: note('n1', { color: 'pink' }), afterSeq: 1 }]);
    expect(q.nextBatch(newKey)).toBeNull();
    copy.put(q, 2, note('n1', { color: 'pink' }));
    expect(shown('n1')).toMatchObject({ color: 'pink', title: 'later' });
    expect(q.nextBatch(newKey)!.edits[0]).toMatchObject({ baseVersion: 2, row: { color: 'pink', title: 'later' } });
  });
});

describe('PendingQueue: batches and refusals', () => {
  it('sends an interrupted batch again first, with its key', () => {
    const { q, edit, send } = setup();
    edit('a', {});
    const b = send()!;
    q.unanswered(b);
    edit('b', {});
    const again = q.nextBatch(newKey)!;
    expect(again.key).toBe(b.key);
    expect(again.edits.map((e) => e.id)).toEqual(['a']);
  });

  it('marks the edit a 400 names, and sends the others again', () => {
    const { q, edit, send, body } = setup();
    edit('ok', {});
    edit('bad', {});
    const b = send()!;
    q.reject(b, body(b), { status: 400, message: 'no', field: 'notes.upserted[1].title' });
    expect(q.rejected().map((e) => e.id)).toEqual(['bad']);
    expect(q.nextBatch(newKey)!.edits.map((e) => e.id)).toEqual(['ok']);
    expect(q.waitingRows()).toBe(1); // refused edits are not waiting
    expect(q.retry(q.rejected()[0].seq)).toBe(true);
    expect(q.discard(q.list()[0].seq)).toBe(false); // not refused
  });

  it('drops the edit a 403 names (a lock, someone else\'s note) with later edits of its row, and sends the others again', () => {
    const { q, edit, send, body } = setup();
    edit('ok', {});
    edit('locked', {});
    const b = send()!;
    edit('locked', { title: 'again' }); // made while the push was out: refused as well
    const dropped = q.reject(b, body(b), { status: 403, message: 'Note "locked" is locked by the board\'s owner.', field: 'notes.upserted[1]' });
    expect(dropped.map((e) => e.id)).toEqual(['locked']);
    expect(q.rejected()).toEqual([]);
    expect(q.list().map((e) => e.id)).toEqual(['ok']);
    expect(q.nextBatch(newKey)!.edits.map((e) => e.id)).toEqual(['ok']);
  });

  it('keeps a whole batch a 403 names no row of (a viewer) as refused, not dropped', () => {
    const { q, edit, send, body } = setup();
    edit('a', {});
    const b = send()!;
    expect(q.reject(b, body(b), { status: 403, message: 'You can view this board but not edit it.' })).toEqual([]);
    expect(q.rejected().map((e) => e.id)).toEqual(['a']);
  });
});
