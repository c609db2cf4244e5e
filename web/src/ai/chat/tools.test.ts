import { describe, expect, it } from 'vitest';
import { SyncClient } from '../../sync/client';
import { MemoryStore } from '../../sync/store';
import { FakeClock, FakeLive, FakeServer, note, settle } from '../../sync/testing';
import { UndoHistory } from '../../canvas/undo';
import { NOTE_WIDTH } from '../../canvas/notes';
import { AiTurn, applyToolCall, type ExpandNote, type ToolContext, type ToolResult } from './tools';

let keyN = 0;
async function setup(notes = [note('h1', { title: 'Human note', content: 'Written by a person', x: 100, y: 40, owner: 'other-client' })]) {
  const server = new FakeServer();
  if (notes.length) server.apply({ notes: { upserted: notes, deleted: [] } });
  const client = new SyncClient({ boardId: 'b1', transport: server, store: new MemoryStore(), live: new FakeLive(), clock: new FakeClock(), newKey: () => `k${++keyN}` });
  await client.start();
  const undo = new UndoHistory(client);
  let n = 0;
  const ctx = (o: Partial<ToolContext> = {}): ToolContext => ({
    turn: o.turn ?? new AiTurn(client, undo),
    store: client,
    canEdit: true,
    newId: () => `ai${++n}`,
    expand: async () => ({ title: 'Expanded', content: 'More text' }),
    // These tests are about applying: every proposal is accepted at once.
    propose: () => true,
    ...o,
  });
  return { server, client, undo, ctx };
}

const call = (toolName: string, input: unknown, id = 'c1') => ({ toolCallId: id, toolName, input });
const out = (r: ToolResult | Promise<ToolResult>) => {
  if (r instanceof Promise || !('output' in r)) throw new Error(`expected an output, got ${JSON.stringify(r)}`);
  return r.output;
};

describe('applyToolCall', () => {
  it('creates a note through the sync client, marked as made by the AI, and says its id', async () => {
    const { server, client, ctx } = await setup();
    const o = out(applyToolCall(call('createNote', { title: 'Go', content: 'A language', color: 'blue', type: 'idea' }), ctx()));
    expect(o.id).toBe('ai1');
    expect(o.message).toContain('ai1');
    const n = client.getSnapshot().notes.get('ai1')!;
    expect(n).toMatchObject({ title: 'Go', content: 'A language', color: 'blue', type: 'idea', aiEdit: 'created' });
    // No position given: a column right of the board's notes.
    expect(n.x).toBeGreaterThanOrEqual(100 + NOTE_WIDTH);
    await settle();
    expect(server.rows.get('ai1')).toMatchObject({ title: 'Go', aiEdit: 'created' });
  });

  it('stacks the notes of one turn in a column and keeps a position the model gave', async () => {
    const { client, ctx } = await setup();
    const c = ctx();
    applyToolCall(call('createNote', { title: 'A', content: '' }), c);
    applyToolCall(call('createNote', { title: 'B', content: '' }), c);
    applyToolCall(call('createNote', { title: 'C', content: '', x: -500, y: 7 }), c);
    const [a, b, cc] = ['ai1', 'ai2', 'ai3'].map((id) => client.getSnapshot().notes.get(id)!);
    expect(b.x).toBe(a.x);
    expect(b.y).toBeGreaterThan(a.y);
    expect([cc.x, cc.y]).toEqual([-500, 7]);
  });

  it('makes a placeholder note from the hint', async () => {
    const { client, ctx } = await setup([]);
    out(applyToolCall(call('createPlaceholderNote', { title: 'Risks', hint: 'List the launch risks' }), ctx()));
    expect(client.getSnapshot().notes.get('ai1')).toMatchObject({ title: 'Risks', content: '_To fill in:_ List the launch risks', color: 'gray', aiEdit: 'created' });
  });

  it('updates only the fields given, keeping the others and fields of other clients', async () => {
    const { client, ctx } = await setup();
    const o = out(applyToolCall(call('updateNote', { id: 'h1', content: 'Rewritten' }), ctx()));
    expect(o.message).toContain('content');
    expect(client.getSnapshot().notes.get('h1')).toMatchObject({ title: 'Human note', content: 'Rewritten', owner: 'other-client', aiEdit: 'updated' });
  });

  it('answers an error the model can read for a note that is gone, and changes nothing', async () => {
    const { client, undo, ctx } = await setup();
    const r = applyToolCall(call('deleteNote', { id: 'nope' }), ctx());
    expect(r).toEqual({ errorText: expect.stringContaining('"nope"') });
    expect(client.getSnapshot().notes.size).toBe(1);
    expect(undo.size).toBe(0);
  });

  it('changes nothing on a board the user can only view', async () => {
    const { client, ctx } = await setup();
    for (const [name, input] of [
      ['createNote', { title: 'x', content: '' }],
      ['updateNote', { id: 'h1', title: 'x' }],
      ['deleteNote', { id: 'h1' }],
      ['expandNote', { id: 'h1', instruction: 'more' }],
    ] as const) {
      const r = applyToolCall(call(name, input), ctx({ canEdit: false }));
      expect(r).toEqual({ errorText: expect.stringContaining('view') });
    }
    expect(client.getSnapshot().notes.get('h1')!.title).toBe('Human note');
    expect(client.getSnapshot().notes.size).toBe(1);
  });

  it('shows a summary without changing the board', async () => {
    const { client, ctx } = await setup();
    const o = out(applyToolCall(call('summarizeBoard', { summary: '**Two** notes' }), ctx()));
    expect(o.summary).toBe('**Two** notes');
    expect(client.getSnapshot().pending).toBe(0);
  });

  it('expands a note with what note-ai wrote, or says why it could not', async () => {
    const { client, ctx } = await setup();
    const seen: string[] = [];
    const expand: ExpandNote = async (n, instruction) => {
      seen.push(`${n.id}:${instruction}`);
      return { title: 'Login PRD', content: '## Goal' };
    };
    const r = await applyToolCall(call('expandNote', { id: 'h1', instruction: 'a PRD' }), ctx({ expand }));
    expect(seen).toEqual(['h1:a PRD']);
    expect('output' in r && r.output.title).toBe('Login PRD');
    expect(client.getSnapshot().notes.get('h1')).toMatchObject({ title: 'Login PRD', content: '## Goal', aiEdit: 'updated', owner: 'other-client' });

    const failing: ExpandNote = async () => {
      throw new Error('The answer was cut off.');
    };
    const bad = await applyToolCall(call('expandNote', { id: 'h1', instruction: 'again' }), ctx({ expand: failing }));
    expect(bad).toEqual({ errorText: expect.stringContaining('cut off') });
    expect(client.getSnapshot().notes.get('h1')!.content).toBe('## Goal');
  });

  it('refuses a tool it does not know', async () => {
    const { ctx } = await setup();
    expect(applyToolCall(call('launchRocket', {}), ctx())).toEqual({ errorText: expect.stringContaining('launchRocket') });
  });
});

