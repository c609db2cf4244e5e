import { describe, expect, it } from 'vitest';
import type { Note, TrackerItem } from '../api/types';
import { acceptedItems, actionLabel, formProblem, generateRequest, plan, type GenerateForm, type TrackerGeneration } from './trackerGen';

const item = (id: string, key: string, extra: Partial<TrackerItem> = {}): TrackerItem => ({ id, key, type: 'story', summary: `${key} summary`, updatedAt: '2026-11-01T00:00:00Z', version: 3, ...extra });
const items = new Map([
  ['e1', item('e1', 'CB-1', { type: 'epic' })],
  ['s1', item('s1', 'CB-2', { parentId: 'e1', status: 'in-progress', description: 'old' })],
  ['s2', item('s2', 'CB-7', { parentId: 'e1' })],
]);
const form = (f: Partial<GenerateForm>): GenerateForm => ({ mode: 'generate_step', step: 'story', parentId: '', itemIds: [], instruction: '', context: '', count: 0, ...f });
let seq = 0;
const newId = () => `new${++seq}`;

describe('generateRequest', () => {
  const notes = new Map<string, Note>([
    ['n2', { id: 'n2', title: 'Low', content: 'x'.repeat(900), x: 0, y: 500, color: 'blue', type: 'idea', updatedAt: '' }],
    ['n1', { id: 'n1', title: 'High', content: 'short', x: 0, y: 0, color: 'yellow', type: 'sticky', updatedAt: '' }],
  ]);
  it('sends each mode with its own field, items without versions, notes clipped', () => {
    const step = generateRequest('b1', form({ step: 'task', instruction: '  small ones ', count: 3 }), items, notes);
    expect(step).toMatchObject({ boardId: 'b1', mode: 'generate_step', step: 'task', instruction: 'small ones', count: 3 });
    expect(step).not.toHaveProperty('parentId');
    expect(step).not.toHaveProperty('context');
    expect((step.items as object[])[1]).toEqual({ id: 's1', key: 'CB-2', type: 'story', summary: 'CB-2 summary', description: 'old', status: 'in-progress', parentId: 'e1' });
    const ns = step.notes as { id: string; content: string }[];
    expect(ns.map((n) => n.id)).toEqual(['n1', 'n2']);
    expect(ns[1].content).toHaveLength(800);

    expect(generateRequest('b1', form({ mode: 'generate_children', parentId: 'e1' }), items, notes)).toMatchObject({ mode: 'generate_children', parentId: 'e1' });
    const regen = generateRequest('b1', form({ mode: 'regenerate_items', itemIds: ['s1', 's2'] }), items, notes);
    expect(regen).toMatchObject({ mode: 'regenerate_items', itemIds: ['s1', 's2'] });
    expect(regen).not.toHaveProperty('step');
    expect(regen).not.toHaveProperty('count');
  });
  it('formProblem names what is missing', () => {
    expect(formProblem(form({}), items)).toBe('');
    expect(formProblem(form({ mode: 'generate_children', parentId: 'gone' }), items)).toBe('Choose the item to break down.');
    expect(formProblem(form({ mode: 'regenerate_items' }), items)).toBe('Choose at least one item to regenerate.');
    expect(formProblem(form({ mode: 'regenerate_items', itemIds: Array(21).fill('s1') }), items)).toBe('Choose at most 20 items to regenerate.');
    expect(formProblem(form({ instruction: '😀'.repeat(10_000) }), items)).toBe('');
    expect(formProblem(form({ instruction: '😀'.repeat(10_001) }), items)).toBe('The instruction may have at most 10,000 characters.');
  });
});

describe('accepting a generation', () => {
  it('new items get ids, keys after the largest, status todo, and a parent that exists', () => {
    const g: TrackerGeneration = {
      items: [
        { type: 'task', summary: 'A', description: 'da', parentId: 's1' },
        { type: 'task', summary: 'B', description: '', parentId: 'vanished' },
      ],
      recommendedNextStep: { step: 'done', reason: '' },
    };
    const rows = acceptedItems(plan(g, items), items, newId);
    expect(rows).toEqual([
      { id: 'new1', key: 'CB-8', type: 'task', summary: 'A', description: 'da', status: 'todo', parentId: 's1', updatedAt: '' },
      { id: 'new2', key: 'CB-9', type: 'task', summary: 'B', status: 'todo', updatedAt: '' },
    ]);
  });
  it('a replacement overwrites its item in place; a second one for the same item, or one naming none, is new', () => {
    const g: TrackerGeneration = {
      items: [
        { type: 'story', summary: 'S1 better', description: '', parentId: 'e1', replacesId: 's1' },
        { type: 'story', summary: 'S1 again', description: 'd', parentId: 'e1', replacesId: 's1' },
        { type: 'story', summary: 'Loose', description: '', parentId: '', replacesId: '' },
      ],
      recommendedNextStep: { step: 'task', reason: 'Break them down.' },
    };
    const planned = plan(g, items);
    expect(planned.map((p) => p.replaces?.id)).toEqual(['s1', undefined, undefined]);
    // The user picks only the replacement and the loose one.
    const rows = acceptedItems([planned[0], planned[2]], items, newId);
    expect(rows[0]).toEqual({ id: 's1', key: 'CB-2', type: 'story', summary: 'S1 better', status: 'in-progress', parentId: 'e1', updatedAt: '2026-11-01T00:00:00Z', version: 3 });
    expect(rows[1]).toMatchObject({ key: 'CB-8', summary: 'Loose', status: 'todo' });
    expect(rows[1]).not.toHaveProperty('parentId');
  });
  it('against the tracker as it is when added: later edits kept, a deleted item not brought back', () => {
    const g: TrackerGeneration = {
      items: [
        { type: 'story', summary: 'S1 better', description: 'new', parentId: 'e1', replacesId: 's1' },
        { type: 'story', summary: 'S2 better', description: '', parentId: 'e1', replacesId: 's2' },
      ],
      recommendedNextStep: { step: 'done', reason: '' },
    };
    const planned = plan(g, items);
    const now = new Map(items);
    now.set('s1', { ...items.get('s1')!, status: 'done', version: 4 });
    now.delete('s2');
    const rows = acceptedItems(planned, now, () => 'fresh');
    expect(rows[0]).toMatchObject({ id: 's1', key: 'CB-2', status: 'done', summary: 'S1 better', description: 'new', version: 4 });
    expect(rows[1]).toEqual({ id: 'fresh', key: 'CB-3', type: 'story', summary: 'S2 better', status: 'todo', parentId: 'e1', updatedAt: '' });
  });
});

describe('actionLabel', () => {
  it('names what accepting does, in the plural only for several items', () => {
    expect(actionLabel(1, 0)).toBe('Add 1 item');
    expect(actionLabel(3, 0)).toBe('Add 3 items');
    expect(actionLabel(0, 2)).toBe('Replace 2 items');
    expect(actionLabel(2, 1)).toBe('Replace 1 and add 2 items');
  });
});
