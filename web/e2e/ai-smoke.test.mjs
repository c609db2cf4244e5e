// Smoke test of the AI end-to-end harness: the real corkboard binary talks
// to the fake Ollama process (cmd/corkboard-fakeollama) replaying the
// recordings of web/e2e/ollama/, and a logged-in page reads a streamed
// answer the way the note editor does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { skipAI, startFakeOllama, startServer, launch } from './harness.mjs';
import { login, createBoard } from './helpers.mjs';

let fake, server, browser;
before(async () => {
  if (skipAI) return;
  fake = await startFakeOllama();
  server = await startServer({ ollama: fake.url });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.stop();
});

// readStream posts body to path from the page and reads the answer chunk by
// chunk; a read that fails (a cut answer) is reported, with what arrived.
function readStream(page, path, body) {
  return page.evaluate(
    async ({ path, body }) => {
      const res = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const out = { status: res.status, type: res.headers.get('content-type'), text: '', chunks: 0, error: '' };
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          out.chunks++;
          out.text += dec.decode(value, { stream: true });
        }
      } catch (err) {
        out.error = String(err);
      }
      return out;
    },
    { path, body },
  );
}

test('note-ai generate-prd streams the recorded PRD from the fake Ollama', { skip: skipAI }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, 'ai-smoke@example.com');
  const boardId = await createBoard(page, 'AI smoke');
  const got = await readStream(page, '/api/canvas/note-ai/generate-prd', { boardId, noteId: 'n1', prompt: 'A PRD for passwordless login', noteTitle: 'Login' });
  assert.equal(got.status, 200, got.text);
  assert.equal(got.type, 'text/plain; charset=utf-8');
  assert.equal(got.error, '');
  assert.equal(
    got.text,
    'TITLE: Passwordless login PRD\n---\n## Problem\nUsers forget passwords and lock themselves out.\n\n## Requirements\n- Sign in with a one-time code sent by e-mail\n- Codes expire after 10 minutes\n\n## Open questions\n- Rate limits: TBD',
  );
  assert.match(fake.log(), /answered by rule "note-ai-generate-prd"/);
  await ctx.close();
});

test('a note answer cut mid-stream keeps its text and makes the read fail', { skip: skipAI }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, 'ai-cut@example.com');
  const boardId = await createBoard(page, 'AI cut');
  const got = await readStream(page, '/api/canvas/note-ai', { boardId, noteId: 'n1', prompt: 'FAKE-CUT please' });
  assert.equal(got.status, 200);
  assert.equal(got.text, 'TITLE: Cut answer\n---\nThe first part arrived');
  assert.match(got.error, /TypeError/, 'the body read must fail, not end as if complete');
  assert.match(fake.log(), /answered by rule "note-ai-cut"/);
  await ctx.close();
});
