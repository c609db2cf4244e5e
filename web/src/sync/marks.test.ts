import { describe, expect, it } from 'vitest';
import { MarkBook, MY_PUSHES_KEPT, MY_ROWS_KEPT } from './marks';

const n1 = { table: 'note' as const, id: 'n1' };

describe('MarkBook', () => {
  it('marks an overlap of a version my push produced, with its changelog entry', () => {
    const b = new MarkBook();
    b.recordPush(5, [n1, { table: 'item', id: 'i1' }]);
    expect(b.isMine('note', 'n1', 5)).toBe(true);
    expect(b.isMine('note', 'n2', 5)).toBe(false);
    expect(b.isMine('item', 'n1', 5)).toBe(false);
    expect(b.onEvents([{ kind: 'overlap', table: 'note', id: 'n1', version: 5, logKey: 'log/1-n1' }])).toBe(true);
    expect(b.marks()).toEqual([{ table: 'note', id: 'n1', kind: 'overlap', version: 5, logKey: 'log/1-n1' }]);
  });

  it('ignores events about versions of others, and repeats', () => {
    const b = new MarkBook();
    b.recordPush(5, [n1]);
    expect(b.onEvents([{ kind: 'overlap', table: 'note', id: 'n1', version: 4, logKey: 'k' }])).toBe(false);
    expect(b.onEvents([{ kind: 'revived', table: 'note', id: 'n1', version: 5 }])).toBe(true);
    expect(b.onEvents([{ kind: 'revived', table: 'note', id: 'n1', version: 5 }])).toBe(false);
    expect(b.marks()).toEqual([{ table: 'note', id: 'n1', kind: 'revived', version: 5 }]);
  });

  it('keeps the delete_note entry of a revival', () => {
    const b = new MarkBook();
    b.recordPush(6, [n1]);
    b.onEvents([{ kind: 'revived', table: 'note', id: 'n1', version: 6, logKey: 'log/2-n1' }]);
    expect(b.marks()).toEqual([{ table: 'note', id: 'n1', kind: 'revived', version: 6, logKey: 'log/2-n1' }]);
  });

  it('keeps an event that came before the answer to my push, and marks it then', () => {
    const b = new MarkBook();
    expect(b.onEvents([{ kind: 'overlap', table: 'note', id: 'n1', version: 7, logKey: 'k' }])).toBe(false);
    expect(b.recordPush(7, [n1])).toBe(true);
    expect(b.marks()).toHaveLength(1);
  });

  it('dismisses the marks of a row', () => {
    const b = new MarkBook();
    b.recordPush(1, [n1]);
    b.recordPush(2, [n1]);
    b.onEvents([
      { kind: 'overlap', table: 'note', id: 'n1', version: 1, logKey: 'a' },
      { kind: 'overlap', table: 'note', id: 'n1', version: 2, logKey: 'b' },
    ]);
    const before = b.marks();
    expect(b.dismiss('n1', 'item')).toBe(false);
    expect(b.marks()).toBe(before); // the same array until it changes
    expect(b.dismiss('n1')).toBe(true);
    expect(b.marks()).toEqual([]);
  });

  it('survives a reload through save()', () => {
    const a = new MarkBook();
    a.recordPush(3, [n1]);
    a.onEvents([{ kind: 'revived', table: 'note', id: 'n1', version: 3 }]);
    const b = new MarkBook(structuredClone(a.save()));
    expect(b.marks()).toEqual(a.marks());
    expect(b.isMine('note', 'n1', 3)).toBe(true);
  });

  it('remembers a bounded window of my pushes', () => {
    const b = new MarkBook();
    for (let v = 1; v <= MY_PUSHES_KEPT + 10; v++) b.recordPush(v, [n1]);
    expect(b.isMine('note', 'n1', 10)).toBe(false);
    expect(b.isMine('note', 'n1', 11)).toBe(true);
    const big = Array.from({ length: MY_ROWS_KEPT }, (_, i) => ({ table: 'note' as const, id: `r${i}` }));
    b.recordPush(1000, big);
    expect(b.isMine('note', 'n1', MY_PUSHES_KEPT + 10)).toBe(false); // pushed out by the rows
    expect(b.isMine('note', 'r0', 1000)).toBe(true); // the newest push is always kept
    expect(b.save().pushes).toHaveLength(1);
  });
});
