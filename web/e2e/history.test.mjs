// End-to-end tests of the board's history: the changelog the client writes
// (docs/web-client.md, "History").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, synced } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const isLogPost = (r) => r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/log');

test('an update is logged once, 15 s after the last of many edits', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.clock.install();
  await login(page, server, 'clock@example.com');
  const id = await createBoard(page, 'Clock board');
  const created = page.waitForResponse((r) => isLogPost(r.request()));
  await addNote(page, 'Draft');
  assert.equal((await created).status(), 200, 'create_note is logged at once');
  await synced(page);

  // From here time moves only when the test says so.
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
  const logged = [];
  page.on('request', (r) => {
    if (isLogPost(r)) logged.push(...JSON.parse(r.postData()).entries);
  });
  const editor = page.getByRole('dialog', { name: 'Edit note' });
  for (let i = 1; i <= 5; i++) {
    await page.locator('.note', { hasText: 'Draft' }).dblclick();
    await editor.getByLabel('Content (Markdown)').fill(`version ${i}`);
    await editor.getByRole('button', { name: 'Save' }).click();
    await editor.waitFor({ state: 'detached' });
    await synced(page);
    await page.clock.runFor(2000);
  }
  await page.clock.runFor(12_000); // 14 s after the last edit
  assert.deepEqual(logged, [], 'nothing is logged while the edits go on, nor 14 s after');
  const sent = page.waitForResponse((r) => isLogPost(r.request()));
  await page.clock.runFor(1000);
  assert.equal((await sent).status(), 200);
  assert.deepEqual(
    logged.map((e) => e.action),
    ['update_note'],
  );
  assert.match(logged[0].content, /\n\nversion 5\n$/, 'the snapshot is the note when the wait ended');

  const res = await page.request.get(`${server.url}/api/boards/${id}/log?action=update_note`);
  assert.equal((await res.json()).entries.length, 1, 'the server holds one update');
  await ctx.close();
});
