// Page helpers for the e2e tests: they go through the UI the way a user does.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DOCS_SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/** shot saves the page as docs/screenshots/<name>.png when SCREENSHOTS=1 (make screenshots). */
export async function shot(page, name) {
  if (!process.env.SCREENSHOTS) return;
  mkdirSync(DOCS_SHOTS, { recursive: true });
  await page.screenshot({ path: DOCS_SHOTS + name + '.png' });
}

/** login logs email in through the two-step form, reading the code from the outbox. */
export async function login(page, server, email) {
  await page.goto(server.url + '/');
  await page.getByLabel('E-mail address').fill(email);
  const before = server.outboxCount();
  await page.getByRole('button', { name: 'Send me a code' }).click();
  const code = await server.code(email, before);
  const field = page.getByLabel('6-digit code');
  assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
  assert.equal(await field.getAttribute('inputmode'), 'numeric');
  await field.fill(code);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Your boards' }).waitFor();
}

/** createBoard creates a named board from the list and waits for the canvas. */
export async function createBoard(page, name) {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByRole('button', { name: 'Create board' }).click();
  await page.waitForURL(/\/b\//);
  await page.getByRole('heading', { name }).waitFor();
  await page.locator('[data-connection="online"]').waitFor();
  return new URL(page.url()).pathname.split('/').pop();
}

/** addNote creates a note with the button and saves it, edited in place, with a title. */
export async function addNote(page, title, content = '') {
  await page.getByRole('button', { name: '+ Note' }).click();
  const form = inPlace(page);
  await form.getByLabel('Title').fill(title);
  if (content) await form.getByLabel('Content (Markdown)').fill(content);
  await form.getByRole('button', { name: 'Save' }).click();
  await page.locator('.note', { hasText: title }).waitFor();
}

/** inPlace is the note editor open in place on the canvas. */
export function inPlace(page) {
  return page.getByRole('form', { name: 'Edit note in place' });
}

/** openFull double-clicks a note (editing it in place), then opens the full editor from there; returns its dialog. */
export async function openFull(page, note, options) {
  await note.dblclick(options);
  await inPlace(page).getByRole('button', { name: 'Full editor' }).click();
  const editor = page.getByRole('dialog', { name: 'Edit note' });
  await editor.waitFor();
  return editor;
}

/** synced waits until no edit waits to be sent. */
export async function synced(page) {
  await page.locator('[data-pending="0"]').waitFor();
}

/** invite shares the open board with email through the Share dialog, then closes the dialog. */
export async function invite(page, email) {
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const share = page.getByRole('dialog', { name: 'Share this board' });
  await share.getByLabel('E-mail address to invite').fill(email);
  await share.getByRole('button', { name: 'Invite' }).click();
  await share.getByText(`${email} is invited`).waitFor();
  await share.getByRole('button', { name: 'Close' }).click();
}

/** menuItem opens the board menu ("⋯") and clicks the item named name (role menuitem, or menuitemradio for a theme). */
export async function menuItem(page, name, role = 'menuitem') {
  await page.getByRole('button', { name: 'Board menu' }).click();
  await page.getByRole(role, { name, exact: true }).click();
}

/** logOut clicks Log out: in the top bar, or in the board menu on a phone, where the bar has no room for it. */
export async function logOut(page) {
  const button = page.getByRole('button', { name: 'Log out' });
  if (await button.isVisible()) return button.click();
  await menuItem(page, 'Log out');
}

/**
 * useTool presses the board tool named name: its button in the rail or the
 * phone's bottom bar, or, when the bar has no room for it, the item of the
 * bar's More menu. Touch taps; otherwise a click.
 */
export async function useTool(page, name, { touch = false, role = 'menuitem' } = {}) {
  const bar = page.getByRole('toolbar', { name: 'Board tools' });
  const press = (l) => (touch ? l.tap() : l.click());
  const button = bar.getByRole('button', { name, exact: true });
  if (await button.count()) return press(button);
  await press(bar.getByRole('button', { name: 'More tools' }));
  await press(bar.getByRole(role, { name, exact: true }));
}

/** DESKTOP and PHONE are the two screens the canvas tests run at (PHONE with touch). */
export const DESKTOP = { name: 'desktop', viewport: { width: 1280, height: 800 } };
export const PHONE = { name: 'phone', viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true };

let screenUsers = 0;

/**
 * screenPage logs a new person (prefix-n-screen@example.com) in at a
 * screen size and, given a board name, opens a new board of theirs.
 */
export async function screenPage(browser, server, screen, prefix, board) {
  const ctx = await browser.newContext({ viewport: screen.viewport, hasTouch: !!screen.hasTouch, isMobile: !!screen.isMobile });
  const page = await ctx.newPage();
  const email = `${prefix}${++screenUsers}-${screen.name}@example.com`;
  await login(page, server, email);
  const id = board ? await createBoard(page, board) : null;
  return { ctx, page, id, email };
}

/** serverNotes reads a board's notes as the server has them. */
export async function serverNotes(page, server, id) {
  const res = await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`);
  if (res.status() !== 200) throw new Error(`GET /sync: ${res.status()}`);
  return (await res.json()).notes ?? [];
}

/** pushNotes writes notes straight to the server (setting up a board faster than the UI would). */
export async function pushNotes(page, server, id, notes) {
  const upserted = notes.map((n) => ({ title: '', content: '', x: 0, y: 0, color: 'yellow', type: 'sticky', updatedAt: new Date().toISOString(), ...n }));
  const res = await page.request.post(`${server.url}/api/boards/${id}/sync`, { data: { clientVersion: 0, notes: { upserted, deleted: [] }, trackerItems: { upserted: [], deleted: [] } } });
  if (res.status() !== 200) throw new Error(`POST /sync: ${res.status()} ${await res.text()}`);
}

/** personPage is a new context at screen's size (touch on a phone) with email logged in. */
export async function personPage(browser, server, email, screen = DESKTOP) {
  const ctx = await browser.newContext({ viewport: screen.viewport, hasTouch: !!screen.hasTouch, isMobile: !!screen.isMobile });
  const page = await ctx.newPage();
  await login(page, server, email);
  return { ctx, page, email };
}

/** openOnline opens board id in page and waits until its live channel is online. */
export async function openOnline(page, server, id) {
  await page.goto(`${server.url}/b/${id}`);
  await page.locator('[data-connection="online"]').waitFor();
}
