// End-to-end tests of the board's history: the changelog the client writes
// (docs/web-client.md, "History").
import { test } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, synced, invite, menuItem, openFull } from './helpers.mjs';

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
    await openFull(page, page.locator('.note', { hasText: 'Draft' }));
    await editor.getByLabel('Content (Markdown)').fill(`version ${i}`);
    await editor.getByRole('button', { name: 'Save' }).click();
    await editor.waitFor({ state: 'detached' });
    // Not synced(): with the clock paused no animation frame comes, so
    // the page may not redraw its "waiting" count when the ack arrives.
    await serverHas(page, id, `version ${i}`);
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

/** serverHas waits (in real time, not the page's) until the server holds a note whose content is content. */
async function serverHas(page, boardId, content) {
  for (const deadline = Date.now() + 20_000; ; ) {
    const res = await page.request.get(`${server.url}/api/boards/${boardId}/sync?since=0`);
    if ((await res.json()).notes?.some((n) => n.content === content)) return;
    assert.ok(Date.now() < deadline, `the server never held a note with ${JSON.stringify(content)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function userPage(email) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, email);
  return { ctx, page };
}

async function seriousViolations(page) {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

test('a deleted note is restored from history and comes back live for the other user', { skip }, async () => {
  const ada = await userPage('ada-h@example.com');
  const id = await createBoard(ada.page, 'Restore board');
  server.setPlan('grace-h@example.com', 'pro');
  await invite(ada.page, 'grace-h@example.com');

  const logged = ada.page.waitForResponse((r) => isLogPost(r.request()));
  await addNote(ada.page, 'Lost and found', '- **keep** this');
  await logged;
  const grace = await userPage('grace-h@example.com');
  await grace.page.goto(`${server.url}/b/${id}`);
  await grace.page.locator('.note', { hasText: 'Lost and found' }).waitFor();

  const deleted = ada.page.waitForResponse((r) => isLogPost(r.request()) && r.request().postData().includes('delete_note'));
  await ada.page.locator('.note', { hasText: 'Lost and found' }).click();
  await ada.page.keyboard.press('Delete');
  assert.equal((await deleted).status(), 200, 'delete_note is logged at once');
  await grace.page.locator('.note', { hasText: 'Lost and found' }).waitFor({ state: 'detached' });

  await menuItem(ada.page, 'Deleted notes');
  const panel = ada.page.getByRole('dialog', { name: 'Deleted notes' });
  // The list names the deleted note by its title, not its id.
  await panel.locator('.history-list li', { hasText: 'Deleted "Lost and found"' }).waitFor();
  await panel.getByRole('button', { name: /^View the version/ }).click();
  await panel.locator('.history-version strong', { hasText: 'keep' }).waitFor();
  assert.deepEqual(await seriousViolations(ada.page), [], 'history panel');
  await panel.getByRole('button', { name: /^Restore the version/ }).click();
  await panel.getByRole('button', { name: 'Close' }).click();

  await ada.page.locator('.note', { hasText: 'Lost and found' }).waitFor();
  await grace.page.locator('.note', { hasText: 'Lost and found' }).waitFor({ timeout: 15000 });
  await synced(ada.page);
  const res = await ada.page.request.get(`${server.url}/api/boards/${id}/sync?since=0`);
  const notes = (await res.json()).notes;
  assert.equal(notes.length, 1);
  assert.equal(notes[0].content, '- **keep** this');

  // The note's own history lists its creation and deletion.
  await openFull(ada.page, ada.page.locator('.note', { hasText: 'Lost and found' }));
  await ada.page.getByRole('dialog', { name: 'Edit note' }).getByRole('button', { name: 'History' }).click();
  const hist = ada.page.getByRole('dialog', { name: 'History of "Lost and found"' });
  await hist.locator('.history-list li', { hasText: /^Deleted/ }).waitFor();
  // Created, then created again by the restore (a push of a note the board did not have).
  await hist.locator('.history-list li', { hasText: /^Created/ }).nth(1).waitFor();
  await ada.ctx.close();
  await grace.ctx.close();
});

test('a snapshot is taken, the board changes, and restoring the snapshot brings it back', { skip }, async () => {
  const { ctx, page } = await userPage('snap@example.com');
  const id = await createBoard(page, 'Snapshot board');
  await addNote(page, 'Stays', 'same');
  await addNote(page, 'Will change', 'before');
  await addNote(page, 'Will go', 'bye');
  await synced(page);

  await menuItem(page, 'Snapshots');
  let panel = page.getByRole('dialog', { name: 'Snapshots' });
  await panel.getByRole('button', { name: 'Take a snapshot' }).click();
  await panel.getByRole('button', { name: /^Restore the board of/ }).waitFor();
  const [key] = (await (await page.request.get(`${server.url}/api/boards/${id}/snapshot?list=true`)).json()).snapshots.map((s) => s.key);
  const snap = await (await page.request.post(`${server.url}/api/boards/${id}/log/restore`, { data: { logKey: key, type: 'board' } })).json();
  await panel.getByRole('button', { name: 'Close' }).click();

  // Change the board: edit one note, delete one, add one.
  await openFull(page, page.locator('.note', { hasText: 'Will change' }), { position: { x: 8, y: 8 } });
  const editor = page.getByRole('dialog', { name: 'Edit note' });
  await editor.getByLabel('Content (Markdown)').fill('after');
  await editor.getByRole('button', { name: 'Save' }).click();
  await page.locator('.note', { hasText: 'Will go' }).click({ position: { x: 200, y: 140 } }); // its corner out of the stack
  await page.keyboard.press('Delete');
  await page.locator('.note', { hasText: 'Will go' }).waitFor({ state: 'detached' });
  await addNote(page, 'New one');
  await synced(page);

  await menuItem(page, 'Snapshots');
  panel = page.getByRole('dialog', { name: 'Snapshots' });
  await panel.getByRole('button', { name: /^View the board of/ }).click();
  await panel.locator('.past-notes h4', { hasText: 'Will go' }).waitFor();
  assert.deepEqual(await seriousViolations(page), [], 'snapshots panel');
  await panel.getByRole('button', { name: /^Restore the board of/ }).click();
  assert.equal(await panel.getByTestId('restore-summary').textContent(), 'This will add 1 note, change 1 note, remove 1 note.');
  await panel.getByRole('alertdialog').getByRole('button', { name: 'Restore' }).and(page.locator(':focus')).waitFor();
  await panel.getByRole('alertdialog').getByRole('button', { name: 'Restore' }).click();
  await panel.getByRole('button', { name: 'Close' }).click();
  await page.locator('.note', { hasText: 'Will go' }).waitFor();
  await page.locator('.note', { hasText: 'New one' }).waitFor({ state: 'detached' });
  await synced(page);

  const pulled = (await (await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`)).json()).notes;
  const strip = (n) => ({ id: n.id, title: n.title, content: n.content, x: n.x, y: n.y, color: n.color, type: n.type });
  const byId = (a, b) => (a.id < b.id ? -1 : 1);
  assert.deepEqual(pulled.map(strip).sort(byId), snap.notes.map(strip).sort(byId), 'the board equals the snapshot');
  await ctx.close();
});

test('an update still waiting when the page closes reaches the server in a beacon', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.clock.install();
  await login(page, server, 'beacon@example.com');
  const id = await createBoard(page, 'Beacon board');
  await addNote(page, 'Unsaved thought');
  await synced(page);
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
  await openFull(page, page.locator('.note', { hasText: 'Unsaved thought' }));
  const editor = page.getByRole('dialog', { name: 'Edit note' });
  await editor.getByLabel('Content (Markdown)').fill('written just before leaving');
  await editor.getByRole('button', { name: 'Save' }).click();
  await serverHas(page, id, 'written just before leaving'); // not synced(): see the test above
  await page.clock.runFor(5000); // the update waits 10 s more
  await page.goto(server.url + '/'); // pagehide: the wait ends, the beacon goes
  await page.getByRole('heading', { name: 'Your boards' }).waitFor();
  await page.clock.resume(); // waitForFunction polls on the page's timers
  // The beacon's answer is not for the page to see: ask the server until it has the entry.
  await page.waitForFunction(
    async (url) => (await (await fetch(url)).json()).entries.length === 1,
    `${server.url}/api/boards/${id}/log?action=update_note`,
    { polling: 100 },
  );
  await ctx.close();
});
