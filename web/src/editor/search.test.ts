import { describe, expect, it } from 'vitest';
import type { TrackerItem } from '../api/types';
import { note } from '../sync/testing';
import { search } from './search';

const item = (id: string, key: string, summary: string, description?: string): TrackerItem => ({ id, key, type: 'task', summary, description, updatedAt: '' });

describe('search', () => {
  const notes = [note('a', { title: 'Café plans', content: 'open on monday' }), note('b', { title: 'Other', content: 'we talk about the CAFE here, at length' }), note('c', { title: '', content: 'nothing' })];
  const items = [item('i1', 'CB-1', 'Paint the café'), item('i2', 'CB-2', 'Lights', 'near the cafe door')];

  it('finds titles, contents and work items, ignoring case and accents; title matches first', () => {
    const r = search('cafe', notes, items);
    expect(r.map((x) => [x.kind, x.id, x.field])).toEqual([
      ['note', 'a', 'title'],
      ['item', 'i1', 'summary'],
      ['note', 'b', 'content'],
      ['item', 'i2', 'description'],
    ]);
    expect(r[2].snippet).toContain('CAFE');
  });

  it('finds work item keys, and nothing for an empty query', () => {
    expect(search('cb-2', notes, items).map((x) => x.id)).toEqual(['i2']);
    expect(search('  ', notes, items)).toEqual([]);
  });

  it('names an untitled note, and caps the results', () => {
    expect(search('nothing', notes, [])[0].label).toBe('Untitled note');
    const many = Array.from({ length: 20 }, (_, i) => note(`n${i}`, { title: 'same' }));
    expect(search('same', many, [], 5)).toHaveLength(5);
  });
});
