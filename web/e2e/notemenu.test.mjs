// End-to-end tests of the note menu and Expand (docs/web-client.md,
// "Keyboard and touch"): the menu opens by right-click, by a long press on
// a phone and by Shift+F10; its Colour reaches another person, Duplicate
// puts the copy at a free spot, Delete is undone; Expand grows a long note
// and the other person sees the new size. Chromium at 1280×800 and at
// 390×844 with touch. Every wait is a condition; the long press is a
// finger put down, held until the menu shows, then lifted, so the
// machine's speed cannot matter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, synced, invite, shot, DESKTOP, PHONE, screenPage, serverNotes as notesOnServer, pushNotes } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** boardPage, serverNotes and push are helpers.mjs's, for this file's server and browser. */
const boardPage = (screen, board) => screenPage(browser, server, screen, 'menu', board);
const serverNotes = (page, id) => notesOnServer(page, server, id);
const push = (page, id, notes) => pushNotes(page, server, id, notes);

/** withWatcher gives A's board to a second person (pro, so they may edit) and opens it for them. */
async function withWatcher(A) {
  const B = await boardPage(DESKTOP);
  server.setPlan(B.email, 'pro');
  await invite(A.page, B.email);
  await B.page.goto(`${server.url}/b/${A.id}`);
  await B.page.locator('[data-connection="online"]').waitFor();
  return B;
}

const box = (n) => ({ x: n.x, y: n.y, w: n.w ?? 220, h: n.h ?? 160 });
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** noteMenu is the open note menu. */
const noteMenu = (page) => page.getByRole('menu', { name: /^Note menu/ });

/**
 * openMenu opens a note's menu as a person would on the screen: a
 * right-click, or on a touch screen a long press (a touch pointer down,
 * held until the menu shows, then lifted).
 */
async function openMenu(page, screen, note) {
  if (screen.hasTouch) {
    // A real finger through the DevTools protocol (Playwright has only tap()): down, held until the
    // menu shows, then up.
    const b = await note.boundingBox();
    const at = { x: Math.round(b.x + b.width / 2), y: Math.round(b.y + Math.min(b.height / 2, 30)) };
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [at] });
    await noteMenu(page).waitFor();
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    await cdp.detach();
  } else await note.click({ button: 'right' });
  const menu = noteMenu(page);
  await menu.waitFor();
  // Whole on the screen, wherever it opened.
  await page.waitForFunction(() => {
    const m = document.querySelector('.note-menu');
    const r = m?.getBoundingClientRect();
    return r && m.style.visibility !== 'hidden' && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight;
  });
  return menu;
}

const press = (screen, locator) => (screen.hasTouch ? locator.tap() : locator.click());

for (const screen of [DESKTOP, PHONE]) {
  test(`${screen.name}: the note menu: colour seen by another person, duplicate at a free spot, delete undone, Shift+F10`, { skip }, async () => {
    const A = await boardPage(screen, 'Menu');
    // Beta sits right under Alpha, where a copy of it could go: the copy must find another spot.
    // Both in the middle of the board, so that they are in view on a phone too.
    await push(A.page, A.id, [
      { id: 'alpha', title: 'Alpha', content: 'first', x: -110, y: -172 },
      { id: 'beta', title: 'Beta', x: -110, y: 12 },
    ]);
    const alpha = A.page.locator('[data-note-id="alpha"]');
    const beta = A.page.locator('[data-note-id="beta"]');
    await alpha.waitFor();
    await beta.waitFor();
    const B = await withWatcher(A);
    await B.page.locator('[data-note-id="alpha"]').waitFor();

    // Colour: Alpha turns green, for B too.
    let menu = await openMenu(A.page, screen, alpha);
    if (screen.name === 'phone') await shot(A.page, 'note-menu-phone');
    assert.deepEqual(await menu.getByRole('menuitem').allInnerTexts(), ['Edit in place', 'Open in the full editor', 'Duplicate', 'History', 'Delete', 'Lock']); // Lock: the owner's (locks.test.mjs)
    assert.equal(await menu.getByRole('menuitemradio', { name: 'yellow' }).getAttribute('aria-checked'), 'true');
    await press(screen, menu.getByRole('menuitemradio', { name: 'green' }));
    await menu.waitFor({ state: 'detached' });
    await B.page.waitForFunction(() => getComputedStyle(document.querySelector('[data-note-id="alpha"]')).backgroundColor === 'rgb(205, 240, 197)');
    await synced(A.page);
    assert.equal((await serverNotes(A.page, A.id)).find((n) => n.id === 'alpha').color, 'green');

    // The keyboard: Shift+F10 on the focused note; arrows move; Escape closes and gives the focus back.
    await A.page.waitForFunction(() => document.activeElement?.getAttribute('data-note-id') === 'alpha');
    await A.page.keyboard.press('Shift+F10');
    await menu.waitFor();
    await A.page.waitForFunction(() => document.activeElement?.textContent === 'Edit in place');
    await A.page.keyboard.press('ArrowDown');
    await A.page.waitForFunction(() => document.activeElement?.textContent === 'Open in the full editor');
    await A.page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    await A.page.waitForFunction(() => document.activeElement?.getAttribute('data-note-id') === 'alpha');

    // Duplicate: a green copy of Alpha, on top of nothing.
    menu = await openMenu(A.page, screen, alpha);
    await press(screen, menu.getByRole('menuitem', { name: 'Duplicate' }));
    await A.page.locator('.note', { hasText: 'Alpha' }).nth(1).waitFor();
    await synced(A.page);
    let notes = await serverNotes(A.page, A.id);
    assert.equal(notes.length, 3);
    const copy = notes.find((n) => n.id !== 'alpha' && n.title === 'Alpha');
    assert.ok(copy, 'a copy of Alpha on the server');
    assert.equal(copy.color, 'green');
    assert.equal(copy.content, 'first');
    for (let i = 0; i < notes.length; i++)
      for (let j = i + 1; j < notes.length; j++) assert.ok(!overlap(box(notes[i]), box(notes[j])), `${notes[i].title} and ${notes[j].title} overlap`);
    await B.page.locator('.note', { hasText: 'Alpha' }).nth(1).waitFor();

    // Delete, then undo: Beta comes back.
    menu = await openMenu(A.page, screen, beta);
    await press(screen, menu.getByRole('menuitem', { name: 'Delete' }));
    await beta.waitFor({ state: 'detached' });
    await synced(A.page);
    assert.ok(!(await serverNotes(A.page, A.id)).some((n) => n.id === 'beta'));
    await press(screen, A.page.getByRole('toolbar', { name: 'Board tools' }).getByRole('button', { name: 'Undo' }));
    await beta.waitFor();
    await synced(A.page);
    notes = await serverNotes(A.page, A.id);
    assert.deepEqual(notes.map((n) => n.title).sort(), ['Alpha', 'Alpha', 'Beta']);

    // Edit in place from the menu.
    menu = await openMenu(A.page, screen, beta);
    await press(screen, menu.getByRole('menuitem', { name: 'Edit in place' }));
    await A.page.getByRole('form', { name: 'Edit note in place' }).getByLabel('Title').waitFor();
    await A.ctx.close();
    await B.ctx.close();
  });
}

