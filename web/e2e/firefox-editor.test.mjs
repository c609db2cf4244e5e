// Issue 23's board-screen flows in Firefox (Debian's firefox-esr over
// WebDriver BiDi) that firefox.test.mjs does not cover: a resize the other
// person sees, search, the keyboard alone, dark mode with axe's contrast
// check, the invitation e-mail and a plan change reaching an open board.
// The Chromium versions (editor, layout and share tests) run them at both
// screen sizes; Firefox over BiDi has no touch emulation, so it runs them
// with a mouse at 1280×800 (its coarse-pointer CSS is checked through its
// pointer prefs in firefox.test.mjs). Every wait is a condition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skipFirefox as skip, withServerAndFirefox } from './harness.mjs';
import { POLL, fill, press, see, userPage as ffUserPage, createBoard, addNote, synced, api, contrastViolations } from './firefox-helpers.mjs';

let server, browser;
withServerAndFirefox((s, b) => {
  server = s;
  browser = b;
});

const userPage = (email) => ffUserPage(browser, server, email);

/** notesOf reads a board's notes as the server has them. */
async function notesOf(page, id) {
  const res = await api(page, 'GET', `/api/boards/${id}/sync?since=0`);
  assert.equal(res.status, 200);
  return res.body.notes ?? [];
}

/** push writes notes straight to the server (a board set up faster than by hand). */
async function push(page, id, notes) {
  const upserted = notes.map((n) => ({ title: '', content: '', x: 0, y: 0, color: 'yellow', type: 'sticky', updatedAt: new Date().toISOString(), ...n }));
  const res = await api(page, 'POST', `/api/boards/${id}/sync`, { clientVersion: 0, notes: { upserted, deleted: [] }, trackerItems: { upserted: [], deleted: [] } });
  assert.equal(res.status, 200);
}

/** menuItem opens the board menu and clicks the item (or theme choice) named name. */
async function menuItem(page, name) {
  await press(page, 'Board menu');
  const item = await page.waitForFunction(
    (n) => [...document.querySelectorAll('[role="menuitem"], [role="menuitemradio"]')].find((e) => e.textContent.trim() === n),
    POLL,
    name,
  );
  await item.asElement().click();
}

const focusedNote = (page) => page.evaluate(() => document.activeElement?.getAttribute('data-note-id') ?? null);

test('Firefox: A drags a note\'s corner, B sees the new size; Shift+arrow resizes and Ctrl+Z takes it back', { skip }, async () => {
  const A = await userPage('fox-resize-a@example.com');
  const id = await createBoard(A.page, 'Fox resize');
  await addNote(A.page, 'Grow me');
  await synced(A.page);
  server.setPlan('fox-resize-b@example.com', 'pro');
  assert.equal((await api(A.page, 'POST', `/api/boards/${id}/invite`, { email: 'fox-resize-b@example.com' })).status, 200);
  const B = await userPage('fox-resize-b@example.com');
  await B.page.goto(`${server.url}/b/${id}`);
  await see(B.page, 'Grow me', '.note');

  const note = await A.page.waitForSelector('.note[data-note-id]');
  const nb = await note.boundingBox();
  await A.page.mouse.click(nb.x + nb.width / 2, nb.y + 12);
  const handle = await A.page.waitForSelector('.note.selected .note-resize');
  const h = await handle.boundingBox();
  const zoom = nb.width / 220;
  await A.page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
  await A.page.mouse.down();
  for (let i = 1; i <= 5; i++) await A.page.mouse.move(h.x + h.width / 2 + (80 * zoom * i) / 5, h.y + h.height / 2 + (40 * zoom * i) / 5);
  await A.page.mouse.up();
  await synced(A.page);
  const [row] = await notesOf(A.page, id);
  assert.ok(Math.abs(row.w - 300) <= 2 && Math.abs(row.h - 200) <= 2, `server size ${row.w}×${row.h}`);
  await B.page.waitForFunction(
    (w, hh) => {
      const el = document.querySelector('.note');
      return el && el.style.width === `${w}px` && el.style.height === `${hh}px`;
    },
    POLL,
    row.w,
    row.h,
  );

  await A.page.keyboard.down('Shift');
  await A.page.keyboard.press('ArrowRight');
  await A.page.keyboard.up('Shift');
  await A.page.waitForFunction((w) => document.querySelector('.note')?.style.width === `${w}px`, POLL, row.w + 10);
  await A.page.keyboard.down('Control');
  await A.page.keyboard.press('z');
  await A.page.keyboard.up('Control');
  await A.page.waitForFunction((w) => document.querySelector('.note')?.style.width === `${w}px`, POLL, row.w);
  await A.ctx.close();
  await B.ctx.close();
});