describe('AiTurn', () => {
  it('undoes everything one turn changed in one step and one push', async () => {
    const { server, client, undo, ctx } = await setup([note('h1', { title: 'Keep' }), note('h2', { title: 'Doomed', content: 'old' })]);
    const c = ctx();
    applyToolCall(call('createNote', { title: 'New', content: '' }, 'c1'), c);
    applyToolCall(call('updateNote', { id: 'h1', title: 'Changed' }, 'c2'), c);
    applyToolCall(call('updateNote', { id: 'h1', content: 'twice' }, 'c3'), c);
    applyToolCall(call('deleteNote', { id: 'h2' }, 'c4'), c);
    expect(c.turn.changes.map((x) => x.kind)).toEqual(['created', 'updated', 'updated', 'deleted']);
    await settle();
    expect(undo.size).toBe(1);
    const pushes = server.pushes.length;

    expect(undo.undo()).toEqual({ kind: 'done', label: 'AI changes' });
    await settle();
    const s = client.getSnapshot();
    expect(s.notes.has('ai1')).toBe(false);
    expect(s.notes.get('h1')).toMatchObject({ title: 'Keep', content: '' });
    expect(s.notes.get('h1')!.aiEdit).toBeUndefined();
    expect(s.notes.get('h2')).toMatchObject({ title: 'Doomed', content: 'old' });
    expect(server.pushes.length).toBe(pushes + 1);
    expect(server.rows.has('ai1')).toBe(false);
    expect(server.rows.get('h1')!.title).toBe('Keep');
  });

  it('starts a new undo step for changes after an undo in the same turn', async () => {
    const { client, undo, ctx } = await setup([]);
    const c = ctx();
    applyToolCall(call('createNote', { title: 'One', content: '' }, 'c1'), c);
    undo.undo();
    applyToolCall(call('createNote', { title: 'Two', content: '' }, 'c2'), c);
    expect(undo.size).toBe(1);
    undo.undo();
    expect(client.getSnapshot().notes.size).toBe(0);
  });

  it('keeps a note an AI made marked as made by AI when it is updated', async () => {
    const { client, ctx } = await setup([]);
    const c = ctx();
    applyToolCall(call('createNote', { title: 'One', content: '' }, 'c1'), c);
    applyToolCall(call('updateNote', { id: 'ai1', content: 'more' }, 'c2'), c);
    expect(client.getSnapshot().notes.get('ai1')!.aiEdit).toBe('created');
  });
});

describe('locks and roles (docs/api.md, "Locks and roles")', () => {
  it('does not change or delete a note the person may not change, and tells the model why; new notes still come', async () => {
    const { server, client, ctx } = await setup([note('h1', { title: 'Locked one', content: 'Fixed', locked: true })]);
    const whyNot = (n: { locked?: boolean }) => (n.locked ? "Locked by the board's owner." : null);
    let asked = 0;
    const c = ctx({ whyNot, propose: () => (asked++, true) });
    for (const [tool, input] of [
      ['updateNote', { id: 'h1', title: 'Mine' }],
      ['deleteNote', { id: 'h1' }],
      ['expandNote', { id: 'h1', instruction: 'more' }],
    ] as const) {
      const r = applyToolCall(call(tool, input), c);
      expect(r).toEqual({ errorText: `The note "Locked one" (id h1) was not changed: Locked by the board's owner.` });
    }
    expect(asked).toBe(0); // nothing proposed to the person either
    await settle();
    expect(server.rows.get('h1')?.title).toBe('Locked one');
    expect(out(applyToolCall(call('createNote', { title: 'New', content: '' }), c)).id).toBe('ai1');
    expect(client.getSnapshot().notes.get('h1')?.title).toBe('Locked one');
  });
});
