import { describe, expect, it } from 'vitest';
import type { Mark } from '../sync/marks';
import { arrivedRevived, editingLabel, editorNotice, marksByNote, nameOf, revivedAnnouncement } from './peopleView';

const ana = { id: 'c1', email: 'ana@example.com', color: '#e6194b' };
const bo = { id: 'c2', email: 'bo@example.com', color: '#3cb44b' };
const cy = { id: 'c3', email: 'cy@example.com', color: '#4363d8' };

describe('is editing', () => {
  it('names the person by the part of the address before @', () => {
    expect(nameOf('ana@example.com')).toBe('ana');
    expect(nameOf('no-at-sign')).toBe('no-at-sign');
  });

  it('labels a note with who is editing it, in their colour, with the full address for screen readers', () => {
    expect(editingLabel([])).toBeNull();
    expect(editingLabel([ana])).toEqual({ text: 'ana is editing', full: 'ana@example.com is editing', color: '#e6194b' });
    expect(editingLabel([ana, bo])).toMatchObject({ text: 'ana and bo are editing', full: 'ana@example.com and bo@example.com are editing' });
    expect(editingLabel([ana, bo, cy])).toMatchObject({ text: 'ana and 2 others are editing', full: 'ana@example.com, bo@example.com and cy@example.com are editing' });
  });

  it('counts one person with two tabs once', () => {
    expect(editingLabel([ana, { ...ana, id: 'c9' }])!.text).toBe('ana is editing');
  });

  it('tells my open editor who else is editing the note', () => {
    expect(editorNotice([])).toBe('');
    expect(editorNotice([ana])).toBe('ana@example.com is also editing this note');
    expect(editorNotice([ana, bo])).toBe('ana@example.com and bo@example.com are also editing this note');
  });
});

describe('marks on notes', () => {
  const m = (id: string, kind: Mark['kind'], version: number, table: Mark['table'] = 'note'): Mark => ({ table, id, kind, version, logKey: `log/${version}-${id}` });

  it('keeps the newest mark of each kind per note, and leaves out work items', () => {
    const marks = [m('n1', 'overlap', 3), m('n1', 'overlap', 7), m('n1', 'revived', 5), m('n2', 'overlap', 2), m('i1', 'overlap', 4, 'item')];
    const by = marksByNote(marks);
    expect(by.get('n1')).toEqual({ overlap: marks[1], revived: marks[2] });
    expect(by.get('n2')).toEqual({ overlap: marks[3] });
    expect(by.has('i1')).toBe(false);
    expect(marksByNote(marks)).toBe(by);
  });

  it('announces only revivals that arrive while the board is open', () => {
    const seen = new Set<string>();
    const kept = [m('n1', 'revived', 3), m('n2', 'overlap', 4)];
    arrivedRevived(seen, kept); // the marks kept from before the reload
    expect(arrivedRevived(seen, [...kept, m('n3', 'overlap', 6)])).toEqual([]);
    const fresh = m('n4', 'revived', 8);
    expect(arrivedRevived(seen, [...kept, fresh])).toEqual([fresh]);
    expect(arrivedRevived(seen, [...kept, fresh])).toEqual([]);
    expect(revivedAnnouncement(['Budget'])).toBe('A note you deleted was brought back: Budget.');
    expect(revivedAnnouncement([''])).toBe('A note you deleted was brought back: Untitled.');
  });
});
