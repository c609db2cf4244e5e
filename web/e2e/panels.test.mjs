// End-to-end tests of the side panels and the edges of login: work items,
// phases, log out, the rate-limit message, and a narrow (200 % zoom) window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, synced, menuItem, inPlace } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

test('work items: create, edit, delete', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, 'items@example.com');
  const id = await createBoard(page, 'Tracker');
  await page.getByRole('button', { name: /Work items/ }).click();
  const panel = page.getByRole('complementary', { name: 'Work items' });
  await panel.getByRole('button', { name: '+ Item' }).click();
  const form = panel.getByRole('form', { name: /Work item CB-1/ });
  await form.getByLabel('Summary').fill('Ship the web client');
  await form.getByLabel('Type').selectOption('story');
  await form.getByLabel('Description').fill('All of issue 11');
  await form.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Ship the web client').waitFor();
  await synced(page);
  let pull = await (await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`)).json();
  assert.equal(pull.trackerItems.length, 1);
  assert.deepEqual([pull.trackerItems[0].key, pull.trackerItems[0].type, pull.trackerItems[0].summary, pull.trackerItems[0].description], ['CB-1', 'story', 'Ship the web client', 'All of issue 11']);
  await panel.getByRole('button', { name: 'Delete CB-1' }).click();
  await panel.getByText('No work items yet.').waitFor();
  await synced(page);
  pull = await (await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`)).json();
  assert.equal(pull.trackerItems.length, 0);
  await ctx.close();
});

test('phases: the owner edits them and picks the current one', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, 'phases@example.com');
  await createBoard(page, 'Phased');
  // Renaming from the board's header reaches the board list.
  await page.getByRole('button', { name: 'Rename Phased' }).click();
  await page.getByLabel('Board name').fill('Phased plan');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: 'Phased plan' }).waitFor();
  await synced(page);
  const boards = await (await page.request.get(`${server.url}/api/boards`)).json();
  assert.ok(boards.boards.some((b) => b.name === 'Phased plan'));
  await menuItem(page, 'Edit phases');
  const dialog = page.getByRole('dialog', { name: 'Edit phases' });
  await dialog.getByRole('button', { name: 'Add a phase' }).click();
  await dialog.getByRole('button', { name: 'Add a phase' }).click();
  await dialog.getByRole('textbox', { name: 'Phase 1' }).fill('Discover');
  await dialog.getByRole('textbox', { name: 'Phase 2' }).fill('Build');
  await dialog.getByRole('button', { name: 'Save phases' }).click();
  const bar = page.getByRole('navigation', { name: 'Phases' });
  await bar.getByRole('button', { name: 'Build' }).click();
  await bar.locator('[aria-current="step"]', { hasText: 'Build' }).waitFor();
  await page.reload();
  await page.getByRole('navigation', { name: 'Phases' }).locator('[aria-current="step"]', { hasText: 'Build' }).waitFor();
  await ctx.close();
});

test('log out ends the session; the rate limit says how long to wait', { skip }, async () => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await login(page, server, 'limits@example.com');
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('E-mail address').waitFor();
  await page.reload();
  await page.getByLabel('E-mail address').waitFor();
  // The login above used one of the address's 5 sends per 15 minutes.
  for (let i = 0; i < 4; i++) {
    const r = await page.request.post(server.url + '/api/auth/send-otp', { data: { email: 'limits@example.com' } });
    assert.equal(r.status(), 200);
  }
  await page.getByLabel('E-mail address').fill('limits@example.com');
  await page.getByRole('button', { name: 'Send me a code' }).click();
  await page.getByRole('alert').filter({ hasText: /Try again in \d+ (minutes|seconds)/ }).waitFor();
  await ctx.close();
});

test('at 200 % zoom (a 640 px wide window) nothing needs sideways scrolling', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 640, height: 400 } });
  const page = await ctx.newPage();
  const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  await page.goto(server.url + '/');
  await page.getByLabel('E-mail address').waitFor();
  assert.ok(await fits(), 'login');
  await login(page, server, 'zoom-with-a-rather-long-address@example.com');
  assert.ok(await fits(), 'board list');
  await createBoard(page, 'Zoomed');
  assert.ok(await fits(), 'board');
  await ctx.close();
});

test('the keyboard alone: N creates a note, Alt+arrows move it, Enter edits, Delete and Ctrl+Z', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, 'keys@example.com');
  const id = await createBoard(page, 'Keyboard board');
  const pull = async () => (await (await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`)).json()).notes;

  await page.keyboard.press('Escape');
  await page.keyboard.press('n');
  const editor = inPlace(page);
  await editor.waitFor();
  await page.keyboard.type('Typed note'); // the title field has the focus
  await page.keyboard.press('Enter'); // Enter in the title saves
  await editor.waitFor({ state: 'detached' });
  const note = page.locator('.note', { hasText: 'Typed note' });
  await note.waitFor();
  await synced(page);
  const [created] = await pull();

  // The new note is selected: Alt+arrows move it, 10 px a press (arrows alone go from note to note).
  await page.keyboard.press('Alt+ArrowRight');
  await page.keyboard.press('Alt+ArrowRight');
  await page.keyboard.press('Alt+ArrowDown');
  await synced(page);
  const [moved] = await pull();
  assert.deepEqual([moved.x - created.x, moved.y - created.y], [20, 10]);

  await page.keyboard.press('Enter');
  await editor.waitFor();
  assert.equal(await editor.getByLabel('Title').inputValue(), 'Typed note');
  await page.keyboard.press('Escape');
  await editor.waitFor({ state: 'detached' });

  await page.keyboard.press('Delete');
  await note.waitFor({ state: 'detached' });
  await page.keyboard.press('Control+z');
  await note.waitFor();

  // Tab reaches the note, and focusing it with the keyboard selects it.
  await page.keyboard.press('Escape');
  let focused = false;
  for (let i = 0; i < 60 && !focused; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement?.classList.contains('note') ?? false);
  }
  assert.ok(focused, 'Tab reaches the note');
  await page.locator('.note.selected', { hasText: 'Typed note' }).waitFor();
  await synced(page);
  assert.equal((await pull()).length, 1);
  await ctx.close();
});