test('Firefox: Ctrl+F finds a note far away, Enter jumps to it, selects and lights it', { skip }, async () => {
  const { ctx, page } = await userPage('fox-search@example.com');
  const id = await createBoard(page, 'Fox search');
  await push(page, id, [
    { id: 'near', title: 'Groceries', content: 'milk', x: 0, y: 0 },
    { id: 'far', title: 'Quarterly plan', content: 'hire a designer', x: 6000, y: 4000 },
  ]);
  await see(page, 'Groceries', '.note');
  await page.keyboard.down('Control');
  await page.keyboard.press('f');
  await page.keyboard.up('Control');
  await fill(page, 'Search notes and work items', 'designer');
  await page.waitForFunction(() => [...document.querySelectorAll('[role="option"]')].some((o) => o.textContent.includes('Quarterly plan')), POLL);
  await page.keyboard.press('Enter');
  const far = await page.waitForSelector('.note.selected.highlight[data-note-id="far"]');
  const b = await far.boundingBox();
  assert.ok(b.x >= 0 && b.y >= 0 && b.x + b.width <= 1280 && b.y + b.height <= 800, `the note is in view: ${JSON.stringify(b)}`);
  await page.waitForSelector('.note.highlight', { hidden: true });
  await ctx.close();
});

test('Firefox, keyboard only: one tab stop, arrows between notes, Enter edits in place, Alt+Shift+arrow moves, ? lists the keys', { skip }, async () => {
  const { ctx, page } = await userPage('fox-keys@example.com');
  const id = await createBoard(page, 'Fox keys');
  await push(page, id, [
    { id: 'a', title: 'Left one', x: 0, y: 0 },
    { id: 'b', title: 'Right one', x: 400, y: 0 },
  ]);
  await see(page, 'Right one', '.note');
  let tabs = 0;
  while (!(await focusedNote(page)) && tabs++ < 60) await page.keyboard.press('Tab');
  assert.ok(tabs < 60, 'Tab reaches a note');
  assert.equal(await page.$$eval('.note[tabindex="0"]', (els) => els.length), 1);
  const first = await focusedNote(page);
  const other = first === 'a' ? 'b' : 'a';
  await page.keyboard.press(first === 'a' ? 'ArrowRight' : 'ArrowLeft');
  await page.waitForFunction((o) => document.activeElement?.getAttribute('data-note-id') === o, POLL, other);
  await page.waitForSelector(`.note.selected[data-note-id="${other}"]`);

  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.matches('form.inplace input'), POLL);
  await page.keyboard.press('Tab');
  await page.keyboard.type('typed by keyboard');
  await page.keyboard.down('Control');
  await page.keyboard.press('Enter');
  await page.keyboard.up('Control');
  await page.waitForSelector('form.inplace', { hidden: true });
  await page.waitForFunction((o) => document.activeElement?.getAttribute('data-note-id') === o, POLL, other);
  await page.keyboard.down('Alt');
  await page.keyboard.down('Shift');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.up('Shift');
  await page.keyboard.up('Alt');
  await synced(page);
  await page.waitForFunction(
    async (boardId, o) => {
      const body = await (await fetch(`/api/boards/${boardId}/sync?since=0`)).json();
      const n = body.notes.find((x) => x.id === o);
      return n.content === 'typed by keyboard' && n.y === 50;
    },
    POLL,
    id,
    other,
  );

  await page.keyboard.type('?');
  await page.waitForFunction(() => [...document.querySelectorAll('dialog[open] tr')].some((r) => r.textContent.includes('Move the selected notes')), POLL);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => ![...document.querySelectorAll('dialog[open]')].some((d) => d.textContent.includes('Keyboard shortcuts')), POLL);
  await ctx.close();
});

