// End-to-end tests of issue 23's canvas behaviour (docs/web-client.md,
// "The editor layer", "Keyboard and touch"): new notes at free spots,
// resize seen by another person, editing in place, Cancel and Escape,
// search jumps, the keyboard alone, paste. Chromium, at 1280×800 and, where
// the flow is the same on a phone, at 390×844 with touch. Every wait is a
// condition; what the board holds is read from the server (GET /sync).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, synced, invite, inPlace, useTool, DESKTOP, PHONE, screenPage, serverNotes as notesOnServer, pushNotes } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** boardPage, serverNotes and push are helpers.mjs's, for this file's server and browser. */
const boardPage = (screen, board) => screenPage(browser, server, screen, 'ed', board);
const serverNotes = (page, id) => notesOnServer(page, server, id);
const push = (page, id, notes) => pushNotes(page, server, id, notes);

const box = (n) => ({ x: n.x, y: n.y, w: n.w ?? 220, h: n.h ?? 160 });
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** inView says whether an element lies wholly inside the window. */
async function inView(page, locator) {
  const b = await locator.boundingBox();
  const v = page.viewportSize();
  return !!b && b.x >= 0 && b.y >= 0 && b.x + b.width <= v.width && b.y + b.height <= v.height;
}

for (const screen of [DESKTOP, PHONE]) {
  test(`${screen.name}: ten new notes, none on top of another`, { skip }, async () => {
    const { ctx, page, id } = await boardPage(screen, 'Ten notes');
    for (let i = 1; i <= 10; i++) {
      if (screen.hasTouch) await page.getByRole('button', { name: '+ Note' }).tap();
      else await page.keyboard.press('n');
      const form = inPlace(page);
      await form.getByLabel('Title').waitFor();
      await page.keyboard.type(`Note ${i}`);
      await page.keyboard.press('Enter');
      await form.waitFor({ state: 'detached' });
      await page.locator('.note', { hasText: `Note ${i}` }).first().waitFor();
    }
    await synced(page);
    const notes = await serverNotes(page, id);
    assert.equal(notes.length, 10);
    for (let i = 0; i < notes.length; i++)
      for (let j = i + 1; j < notes.length; j++) assert.ok(!overlap(box(notes[i]), box(notes[j])), `${notes[i].title} and ${notes[j].title} overlap`);
    // On screen too: no two notes' boxes cross.
    const rects = await page.locator('.note').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()));
    for (let i = 0; i < rects.length; i++)
      for (let j = i + 1; j < rects.length; j++) {
        const [a, b] = [rects[i], rects[j]];
        assert.ok(!(a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1), `notes ${i} and ${j} overlap on screen`);
      }
    await ctx.close();
  });

  test(`${screen.name}: edit in place, then Cancel after a new note and Escape with typed text`, { skip }, async () => {
    const { ctx, page, id } = await boardPage(screen, 'In place');
    await addNote(page, 'First');
    await synced(page);
    const note = page.locator('.note', { hasText: 'First' });

    // Double-click (double-tap on a phone) edits title and content on the canvas.
    if (screen.hasTouch) {
      await note.tap(); // a real tap selects the note
      // The double tap: two touch pointer-ups dispatched together, so that
      // how long the test machine takes between two taps cannot matter.
      await note.evaluate((el) => {
        for (let i = 0; i < 2; i++) el.dispatchEvent(new PointerEvent('pointerup', { pointerType: 'touch', isPrimary: true, bubbles: true }));
      });
    } else await note.dblclick();
    const form = inPlace(page);
    await form.getByLabel('Title').fill('First, renamed');
    await form.getByLabel('Content (Markdown)').fill('Some **bold** text');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await page.locator('.note strong', { hasText: 'bold' }).waitFor();
    await synced(page);
    assert.deepEqual((await serverNotes(page, id)).map((n) => [n.title, n.content]), [['First, renamed', 'Some **bold** text']]);

    // "+ Note" while a note is edited in place saves that one and starts the new one, which keeps the focus.
    await note.dblclick();
    await form.getByLabel('Content (Markdown)').fill('Some **bold** text, more');
    await page.getByRole('button', { name: '+ Note' }).click();
    await page.locator('.note strong', { hasText: 'bold' }).waitFor();
    await form.getByLabel('Title').waitFor();
    await page.waitForFunction(() => document.activeElement?.matches('form.inplace input'));
    await page.keyboard.type('Second');
    await page.keyboard.press('Enter');
    await page.locator('.note', { hasText: 'Second' }).waitFor();
    await synced(page);
    assert.deepEqual((await serverNotes(page, id)).map((n) => [n.title, n.content]).sort(), [['First, renamed', 'Some **bold** text, more'], ['Second', '']]);
    await useTool(page, 'Delete');
    await page.locator('.note', { hasText: 'Second' }).waitFor({ state: 'detached' });

    // A new note cancelled leaves nothing behind, on screen or on the server.
    await page.getByRole('button', { name: '+ Note' }).click();
    await form.waitFor();
    assert.equal(await page.locator('.note').count(), 2);
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    assert.equal(await page.locator('.note').count(), 1);
    await synced(page);
    assert.equal((await serverNotes(page, id)).length, 1);

    // Escape with typed text asks; "Keep editing" keeps it, "Discard" drops the new note.
    await page.getByRole('button', { name: '+ Note' }).click();
    await form.getByLabel('Title').fill('Half a thought');
    await page.keyboard.press('Escape');
    const ask = page.getByRole('dialog', { name: 'Discard your changes?' });
    await ask.getByRole('button', { name: 'Keep editing' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.equal(await form.getByLabel('Title').inputValue(), 'Half a thought');
    await page.keyboard.press('Escape');
    await ask.getByRole('button', { name: 'Discard' }).click();
    await form.waitFor({ state: 'detached' });
    await synced(page);
    assert.deepEqual((await serverNotes(page, id)).map((n) => n.title), ['First, renamed']);

    // The full editor (with the preview) is one click away on the selected note.
    await note.click();
    await note.getByRole('button', { name: 'Open in the full editor' }).click();
    const full = page.getByRole('dialog', { name: 'Edit note' });
    await full.getByRole('heading', { name: 'Preview' }).waitFor();
    await full.getByRole('button', { name: 'Cancel' }).click();
    await full.waitFor({ state: 'detached' });
    await ctx.close();
  });
}

test('resize: A drags a note\'s corner, B sees the new size (the server keeps w and h)', { skip }, async () => {
  const A = await boardPage(DESKTOP, 'Resized');
  await addNote(A.page, 'Grow me');
  await synced(A.page);
  const b = await boardPage(DESKTOP);
  server.setPlan(b.email, 'pro');
  await invite(A.page, b.email);
  await b.page.goto(`${server.url}/b/${A.id}`);
  const noteB = b.page.locator('.note', { hasText: 'Grow me' });
  await noteB.waitFor();

  const note = A.page.locator('.note', { hasText: 'Grow me' });
  await note.click();
  const handle = note.locator('.note-resize');
  const h = await handle.boundingBox();
  const zoom = (await note.boundingBox()).width / 220;
  await A.page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
  await A.page.mouse.down();
  await A.page.mouse.move(h.x + h.width / 2 + 80 * zoom, h.y + h.height / 2 + 40 * zoom, { steps: 5 });
  await A.page.mouse.up();
  await synced(A.page);
  const [row] = await serverNotes(A.page, A.id);
  assert.ok(Math.abs(row.w - 300) <= 2 && Math.abs(row.h - 200) <= 2, `server size ${row.w}×${row.h}`);
  // B's note is drawn at the new size.
  await b.page.waitForFunction(
    ([w, h]) => {
      const el = document.querySelector('.note');
      return el && el.style.width === `${w}px` && el.style.height === `${h}px`;
    },
    [row.w, row.h],
  );

  // Keyboard: Shift+arrows resize by 10 px; Ctrl+Z takes it back.
  await A.page.keyboard.press('Shift+ArrowRight');
  await A.page.waitForFunction((w) => document.querySelector('.note')?.style.width === `${w}px`, row.w + 10);
  await A.page.keyboard.press('Control+z');
  await A.page.waitForFunction((w) => document.querySelector('.note')?.style.width === `${w}px`, row.w);
  await A.ctx.close();
  await b.ctx.close();
});

for (const screen of [DESKTOP, PHONE]) {
  test(`${screen.name}: search jumps to a note far away, selects and lights it`, { skip }, async () => {
    const { ctx, page, id } = await boardPage(screen, 'Searchable');
    await push(page, id, [
      { id: 'near', title: 'Groceries', content: 'milk', x: 0, y: 0 },
      { id: 'far', title: 'Quarterly plan', content: 'hire a designer', x: 6000, y: 4000 },
    ]);
    await page.locator('.note', { hasText: 'Groceries' }).waitFor();
    if (screen.hasTouch) await page.getByRole('button', { name: 'Search', exact: true }).tap();
    else await page.keyboard.press('Control+f');
    const panel = page.getByRole('dialog', { name: 'Search' });
    await panel.getByLabel('Search notes and work items').fill('designer');
    await panel.getByRole('option', { name: /Quarterly plan/ }).waitFor();
    await page.keyboard.press('Enter');
    await panel.waitFor({ state: 'detached' });
    const far = page.locator('.note.selected.highlight', { hasText: 'Quarterly plan' });
    await far.waitFor();
    assert.ok(await inView(page, far), 'the note is in view');
    // The light goes out by itself.
    await page.locator('.note.highlight').waitFor({ state: 'detached' });
    await ctx.close();
  });
}

test('keyboard only: arrows go from note to note, Enter edits in place, Alt+arrows move, ? lists the keys', { skip }, async () => {
  const { ctx, page, id } = await boardPage(DESKTOP, 'Keys');
  await push(page, id, [
    { id: 'a', title: 'Left one', x: 0, y: 0 },
    { id: 'b', title: 'Right one', x: 400, y: 0 },
  ]);
  await page.locator('.note', { hasText: 'Right one' }).waitFor();
  // One tab stop for the canvas: Tab reaches one note, and the next Tab leaves the notes.
  let tabs = 0;
  while (!(await page.evaluate(() => document.activeElement?.classList.contains('note'))) && tabs++ < 60) await page.keyboard.press('Tab');
  assert.ok(tabs < 60, 'Tab reaches a note');
  assert.equal(await page.locator('.note[tabindex="0"]').count(), 1);
  const first = await page.evaluate(() => document.activeElement.getAttribute('data-note-id'));
  // Arrows move the focus to the other note.
  await page.keyboard.press(first === 'a' ? 'ArrowRight' : 'ArrowLeft');
  const other = first === 'a' ? 'b' : 'a';
  await page.waitForFunction((o) => document.activeElement?.getAttribute('data-note-id') === o, other);
  await page.locator(`.note.selected[data-note-id="${other}"]`).waitFor();
  // Enter edits in place; Ctrl+Enter saves.
  await page.keyboard.press('Enter');
  const form = inPlace(page);
  await form.getByLabel('Title').waitFor();
  await page.keyboard.press('Tab');
  await page.keyboard.type('typed by keyboard');
  await page.keyboard.press('Control+Enter');
  await form.waitFor({ state: 'detached' });
  // The focus is back on the note: Alt+Shift+arrow moves it 50 px.
  await page.waitForFunction((o) => document.activeElement?.getAttribute('data-note-id') === o, other);
  await page.keyboard.press('Alt+Shift+ArrowDown');
  await synced(page);
  const row = (await serverNotes(page, id)).find((n) => n.id === other);
  assert.equal(row.content, 'typed by keyboard');
  assert.equal(row.y, 50);
  // ? lists every binding, from the keymap.
  await page.keyboard.press('?');
  const keys = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await keys.getByRole('row', { name: /Move the selected notes/ }).waitFor();
  await keys.getByRole('row', { name: /Search notes and work items/ }).waitFor();
  await page.keyboard.press('Escape');
  await keys.waitFor({ state: 'detached' });
  await ctx.close();
});

test('paste of Markdown onto the canvas makes a note per paragraph and list item', { skip }, async () => {
  const { ctx, page, id } = await boardPage(DESKTOP, 'Pasted');
  await page.locator('.react-flow__pane').click();
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.setData('text/plain', '# Launch\n\nShip on Monday.\n\n- write the post\n- tell the team');
    document.activeElement.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  await page.locator('.note', { hasText: 'tell the team' }).waitFor();
  await synced(page);
  const notes = await serverNotes(page, id);
  assert.deepEqual(notes.map((n) => [n.title, n.content]).sort(), [
    ['Launch', 'Ship on Monday.'],
    ['tell the team', ''],
    ['write the post', ''],
  ]);
  for (let i = 0; i < notes.length; i++) for (let j = i + 1; j < notes.length; j++) assert.ok(!overlap(box(notes[i]), box(notes[j])));
  // One undo step takes the paste back.
  await page.keyboard.press('Control+z');
  await page.locator('.note').first().waitFor({ state: 'detached' });
  await ctx.close();
});
