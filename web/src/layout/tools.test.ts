import { describe, expect, it } from 'vitest';
import { BAR_SLOT_PX, splitTools, type Tool } from './tools';

const tool = (id: string, rank: number): Tool => ({ id, label: id, rank, onSelect: () => {} });
const ids = (ts: Tool[]) => ts.map((t) => t.id);
// The board's nine tools of today, in the rail's order.
const nine = [tool('note', 0), tool('noteTool', 7), tool('delete', 5), tool('undo', 1), tool('redo', 6), tool('search', 2), tool('keys', 8), tool('items', 3), tool('ai', 4)];

describe('splitTools', () => {
  it('puts every tool in the rail wider than a phone', () => {
    expect(splitTools(nine, 1280)).toEqual({ bar: nine, more: [] });
    expect(splitTools(nine, 769).more).toEqual([]);
  });

  it('keeps the lowest ranks in a phone bar and the rest in More, in the rail order', () => {
    // 390 px: six slots, one of them More's.
    const { bar, more } = splitTools(nine, 390);
    expect(ids(bar)).toEqual(['note', 'undo', 'search', 'items', 'ai']);
    expect(ids(more)).toEqual(['noteTool', 'delete', 'redo', 'keys']);
  });

  it('needs no More when the tools fit (N slots hold N tools, N+1 tools make a More)', () => {
    const width = 6 * BAR_SLOT_PX;
    const six = nine.slice(0, 6);
    expect(splitTools(six, width)).toEqual({ bar: six, more: [] });
    const seven = nine.slice(0, 7);
    const s = splitTools(seven, width);
    expect([s.bar.length, s.more.length]).toEqual([5, 2]);
  });

  it('sends new tools to More by their rank, without moving the bar', () => {
    const more = [...nine, tool('connector', 9), tool('frame', 10)];
    expect(ids(splitTools(more, 390).bar)).toEqual(['note', 'undo', 'search', 'items', 'ai']);
    expect(ids(splitTools(more, 390).more)).toEqual(['noteTool', 'delete', 'redo', 'keys', 'connector', 'frame']);
  });

  it('keeps at least one tool and More on the narrowest screen', () => {
    const { bar, more } = splitTools(nine, 100);
    expect(ids(bar)).toEqual(['note']);
    expect(more.length).toBe(8);
  });
});