test('Expand grows a long note to fit its content, undoably, and the other person sees the new size', { skip }, async () => {
  const A = await boardPage(DESKTOP, 'Expand');
  const long = Array.from({ length: 30 }, (_, i) => `Line ${i + 1} of a long note.`).join('\n\n');
  await push(A.page, A.id, [{ id: 'long', title: 'Long', content: long, x: 0, y: 0 }]);
  const note = A.page.locator('[data-note-id="long"]');
  await note.waitFor();
  const B = await withWatcher(A);
  await B.page.locator('[data-note-id="long"]').waitFor();

  // Expand shows on the note pointed at (or selected).
  const expand = note.getByRole('button', { name: 'Expand: show all of Long' });
  await note.hover();
  await expand.click();
  await expand.waitFor({ state: 'detached' });
  await synced(A.page);
  const [row] = await serverNotes(A.page, A.id);
  assert.ok(row.h > 600 && row.h <= 4000, `expanded height ${row.h}`);
  assert.equal(row.w ?? 220, 220);
  // All of it shows now: the last line is inside the note.
  const inside = await note.evaluate((el) => {
    const last = [...el.querySelectorAll('.note-body p')].at(-1).getBoundingClientRect();
    return last.bottom <= el.getBoundingClientRect().bottom;
  });
  assert.ok(inside, 'the last line is inside the note');
  await B.page.waitForFunction((h) => document.querySelector('[data-note-id="long"]')?.style.height === `${h}px`, row.h);

  // One undo step: back to the size it had, and Expand with it.
  await A.page.keyboard.press('Control+z');
  await expand.waitFor();
  await synced(A.page);
  assert.equal((await serverNotes(A.page, A.id))[0].h ?? 160, 160);
  await A.ctx.close();
  await B.ctx.close();
});

test('the note menu and Expand pass axe (colour contrast and ARIA) in dark and light', { skip }, async () => {
  for (const colorScheme of ['dark', 'light']) {
    const ctx = await browser.newContext({ viewport: DESKTOP.viewport, colorScheme });
    const page = await ctx.newPage();
    await login(page, server, `menu-axe-${colorScheme}@example.com`);
    const id = await createBoard(page, `Axe ${colorScheme}`);
    const long = Array.from({ length: 20 }, (_, i) => `Line ${i + 1}.`).join('\n\n');
    await push(page, id, [{ id: 'n', title: 'Cut', content: long, x: -110, y: -80, color: 'pink' }]);
    const note = page.locator('[data-note-id="n"]');
    await note.waitFor();
    await openMenu(page, DESKTOP, note);
    await note.getByRole('button', { name: /^Expand/ }).waitFor();
    // Every rule, scrollable-region-focusable included: the selected long note's scrolling content is a tab stop.
    const r = await new AxeBuilder({ page }).include('.note-menu').include('[data-note-id="n"]').analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical' || v.id === 'color-contrast' || v.id === 'scrollable-region-focusable');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`), [], colorScheme);
    if (colorScheme === 'light') {
      // The keyboard scrolls it: Escape closes the menu (the focus on the note), Tab goes to ⤢ then into the content,
      // the arrows and Page Down scroll it and stay in it, Escape goes back to the note.
      await page.keyboard.press('Escape');
      await page.locator('.note-menu').waitFor({ state: 'detached' });
      // The focus comes back to the note once the menu has gone (a render later).
      await page.waitForFunction(() => document.activeElement?.getAttribute('data-note-id') === 'n');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Open in the full editor');
      await page.keyboard.press('Tab');
      const body = note.getByRole('region', { name: 'Content of Cut' });
      assert.equal(await body.evaluate((e) => e === document.activeElement), true, 'Tab from the note goes into its content');
      await page.keyboard.press('PageDown');
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction(() => document.querySelector('[data-note-id="n"] .note-body').scrollTop > 0);
      assert.equal(await body.evaluate((e) => e === document.activeElement), true, 'the keys stay in the content');
      await page.keyboard.press('Escape');
      assert.equal(await note.evaluate((e) => e === document.activeElement), true, 'Escape goes back to the note');
      await note.and(page.locator('.selected')).waitFor();
    }
    await ctx.close();
  }
});
