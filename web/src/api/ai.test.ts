import { afterEach, describe, expect, it } from 'vitest';
import { AiError, aiJson, aiText, parseNoteAnswer, setAiFetch } from './ai';
import { aiErrorMessage } from '../ai/errors';

const realFetch = setAiFetch(fetch);
afterEach(() => void setAiFetch(realFetch));

/** stream returns a body that yields chunks, then ends or errors. */
function stream(chunks: string[], opts: { fail?: boolean } = {}): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < chunks.length) return c.enqueue(enc.encode(chunks[i++]));
      if (opts.fail) return c.error(new TypeError('network error'));
      c.close();
    },
  });
}

function answer(status: number, body: BodyInit | null, headers: Record<string, string> = {}) {
  const calls: { url: string; init: RequestInit }[] = [];
  setAiFetch(async (url, init) => {
    calls.push({ url: String(url), init: init! });
    return new Response(body, { status, headers });
  });
  return calls;
}

async function failure(p: Promise<unknown>): Promise<AiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AiError);
    return e as AiError;
  }
  throw new Error('expected the request to fail');
}

describe('aiText', () => {
  it('streams the text so far to onText and resolves to the whole answer', async () => {
    const calls = answer(200, stream(['TITLE: Lo', 'gin\n---\n', 'Body é']));
    const seen: string[] = [];
    const text = await aiText('note-ai/generate-prd', { boardId: 'b1' }, (t) => seen.push(t));
    expect(text).toBe('TITLE: Login\n---\nBody é');
    expect(seen).toEqual(['TITLE: Lo', 'TITLE: Login\n---\n', 'TITLE: Login\n---\nBody é']);
    expect(calls[0].url).toBe('/api/canvas/note-ai/generate-prd');
    expect(calls[0].init.method).toBe('POST');
    expect(JSON.parse(String(calls[0].init.body))).toEqual({ boardId: 'b1' });
  });

  it('a stream cut midway keeps what arrived and says it was cut', async () => {
    answer(200, stream(['TITLE: A\n---\n', 'half a sen'], { fail: true }));
    const e = await failure(aiText('note-ai', {}, () => {}));
    expect(e.kind).toBe('cut');
    expect(e.partial).toBe('TITLE: A\n---\nhalf a sen');
    expect(aiErrorMessage(e)).toBe('The answer was cut off. What arrived is kept.');
  });

  it('a stop by the user is an AbortError, not a failure to report', async () => {
    const ctl = new AbortController();
    setAiFetch(async (_u, init) => {
      const body = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('TITLE: x'));
          init!.signal!.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
        },
      });
      return new Response(body, { status: 200 });
    });
    const p = aiText('note-ai', {}, () => ctl.abort(), { signal: ctl.signal });
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('errors a person understands', () => {
  const cases: { name: string; status: number; body: string; headers?: Record<string, string>; kind: string; message: RegExp }[] = [
    {
      name: 'the monthly quota, from the 429 body',
      status: 429,
      body: JSON.stringify({ error: 'AI credit quota exceeded', used: 100, limit: 100, plan: 'free' }),
      kind: 'quota',
      message: /^You have used 100 of 100 AI credits this month on the free plan\.$/,
    },
    { name: 'the per-minute limit', status: 429, body: JSON.stringify({ error: 'Too many AI requests' }), headers: { 'Retry-After': '17' }, kind: 'rate', message: /Try again in 17 seconds\./ },
    {
      name: 'the model not running',
      status: 503,
      body: JSON.stringify({ error: 'AI model unavailable: cannot reach Ollama.' }),
      kind: 'unavailable',
      message: /^The local AI model is not available \(cannot reach Ollama\)\. .*ollama serve/,
    },
    { name: 'a refused field', status: 400, body: JSON.stringify({ error: 'text is too long', field: 'text' }), kind: 'invalid', message: /text is too long \(text\)/ },
    { name: 'a proxy page', status: 502, body: '<html>bad gateway</html>', kind: 'upstream', message: /The server answered 502/ },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      answer(c.status, c.body, c.headers);
      const e = await failure(aiJson('document-to-notes', { text: 'x' }));
      expect(e.kind).toBe(c.kind);
      expect(aiErrorMessage(e)).toMatch(c.message);
    });
  }

  it('the quota message says when the credits renew when that is known', async () => {
    answer(429, JSON.stringify({ error: 'quota', used: 7, limit: 5, plan: 'free' }));
    const e = await failure(aiJson('notes/analyze', {}));
    expect(aiErrorMessage(e, '2026-12-01T00:00:00Z')).toMatch(/^You have used 7 of 5 AI credits this month on the free plan\. They renew on .*2026/);
  });

  it('no answer at all is offline', async () => {
    setAiFetch(async () => {
      throw new TypeError('Failed to fetch');
    });
    const e = await failure(aiJson('notes/analyze', {}));
    expect(e.kind).toBe('offline');
  });

  it('an unknown command carries the server list', async () => {
    answer(400, JSON.stringify({ error: 'Unknown command', field: 'command', commands: ['generate-prd', 'generate-epic'] }));
    const e = await failure(aiText('note-ai/generate-poem', {}, () => {}));
    expect(e.commands).toEqual(['generate-prd', 'generate-epic']);
  });
});

describe('parseNoteAnswer', () => {
  const cases: [string, ReturnType<typeof parseNoteAnswer>][] = [
    ['', { title: '', body: '', complete: false }],
    ['TITLE: Log', { title: 'Log', body: '', complete: false }],
    ['TITLE: Login\n--', { title: 'Login', body: '', complete: false }],
    ['TITLE: Login\n---\n', { title: 'Login', body: '', complete: true }],
    ['title:  Login \r\n---\r\n# PRD\nText', { title: 'Login', body: '# PRD\nText', complete: true }],
    ['TITLE: Login\nNo separator here', { title: 'Login', body: 'No separator here', complete: true }],
    ['Just a body', { title: '', body: 'Just a body', complete: false }],
  ];
  for (const [text, want] of cases) {
    it(JSON.stringify(text), () => expect(parseNoteAnswer(text)).toEqual(want));
  }
});