test('Firefox: the dark theme from the board menu renders dark and passes axe\'s colour contrast, as the light one does', { skip }, async () => {
  const { ctx, page } = await userPage('fox-dark@example.com');
  const id = await createBoard(page, 'Fox dark');
  const colours = ['yellow', 'blue', 'green', 'pink', 'purple', 'orange', 'gray'];
  await push(page, id, colours.map((c, i) => ({ id: `c-${c}`, title: `A ${c} note`, content: `Some **Markdown** on ${c}.`, color: c, x: (i % 4) * 260, y: Math.floor(i / 4) * 200 })));
  await see(page, 'A gray note', '.note');
  const bg = () => page.evaluate(() => getComputedStyle(document.querySelector('header.topbar')).backgroundColor);
  await menuItem(page, 'Light theme');
  assert.equal(await bg(), 'rgb(255, 255, 255)');
  assert.deepEqual(await contrastViolations(page), [], 'light');
  await menuItem(page, 'Dark theme');
  await page.waitForFunction(() => document.documentElement.dataset.scheme === 'dark', POLL);
  assert.equal(await bg(), 'rgb(22, 27, 34)');
  assert.deepEqual(await contrastViolations(page), [], 'dark');
  // The choice is kept over a reload.
  await page.reload();
  await see(page, 'A gray note', '.note');
  assert.equal(await bg(), 'rgb(22, 27, 34)');
  await ctx.close();
});

test('Firefox: inviting someone mails them the link; the dialog says they will view only, and why', { skip }, async () => {
  const ada = await userPage('fox-ada-share@example.com');
  const id = await createBoard(ada.page, 'Fox launch');
  await press(ada.page, 'Share');
  await fill(ada.page, 'E-mail address to invite', 'fox-gus-share@example.com');
  await press(ada.page, 'Invite');
  const why = 'View only: on the free plan, invitees view boards. They can edit once their plan is pro or team.';
  await see(ada.page, `fox-gus-share@example.com is invited and gets an e-mail with the link. ${why}`, 'dialog[open]');
  const body = await server.invitation('fox-gus-share@example.com');
  assert.match(body, /fox-ada-share@example\.com invited you to the board "Fox launch"/);
  assert.equal(body.match(/https?:\/\/\S+\/b\/\S+/)?.[0], `${server.url}/b/${id}`);
  await ada.ctx.close();
});

test('Firefox: an upgrade turns a viewer\'s open board editable without a reload', { skip }, async () => {
  const ada = await userPage('fox-ada-plan@example.com');
  const id = await createBoard(ada.page, 'Fox plan change');
  assert.equal((await api(ada.page, 'POST', `/api/boards/${id}/invite`, { email: 'fox-hal-plan@example.com' })).status, 200);
  const hal = await userPage('fox-hal-plan@example.com');
  await hal.page.goto(`${server.url}/b/${id}`);
  await hal.page.waitForSelector('[data-connection="online"]');
  await see(hal.page, 'View only');
  const plusNote = () => hal.page.evaluate(() => [...document.querySelectorAll('button')].some((b) => b.textContent.trim() === '+ Note'));
  assert.equal(await plusNote(), false);
  await hal.page.evaluate(() => (window.__sameDocument = true));

  server.setPlan('fox-hal-plan@example.com', 'pro');
  await hal.page.waitForFunction(() => [...document.querySelectorAll('button')].some((b) => b.textContent.trim() === '+ Note'), POLL);
  await addNote(hal.page, 'Edited after the upgrade');
  await synced(hal.page);
  await see(ada.page, 'Edited after the upgrade', '.note');
  assert.equal(await hal.page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
  await hal.ctx.close();
  await ada.ctx.close();
});
