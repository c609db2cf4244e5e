import { afterEach, describe, expect, it } from 'vitest';
import { AiError, setAiFetch } from '../api/ai';
import type { Note } from '../api/types';
import { CONTEXT_BUDGET, contextNotes, draftBody, draftNote, draftPath, expandNote, fetchFrontmatter, streamDraft, type DraftContext, type DraftState } from './noteDraft';

const realFetch = setAiFetch(fetch);
afterEach(() => void setAiFetch(realFetch));

const other: Note = { id: 'n2', title: 'Magic link', content: 'Send a link', x: 1, y: 2, color: 'blue', type: 'idea', updatedAt: '2026-01-01T00:00:00Z', version: 3 };
const ctx: DraftContext = { boardId: 'b1', noteId: 'n1', title: 'Login', content: 'We need a login.', allNotes: [other] };

/**
 * serve answers every request with a real streamed body: the chunks, then
 * an end or a failure. Each chunk waits for a pull, so the reader sees them
 * one by one.
 */
function serve(chunks: string[], opts: { status?: number; fail?: boolean; json?: unknown } = {}) {
  const calls: { url: string; body: Record<string, unknown>; signal?: AbortSignal | null }[] = [];
  setAiFetch(async (url, init) => {
    calls.push({ url: String(url), body: JSON.parse(String(init!.body)), signal: init!.signal });
    if (opts.json !== undefined) return new Response(JSON.stringify(opts.json), { status: opts.status ?? 200 });
    const enc = new TextEncoder();
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        // As fetch does: an aborted request's body fails.
        if (init!.signal?.aborted) return c.error(new DOMException('The operation was aborted.', 'AbortError'));
        if (i < chunks.length) return c.enqueue(enc.encode(chunks[i++]));
        if (opts.fail) return c.error(new TypeError('network error'));
        c.close();
      },
    });
    return new Response(body, { status: opts.status ?? 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  });
  return calls;
}

describe('the request', () => {
  it('asks note-ai with the prompt and the board as context', () => {
    expect(draftPath({ kind: 'ask', prompt: 'x' })).toBe('note-ai');
    expect(draftBody({ kind: 'ask', prompt: 'Write a PRD' }, ctx)).toEqual({
      boardId: 'b1',
      noteId: 'n1',
      prompt: 'Write a PRD',
      noteTitle: 'Login',
      noteContent: 'We need a login.',
      allNotes: [{ id: 'n2', title: 'Magic link', content: 'Send a link', color: 'blue', type: 'idea', x: 1, y: 2 }],
    });
  });
  it('sends a command without a prompt', () => {
    expect(draftPath({ kind: 'command', command: 'generate-prd' })).toBe('note-ai/generate-prd');
    expect(draftBody({ kind: 'command', command: 'generate-prd' }, ctx)).not.toHaveProperty('prompt');
  });
});

describe('streamDraft', () => {
  it('reports the text as it streams, then done', async () => {
    const calls = serve(['TITLE: Passwordless', ' login\n---\n', '# PRD\n', 'Users log in.']);
    const seen: DraftState[] = [];
    const end = await streamDraft({ kind: 'command', command: 'generate-prd' }, ctx, (s) => seen.push(s), new AbortController().signal);
    expect(calls[0].url).toBe('/api/canvas/note-ai/generate-prd');
    expect(seen.map((s) => s.phase)).toEqual(['streaming', 'streaming', 'streaming', 'streaming', 'streaming', 'done']);
    expect(seen[2].text).toBe('TITLE: Passwordless login\n---\n');
    expect(end).toEqual({ phase: 'done', text: 'TITLE: Passwordless login\n---\n# PRD\nUsers log in.' });
    expect(draftNote(end.text, 'Login')).toEqual({ title: 'Passwordless login', content: '# PRD\nUsers log in.' });
  });

  it('keeps what arrived when the stream is cut', async () => {
    serve(['TITLE: Half\n---\n', 'The first part'], { fail: true });
    const end = await streamDraft({ kind: 'ask', prompt: 'p' }, ctx, () => {}, new AbortController().signal);
    expect(end.phase).toBe('failed');
    expect(end.text).toBe('TITLE: Half\n---\nThe first part');
    expect((end as { error: AiError }).error.kind).toBe('cut');
    expect(draftNote(end.text, 'Login')).toEqual({ title: 'Half', content: 'The first part' });
  });

  it('is stopped by the user, keeping the text so far', async () => {
    serve(['TITLE: T\n---\n', 'one ', 'two ', 'three']);
    const ac = new AbortController();
    const end = await streamDraft(
      { kind: 'ask', prompt: 'p' },
      ctx,
      (s) => {
        if (s.text.endsWith('one ')) ac.abort();
      },
      ac.signal,
    );
    expect(end).toEqual({ phase: 'stopped', text: 'TITLE: T\n---\none ' });
  });

  it('fails with the server error before any text', async () => {
    serve([], { status: 503, json: { error: 'AI model unavailable: cannot reach Ollama.' } });
    const end = await streamDraft({ kind: 'ask', prompt: 'p' }, ctx, () => {}, new AbortController().signal);
    expect(end.phase).toBe('failed');
    expect(end.text).toBe('');
    expect((end as { error: AiError }).error.kind).toBe('unavailable');
  });

  it('carries the server list for an unknown command', async () => {
    const commands = ['generate-prd', 'generate-epic'];
    serve([], { status: 400, json: { error: 'Unknown command "generate-poem".', field: 'command', commands } });
    const end = await streamDraft({ kind: 'command', command: 'generate-poem' }, ctx, () => {}, new AbortController().signal);
    expect((end as { error: AiError }).error.commands).toEqual(commands);
  });
});

