// The chat's logic end to end inside the AI SDK's own Chat class: the
// server's answers are real UI message streams (SSE bodies) from a stubbed
// fetch, the board is a real SyncClient on a fake server.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Chat } from '@ai-sdk/react';
import type { UIMessage } from 'ai';
import { AiError, setAiFetch } from '../../api/ai';
import { SyncClient } from '../../sync/client';
import { MemoryStore } from '../../sync/store';
import { FakeClock, FakeLive, FakeServer, note, settle } from '../../sync/testing';
import { UndoHistory } from '../../canvas/undo';
import { ChatSession, MAX_CONTINUATIONS } from './session';
import { chatError, cutReason } from './chatError';
import { aiErrorMessage } from '../errors';

const realFetch = setAiFetch(fetch);
afterEach(() => void setAiFetch(realFetch));

type Chunk = Record<string, unknown>;

/** sse is the server's UI message stream of chunks; broken drops the connection after them instead of ending. */
function sse(chunks: Chunk[], o: { broken?: boolean } = {}): Response {
  const enc = new TextEncoder();
  const frames = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`);
  if (!o.broken) frames.push('data: [DONE]\n\n');
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < frames.length) return c.enqueue(enc.encode(frames[i++]));
      if (o.broken) return c.error(new TypeError('network error'));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' } });
}

let msgN = 0;
const text = (t: string): Chunk[] => [{ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: t }, { type: 'text-end', id: 'text-1' }];
/** answer wraps chunks in start … finish, with a new server messageId each time (as the server does). */
const answer = (...parts: Chunk[][]): Chunk[] => [{ type: 'start', messageId: `msg-${++msgN}` }, { type: 'start-step' }, ...parts.flat(), { type: 'finish-step' }, { type: 'finish' }];
const toolCall = (toolName: string, input: unknown, id = 'call_1'): Chunk[] => [{ type: 'tool-input-available', toolCallId: id, toolName, input }];

interface Posted {
  url: string;
  body: { boardId: string; boardState: { notes: { id: string; title: string }[] }; currentPhase?: unknown; messages: UIMessage[] };
}

/** serve answers each POST with the next response, recording what was sent. */
function serve(...responses: (Response | (() => Response))[]): Posted[] {
  const posted: Posted[] = [];
  setAiFetch(async (url, init) => {
    posted.push({ url: String(url), body: JSON.parse(String(init!.body)) });
    const r = responses.shift();
    if (!r) throw new Error(`unexpected request ${posted.length} to ${url}`);
    return typeof r === 'function' ? r() : r;
  });
  return posted;
}

let keyN = 0;
async function setup(o: { canEdit?: boolean } = {}) {
  const server = new FakeServer();
  server.apply({ notes: { upserted: [note('h1', { title: 'Existing' })], deleted: [] } });
  const client = new SyncClient({ boardId: 'b1', transport: server, store: new MemoryStore(), live: new FakeLive(), clock: new FakeClock(), newKey: () => `k${++keyN}` });
  await client.start();
  const undo = new UndoHistory(client);
  let n = 0;
  const session = new ChatSession({
    client,
    boardId: 'b1',
    undo,
    expand: async () => ({ title: 'Expanded', content: 'Long text' }),
    canEdit: () => o.canEdit ?? true,
    phases: () => ({ phases: [{ id: 'p1', name: 'Discovery' }], currentPhaseId: 'p1' }),
    newId: () => `ai${++n}`,
  });
  const chat = new Chat<UIMessage>({ transport: session.transport, onToolCall: session.onToolCall, sendAutomaticallyWhen: session.sendAutomaticallyWhen, onFinish: session.onFinish });
  session.bind(chat);
  const ask = async (t: string) => {
    await session.startTurn();
    await chat.sendMessage({ text: t });
  };
  return { server, client, undo, session, chat, ask };
}

const textOf = (m: UIMessage) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('ChatSession', () => {
  it('applies a tool call, tells the model what happened and lets it finish the same message', async () => {
    const { client, chat, undo, ask, server } = await setup();
    const posted = serve(sse(answer(text('Adding it.'), toolCall('createNote', { title: 'Go', content: 'A language' }))), sse(answer(text('Done: the note is on the board.'))));
    await ask('Add a note about Go');

    expect(posted.map((p) => p.url)).toEqual(['/api/canvas/chat', '/api/canvas/chat']);
    expect(posted[0].body.boardId).toBe('b1');
    expect(posted[0].body.boardState.notes.map((n) => n.title)).toEqual(['Existing']);
    expect(posted[0].body.currentPhase).toBeUndefined();
    // The continuation carries the tool's output, with the new note's id, and the board as it is now.
    const tool = posted[1].body.messages.at(-1)!.parts.find((p) => p.type === 'tool-createNote') as { state: string; output: { id: string; message: string } };
    expect(tool.state).toBe('output-available');
    expect(tool.output.id).toBe('ai1');
    expect(posted[1].body.boardState.notes.map((n) => n.title).sort()).toEqual(['Existing', 'Go']);

    expect(client.getSnapshot().notes.get('ai1')).toMatchObject({ title: 'Go', aiEdit: 'created' });
    // One user message and one assistant message, holding both steps.
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(textOf(chat.messages[1])).toBe('Adding it.Done: the note is on the board.');
    expect(chat.status).toBe('ready');

    await settle();
    expect(server.rows.get('ai1')?.title).toBe('Go');
    expect(undo.size).toBe(1);
    expect(undo.undo()).toEqual({ kind: 'done', label: 'AI changes' });
    expect(client.getSnapshot().notes.has('ai1')).toBe(false);
  });

  it('waits for expandNote before going on', async () => {
    const { client, chat, ask } = await setup();
    const posted = serve(sse(answer(toolCall('expandNote', { id: 'h1', instruction: 'more' }))), sse(answer(text('Expanded.'))));
    await ask('Expand the note');
    await vi.waitFor(() => expect(chat.status === 'ready' && posted.length === 2).toBe(true));
    await vi.waitFor(() => expect(textOf(chat.messages[1])).toBe('Expanded.'));
    expect(client.getSnapshot().notes.get('h1')).toMatchObject({ title: 'Expanded', content: 'Long text', aiEdit: 'updated' });
  });

  it('does not go on after a step of calls the server rejected', async () => {
    const { chat, ask, client } = await setup();
    const posted = serve(sse(answer([{ type: 'tool-input-error', toolCallId: 'c1', toolName: 'createNote', input: { title: 5 }, errorText: 'Invalid input for tool createNote: at /title: got number, want string.' }])));
    await ask('Add a note');
    expect(posted).toHaveLength(1);
    const part = chat.messages[1].parts.find((p) => p.type === 'tool-createNote') as { state: string; errorText: string };
    expect(part).toMatchObject({ state: 'output-error', errorText: expect.stringContaining('/title') });
    expect(client.getSnapshot().notes.size).toBe(1);
  });

  it('tells the model when the board is view only, and changes nothing', async () => {
    const { chat, ask, client } = await setup({ canEdit: false });
    const posted = serve(sse(answer(toolCall('deleteNote', { id: 'h1' }))), sse(answer(text('I cannot change this board.'))));
    await ask('Delete it');
    const part = posted[1].body.messages.at(-1)!.parts.find((p) => p.type === 'tool-deleteNote') as { state: string; errorText: string };
    expect(part).toMatchObject({ state: 'output-error', errorText: expect.stringContaining('view') });
    expect(client.getSnapshot().notes.has('h1')).toBe(true);
    expect(chat.status).toBe('ready');
  });

  it(`stops going on by itself after ${MAX_CONTINUATIONS} continuations`, async () => {
    const { ask } = await setup();
    const answers = Array.from({ length: MAX_CONTINUATIONS + 1 }, (_, i) => sse(answer(toolCall('createNote', { title: `N${i}`, content: '' }, `call_${i}`))));
    const posted = serve(...answers);
    await ask('Keep adding');
    expect(posted).toHaveLength(MAX_CONTINUATIONS + 1);
  });

  it('posts to the subagent with the current phase in phase-coach mode', async () => {
    const { session, ask } = await setup();
    session.mode = 'subagent';
    const posted = serve(sse(answer(text('Try this:\n\n```json\n{"suggestions":[{"label":"A","prompt":"a"},{"label":"B","prompt":"b"},{"label":"C","prompt":"c"}]}\n```'))));
    await ask('What next?');
    expect(posted[0].url).toBe('/api/canvas/subagent');
    expect(posted[0].body.currentPhase).toEqual({ id: 'p1', name: 'Discovery' });
  });

  it('turns a quota 429 into the AiError with used, limit and plan', async () => {
    const { chat, ask } = await setup();
    serve(new Response(JSON.stringify({ error: 'Monthly AI credits used up.', used: 3, limit: 3, plan: 'pro' }), { status: 429, headers: { 'content-type': 'application/json' } }));
    await ask('Hello');
    expect(chat.status).toBe('error');
    const e = chatError(chat.error, '');
    expect(e).toBeInstanceOf(AiError);
    expect(e.kind).toBe('quota');
    expect(e.quota).toEqual({ used: 3, limit: 3, plan: 'pro' });
  });

  it('says when to try again after the per-minute limit, and that the model is down on a 503', async () => {
    const { chat, ask } = await setup();
    serve(
      new Response(JSON.stringify({ error: 'Too many AI requests: wait a moment.' }), { status: 429, headers: { 'Retry-After': '12' } }),
      new Response(JSON.stringify({ error: 'AI model unavailable: cannot reach Ollama.' }), { status: 503 }),
    );
    await ask('Hello');
    const rate = chatError(chat.error, '');
    expect([rate.kind, rate.retryAfter]).toEqual(['rate', 12]);
    expect(aiErrorMessage(rate)).toBe('Too many AI requests. Try again in 12 seconds.');
    await ask('Hello again');
    const down = chatError(chat.error, '');
    expect(down.kind).toBe('unavailable');
    expect(aiErrorMessage(down)).toMatch(/^The local AI model is not available \(cannot reach Ollama\)\./);
  });

  it('keeps the text of an answer cut by an error chunk, and says why', async () => {
    const { chat, ask } = await setup();
    serve(sse([{ type: 'start', messageId: 'm' }, { type: 'start-step' }, ...text('Half an ans'), { type: 'finish-step' }, { type: 'error', errorText: 'The AI model stopped answering.' }]));
    await ask('Hello');
    expect(chat.status).toBe('error');
    const partial = textOf(chat.messages[1]);
    expect(partial).toBe('Half an ans');
    const e = chatError(chat.error, partial);
    expect(e.kind).toBe('cut');
    expect(e.partial).toBe('Half an ans');
    expect(e.message).toBe('The AI model stopped answering.');
    expect(aiErrorMessage(e)).toBe('The answer was cut off. What arrived is kept.');
    expect(cutReason(e)).toBe('The AI model stopped answering.');
  });

  it('reads an error chunk before any text as the failure it names', async () => {
    const { chat, ask } = await setup();
    serve(sse([{ type: 'start' }, { type: 'start-step' }, { type: 'finish-step' }, { type: 'error', errorText: 'AI model unavailable: no answer within 2m0s.' }]));
    await ask('Hello');
    expect(chatError(chat.error, textOf(chat.messages[1] ?? { parts: [] } as unknown as UIMessage)).kind).toBe('unavailable');
  });

  it('keeps the text of an answer whose connection broke', async () => {
    const { chat, ask } = await setup();
    serve(sse([{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'So far' }], { broken: true }));
    await ask('Hello');
    expect(chat.status).toBe('error');
    expect(textOf(chat.messages[1])).toBe('So far');
    const e = chatError(chat.error, 'So far');
    expect(e.kind).toBe('cut');
    expect(cutReason(e)).toBe('The connection to the server broke.');
  });
});

describe('destructive tool calls are proposals (issue 21)', () => {
  /** setupTwo is the board with the two notes a prompt-injected answer tries to delete. */
  async function setupTwo() {
    const s = await setup();
    s.client.upsertNote(note('keep1', { title: 'Keep one', content: 'Important one' }));
    s.client.upsertNote(note('keep2', { title: 'Keep two', content: 'Important two' }));
    await settle();
    return s;
  }
  const deleteBoth = () => sse(answer(text('Cleaning up.'), toolCall('deleteNote', { id: 'keep1' }, 'call_d1'), toolCall('deleteNote', { id: 'keep2' }, 'call_d2')));
  /** waitProposals waits until the session holds n proposals (the tool calls were seen). */
  const waitProposals = (session: ChatSession, n: number) => vi.waitFor(() => expect(session.proposals).toHaveLength(n));

  it('deletes nothing until the person answers, and Keep keeps both notes', async () => {
    const { client, session, chat, ask } = await setupTwo();
    const posted = serve(deleteBoth(), sse(answer(text('Understood, I kept them.'))));
    await ask('Summarise this board');
    await waitProposals(session, 2);
    expect(session.proposals.map((p) => [p.kind, p.noteId])).toEqual([['delete', 'keep1'], ['delete', 'keep2']]);
    expect(client.getSnapshot().notes.has('keep1')).toBe(true);
    expect(client.getSnapshot().notes.has('keep2')).toBe(true);
    expect(posted).toHaveLength(1); // the conversation waits for the answer

    session.decide(false);
    await vi.waitFor(() => expect(posted).toHaveLength(2));
    await vi.waitFor(() => expect(chat.status).toBe('ready'));
    expect(session.proposals).toHaveLength(0);
    expect(client.getSnapshot().notes.has('keep1')).toBe(true);
    expect(client.getSnapshot().notes.has('keep2')).toBe(true);
    // The model is told the person kept them.
    const parts = posted[1].body.messages.at(-1)!.parts.filter((p) => p.type === 'tool-deleteNote') as { state: string; output: { message: string } }[];
    expect(parts.map((p) => p.state)).toEqual(['output-available', 'output-available']);
    expect(parts[0].output.message).toMatch(/kept/);
  });

  it('Delete deletes both in one undo step', async () => {
    const { client, session, undo, ask } = await setupTwo();
    const posted = serve(deleteBoth(), sse(answer(text('Deleted.'))));
    await ask('Summarise this board');
    await waitProposals(session, 2);
    session.decide(true);
    await vi.waitFor(() => expect(posted).toHaveLength(2));
    expect(client.getSnapshot().notes.has('keep1')).toBe(false);
    expect(client.getSnapshot().notes.has('keep2')).toBe(false);
    expect(session.changes.map((c) => c.kind)).toEqual(['deleted', 'deleted']);
    undo.undo();
    expect(client.getSnapshot().notes.has('keep1')).toBe(true);
    expect(client.getSnapshot().notes.has('keep2')).toBe(true);
  });

  it('a new message keeps what was proposed', async () => {
    const { client, session, chat, ask } = await setupTwo();
    const posted = serve(deleteBoth(), sse(answer(text('Fine.'))));
    await ask('Summarise this board');
    await waitProposals(session, 2);
    await ask('Never mind');
    expect(session.proposals).toHaveLength(0);
    expect(client.getSnapshot().notes.has('keep1')).toBe(true);
    const parts = posted[1].body.messages.find((m) => m.role === 'assistant')!.parts.filter((p) => p.type === 'tool-deleteNote') as { state: string }[];
    expect(parts.map((p) => p.state)).toEqual(['output-available', 'output-available']);
    expect(chat.status).toBe('ready');
  });

  it('an update that replaces most of a note waits too; one that adds applies at once', async () => {
    const { client, session, ask } = await setupTwo();
    serve(
      sse(answer(toolCall('updateNote', { id: 'keep1', content: 'Important one\nand more' }, 'call_u1'), toolCall('updateNote', { id: 'keep2', content: 'Gone' }, 'call_u2'))),
      sse(answer(text('Done.'))),
    );
    await ask('Edit them');
    await waitProposals(session, 1);
    expect(session.proposals[0]).toMatchObject({ kind: 'replace', noteId: 'keep2' });
    expect(client.getSnapshot().notes.get('keep1')!.content).toBe('Important one\nand more');
    expect(client.getSnapshot().notes.get('keep2')!.content).toBe('Important two');
    session.decide(true);
    await vi.waitFor(() => expect(client.getSnapshot().notes.get('keep2')!.content).toBe('Gone'));
  });
});
