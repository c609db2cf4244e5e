// Smoke test of the AI end-to-end harness: the real corkboard binary talks
// to the fake Ollama process (cmd/corkboard-fakeollama) replaying the
// recordings of web/e2e/ollama/, and a logged-in page reads a streamed
// answer the way the note editor does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skipAI, withAIServerAndBrowser } from './harness.mjs';
import { login, createBoard } from './helpers.mjs';

let fake, server, browser;
withAIServerAndBrowser((up) => ({ fake, server, browser } = up));

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
  // The fake holds the answer at its gate after the text: the page reads
  // all of it before the cut, so what "arrived" is known exactly (a
  // browser drops bytes it had not handed to the page when the
  // connection breaks).
  await page.evaluate(
    ({ boardId }) => {
      const out = (window.__cut = { status: 0, text: '', error: '', done: false });
      void (async () => {
        try {
          const res = await fetch('/api/canvas/note-ai', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ boardId, noteId: 'n1', prompt: 'FAKE-CUT please' }) });
          out.status = res.status;
          const reader = res.body.getReader();
          const dec = new TextDecoder();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            out.text += dec.decode(value, { stream: true });
          }
        } catch (err) {
          out.error = String(err);
        }
        out.done = true;
      })();
    },
    { boardId },
  );
  const partial = 'TITLE: Cut answer\n---\nThe first part arrived';
  await page.waitForFunction((want) => window.__cut.text === want, partial);
  await fake.release('note-ai-cut');
  await page.waitForFunction(() => window.__cut.done);
  const got = await page.evaluate(() => window.__cut);
  assert.equal(got.status, 200);
  assert.equal(got.text, partial);
  assert.match(got.error, /TypeError/, 'the body read must fail, not end as if complete');
  assert.match(fake.log(), /answered by rule "note-ai-cut"/);
  await ctx.close();
});