describe('expandNote', () => {
  it('is the editor\'s Ask AI request, and resolves to the answer\'s title and body', async () => {
    const calls = serve(['TITLE: Login v2\n---\n', 'Codes by e-mail.']);
    const seen: string[] = [];
    const note: Note = { ...other, id: 'n1', title: 'Login', content: 'We need a login.' };
    const got = await expandNote('b1', note, 'More detail', [note, other], (t) => seen.push(t));
    expect(got).toEqual({ title: 'Login v2', content: 'Codes by e-mail.' });
    expect(seen.at(-1)).toBe('TITLE: Login v2\n---\nCodes by e-mail.');
    expect(calls[0].url).toBe('/api/canvas/note-ai');
    expect(calls[0].body).toEqual(draftBody({ kind: 'ask', prompt: 'More detail' }, { boardId: 'b1', noteId: 'n1', title: 'Login', content: 'We need a login.', allNotes: [note, other] }));
  });
});

describe('draftNote', () => {
  it('keeps the note title when the answer has none', () => expect(draftNote('Just a body', 'Login')).toEqual({ title: 'Login', content: 'Just a body' }));
  it('has nothing to accept before the body starts', () => expect(draftNote('TITLE: Only a title\n---\n', 'Login')).toBeNull());
});

describe('fetchFrontmatter', () => {
  it('asks generate-frontmatter without the note itself in allNotes', async () => {
    const calls = serve([], { json: { description: 'How users log in.', relationships: [{ noteId: 'n2', title: 'Magic link', type: 'relates_to', reason: 'same flow' }] } });
    const f = await fetchFrontmatter({ ...ctx, allNotes: [other, { ...other, id: 'n1' }] }, { title: 'Login', content: 'Body' });
    expect(calls[0].url).toBe('/api/canvas/generate-frontmatter');
    expect(calls[0].body).toMatchObject({ boardId: 'b1', noteId: 'n1', title: 'Login', content: 'Body' });
    expect((calls[0].body.allNotes as { id: string }[]).map((n) => n.id)).toEqual(['n2']);
    expect(f?.relationships[0].title).toBe('Magic link');
  });
  it('resolves to undefined on a failure, never rejects', async () => {
    serve([], { status: 429, json: { error: 'quota', used: 10, limit: 10, plan: 'free' } });
    await expect(fetchFrontmatter(ctx, { title: 'T', content: 'C' })).resolves.toBeUndefined();
  });
});

describe('contextNotes', () => {
  const many = (n: number, len: number): Note[] => Array.from({ length: n }, (_, i) => ({ ...other, id: `n${i}`, content: 'é'.repeat(len) }));
  it('sends small boards whole', () => expect(contextNotes(many(3, 500)).map((n) => n.content.length)).toEqual([500, 500, 500]));
  it('keeps a very large board within the budget and the 8 MiB body limit', () => {
    const out = contextNotes(many(2500, 30_000));
    expect(out).toHaveLength(2000);
    expect(out.reduce((s, n) => s + n.content.length, 0)).toBeLessThanOrEqual(CONTEXT_BUDGET);
    expect(new TextEncoder().encode(JSON.stringify(out)).length).toBeLessThan(8 << 20);
  });
  it('cuts by code points, never inside a surrogate pair', () => {
    const out = contextNotes([{ ...other, content: '😀'.repeat(20_000) }]);
    expect(Array.from(out[0].content)).toHaveLength(12_000);
    expect(out[0].content.endsWith('😀')).toBe(true);
  });
});
