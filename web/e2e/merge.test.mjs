// End-to-end tests of issue 20, "No edit is ever lost": two people (A and
// B, two browser contexts) on one shared board edit the same note at the
// same time, through the UI, with the network held or cut; the board as
// the server ends up (GET /sync?since=0) keeps both edits, or the losing
// text is one click away from a mark on the note (docs/sync.md, "How a push
// is merged"; docs/live-protocol.md, `events`; docs/web-client.md, "The
// merge rule" and "Marks").
//
// Steps that need the board's merge UI (marks, per-person undo, the editor
// following the note, "is editing") are subtests named "UI: …", so a run
// says which part failed.
//
// Screenshots of the key moments (the two marks, the History the overlap
// mark opens) go to the folder E2E_SHOTS names; with SCREENSHOTS=1 (make
// screenshots) the overlap mark goes to docs/screenshots/merge-mark.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, invite, openFull } from './helpers.mjs';

const DOCS_SHOTS = process.env.SCREENSHOTS ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url)) : '';
/** shot saves the page to E2E_SHOTS, and to docs/screenshots/ when inDocs. */
async function shot(page, name, inDocs = false) {
  for (const dir of [process.env.E2E_SHOTS, inDocs && DOCS_SHOTS]) {
    if (!dir) continue;
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, name + '.png') });
  }
}

const OVERLAP_MARK = 'Changed by someone else at the same time — see History';
const REVIVED_MARK = 'Brought back after you deleted it — see History';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** person logs email in, in a browser context of its own (1280×800), closed after the test. */
async function person(t, email) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  t.after(() => ctx.close());
  ctx.setDefaultTimeout(15_000);
  const page = await ctx.newPage();
  await login(page, server, email);
  return { ctx, page, email };
}

/**
 * twoPeople: A (ana-<n>) creates a board with one note and shares it with
 * B (ben-<n>, on the pro plan so that B can edit); both have it open, with
 * the note shown and nothing waiting to be sent.
 */
async function twoPeople(t, n, title, content) {
  const a = await person(t, `ana-${n}@example.com`);
  const boardId = await createBoard(a.page, `Merge ${n}`);
  server.setPlan(`ben-${n}@example.com`, 'pro');
  await invite(a.page, `ben-${n}@example.com`);
  await addNote(a.page, title, content);
  const noteId = await a.page.locator('.note', { hasText: title }).getAttribute('data-note-id');
  await allSaved(a.page);
  const b = await person(t, `ben-${n}@example.com`);
  await b.page.goto(`${server.url}/b/${boardId}`);
  await b.page.locator('[data-connection="online"]').waitFor();
  await noteOf(b.page, noteId).getByText(title).waitFor();
  await allSaved(b.page);
  return { a, b, boardId, noteId };
}

/** noteOf is the note with that id on the canvas. */
function noteOf(page, noteId) {
  return page.locator(`.note[data-note-id="${noteId}"]`);
}

/** nodeOf is the canvas node holding the note: the note and what the board draws on it. */
function nodeOf(page, noteId) {
  return page.locator('.react-flow__node').filter({ has: noteOf(page, noteId) });
}

/** allSaved waits for the header to say that no edit waits to be sent. */
async function allSaved(page) {
  await page.locator('.pending[data-pending="0"]', { hasText: 'All changes saved' }).waitFor();
}

/** rowOf reads the note as the server has it (GET /sync?since=0 with the page's session); undefined when not live. */
async function rowOf(page, boardId, noteId) {
  const res = await page.request.get(`${server.url}/api/boards/${boardId}/sync?since=0`);
  assert.equal(res.status(), 200);
  return (await res.json()).notes.find((n) => n.id === noteId);
}

/** serverRow waits until the server's row satisfies ok (what says what is awaited), and returns it. */
async function serverRow(page, boardId, noteId, what, ok) {
  let row;
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    row = await rowOf(page, boardId, noteId);
    if (row && ok(row)) return row;
  }
  assert.fail(`the server's note never showed ${what}; it is ${JSON.stringify(row)}`);
}

/** openEditor opens the note's editor with a double-click. */
async function openEditor(page, noteId) {
  const editor = await openFull(page, noteOf(page, noteId));
  return editor;
}

/** typeOnLine replaces line i (from 0) of the editor's content with text, with the keyboard. */
async function typeOnLine(editor, i, text) {
  const area = editor.getByLabel('Content (Markdown)');
  await area.click();
  await area.press('Control+Home');
  for (let k = 0; k < i; k++) await area.press('ArrowDown');
  await area.press('Home');
  await area.press('Shift+End');
  await area.pressSequentially(text);
}

/** save presses the editor's Save and waits for it to close. */
async function save(editor) {
  await editor.getByRole('button', { name: 'Save' }).click();
  await editor.waitFor({ state: 'detached' });
}

/**
 * drag drags the note by (dx, dy) screen pixels with the mouse, held by its
 * head left of the middle: the middle of its top edge is the connect dot a
 * connector is drawn from (issue 24), shown when the note is pointed at.
 */
async function drag(page, noteId, dx, dy) {
  const box = await noteOf(page, noteId).boundingBox();
  const x = box.x + box.width / 4;
  const y = box.y + 12;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx / 2, y + dy / 2, { steps: 5 });
  await page.mouse.move(x + dx, y + dy, { steps: 5 });
  await page.mouse.up();
}

/** moveOnServer drags the note on page and waits for the server to have it elsewhere; returns the row. */
async function moveOnServer(page, boardId, noteId, dx, dy) {
  const before = await rowOf(page, boardId, noteId);
  await drag(page, noteId, dx, dy);
  const row = await serverRow(page, boardId, noteId, 'the move', (r) => r.x !== before.x || r.y !== before.y);
  // Where the mouse went, scaled by the zoom (near 1 for one note).
  const far = (d, want) => Math.sign(d) === Math.sign(want) && Math.abs(d) > Math.abs(want) / 2;
  assert.ok(far(row.x - before.x, dx) && far(row.y - before.y, dy), `moved from (${before.x}, ${before.y}) to (${row.x}, ${row.y}), not by about (${dx}, ${dy})`);
  return row;
}

/** shownAt waits until the page draws the note at (x, y) on the board. */
async function shownAt(page, noteId, x, y) {
  await page.waitForFunction(
    ([id, x, y]) => {
      const node = document.querySelector(`.note[data-note-id="${id}"]`)?.closest('.react-flow__node');
      const m = node?.style.transform.match(/translate\(([-\d.]+)px,\s*([-\d.]+)px\)/);
      return !!m && Number(m[1]) === x && Number(m[2]) === y;
    },
    [noteId, x, y],
  );
}

/**
 * holdNextPush holds B's next push (POST /api/boards/<id>/sync: the client
 * pushes over REST, the live socket only receives) until release() is
 * called; held resolves when the push has been sent and is held.
 */
async function holdNextPush(page) {
  let release, arrived;
  const released = new Promise((r) => (release = r));
  const held = new Promise((r) => (arrived = r));
  let holding = false;
  // The route stays until the push is released: removing it while it holds
  // the request would let the request go.
  await page.route(
    (url) => url.pathname.endsWith('/sync'),
    async (route) => {
      if (route.request().method() !== 'POST' || holding) return route.fallback();
      holding = true;
      arrived(route.request());
      await released;
      await route.continue();
    },
  );
  return { held, release };
}

/** goOffline cuts the person's network and waits for the board to say so. */
async function goOffline(p) {
  await p.ctx.setOffline(true);
  await p.page.locator('[data-connection="offline"]').waitFor();
}

/** goOnline gives the network back and waits until everything waiting was sent. */
async function goOnline(p) {
  await p.ctx.setOffline(false);
  await p.page.locator('[data-connection="online"]').waitFor();
  await allSaved(p.page);
}

const LIST = '- flour\n- eggs\n- milk\n- butter';

test('1. A drags a note while B\'s save of its text is on its way: B\'s text and A\'s position', { skip }, async (t) => {
  const { a, b, boardId, noteId } = await twoPeople(t, '1', 'Shopping', LIST);
  const base = await rowOf(a.page, boardId, noteId);

  const push = await holdNextPush(b.page);
  const editor = await openEditor(b.page, noteId);
  await typeOnLine(editor, 1, '- six eggs');
  await save(editor);
  const req = await push.held;
  assert.equal(JSON.parse(req.postData()).notes.upserted[0].baseVersion, base.version, 'B\'s push carries the version it was made on');

  // While B's push is held, A moves the note, and the server has the move.
  const moved = await moveOnServer(a.page, boardId, noteId, 180, 120);
  assert.equal(moved.content, LIST, 'B\'s text has not reached the server yet');
  // B's page gets A's move live and shows it merged with the push on its way.
  await shownAt(b.page, noteId, moved.x, moved.y);
  await noteOf(b.page, noteId).getByText('six eggs').waitFor();
  push.release();
  await allSaved(b.page);

  const row = await serverRow(a.page, boardId, noteId, 'B\'s text', (r) => r.content.includes('six eggs'));
  assert.equal(row.content, '- flour\n- six eggs\n- milk\n- butter');
  assert.deepEqual([row.x, row.y], [moved.x, moved.y], 'A\'s position is kept');
  // Both screens agree with the server.
  await noteOf(a.page, noteId).getByText('six eggs').waitFor();
  await shownAt(a.page, noteId, moved.x, moved.y);
  await shownAt(b.page, noteId, moved.x, moved.y);
});

test('2. B edits a note\'s text offline while A moves and recolours it: all three kept', { skip }, async (t) => {
  const { a, b, boardId, noteId } = await twoPeople(t, '2', 'Trip', LIST);

  await goOffline(b);
  const editor = await openEditor(b.page, noteId);
  await typeOnLine(editor, 3, '- no butter');
  await save(editor);
  await b.page.getByText('1 edit waiting to sync').waitFor();

  const moved = await moveOnServer(a.page, boardId, noteId, -160, 90);
  const aEditor = await openEditor(a.page, noteId);
  await aEditor.getByLabel('Colour').selectOption('blue');
  await save(aEditor);
  await serverRow(a.page, boardId, noteId, 'the colour blue', (r) => r.color === 'blue');

  await goOnline(b);
  const row = await serverRow(a.page, boardId, noteId, 'B\'s offline text', (r) => r.content.includes('no butter'));
  assert.equal(row.content, '- flour\n- eggs\n- milk\n- no butter');
  assert.deepEqual([row.x, row.y, row.color], [moved.x, moved.y, 'blue'], 'A\'s position and colour are kept');
  await noteOf(a.page, noteId).getByText('no butter').waitFor();
  await noteOf(b.page, noteId).getByText('no butter').waitFor();
  await shownAt(b.page, noteId, moved.x, moved.y);
});

test('3. A and B edit different lines of one note offline: both lines kept', { skip }, async (t) => {
  const { a, b, boardId, noteId } = await twoPeople(t, '3', 'Recipe', LIST);

  await goOffline(a);
  await goOffline(b);
  let editor = await openEditor(a.page, noteId);
  await typeOnLine(editor, 0, '- rye flour');
  await save(editor);
  editor = await openEditor(b.page, noteId);
  await typeOnLine(editor, 2, '- oat milk');
  await save(editor);
  await a.page.getByText('1 edit waiting to sync').waitFor();
  await b.page.getByText('1 edit waiting to sync').waitFor();

  await goOnline(a);
  await serverRow(a.page, boardId, noteId, 'A\'s line', (r) => r.content.includes('rye flour'));
  await goOnline(b);
  const row = await serverRow(b.page, boardId, noteId, 'B\'s line', (r) => r.content.includes('oat milk'));
  assert.equal(row.content, '- rye flour\n- eggs\n- oat milk\n- butter');
  for (const p of [a, b]) {
    await noteOf(p.page, noteId).getByText('oat milk').waitFor();
    await noteOf(p.page, noteId).getByText('rye flour').waitFor();
  }
});

test('4. A deletes a note that B edits offline: it comes back with B\'s edit, and A is told', { skip }, async (t) => {
  const { a, b, boardId, noteId } = await twoPeople(t, '4', 'Keep this', LIST);

  await goOffline(b);
  await noteOf(a.page, noteId).click();
  await a.page.keyboard.press('Delete');
  await noteOf(a.page, noteId).waitFor({ state: 'detached' });
  await allSaved(a.page);
  assert.equal(await rowOf(a.page, boardId, noteId), undefined, 'the note is deleted on the server');

  const editor = await openEditor(b.page, noteId);
  await typeOnLine(editor, 2, '- still needed');
  await save(editor);
  await b.page.getByText('1 edit waiting to sync').waitFor();
  await goOnline(b);

  const row = await serverRow(b.page, boardId, noteId, 'the note back with B\'s edit', (r) => r.content.includes('still needed'));
  assert.equal(row.content, '- flour\n- eggs\n- still needed\n- butter');
  assert.equal(row.title, 'Keep this');
  assert.equal(row.deletedAt ?? undefined, undefined);
  await noteOf(a.page, noteId).getByText('still needed').waitFor();

  await t.test('UI: A sees the mark on the note and hears the announcement', async () => {
    const mark = nodeOf(a.page, noteId).getByRole('button', { name: REVIVED_MARK, exact: true });
    await mark.waitFor();
    await a.page.locator('[aria-live]', { hasText: 'A note you deleted was brought back: Keep this.' }).waitFor({ state: 'attached' });
    await shot(a.page, 'merge-revived');
    assert.equal(await nodeOf(b.page, noteId).getByRole('button', { name: REVIVED_MARK }).count(), 0, 'B, who brought it back, has no mark');
    await mark.click();
    // The History opens at the deletion, showing the note as A deleted it.
    const hist = a.page.getByRole('dialog', { name: 'History of "Keep this"' });
    await hist.locator('.history-list li.open', { hasText: /^Deleted/ }).waitFor();
    await hist.locator('.history-version').getByText('milk').waitFor();
  });
});

test('5. A renames a note, B edits its content, A undoes: A\'s old title back, B\'s content kept', { skip }, async (t) => {
  const { a, b, boardId, noteId } = await twoPeople(t, '5', 'Old title', LIST);

  let editor = await openEditor(a.page, noteId);
  await editor.getByLabel('Title').fill('New title');
  await save(editor);
  await serverRow(a.page, boardId, noteId, 'A\'s new title', (r) => r.title === 'New title');
  await noteOf(b.page, noteId).getByText('New title').waitFor();

  editor = await openEditor(b.page, noteId);
  await typeOnLine(editor, 1, '- twelve eggs');
  await save(editor);
  await allSaved(b.page);
  await noteOf(a.page, noteId).getByText('twelve eggs').waitFor();

  await t.test('UI: Ctrl+Z undoes only A\'s change, Ctrl+Shift+Z redoes it', async () => {
    await a.page.keyboard.press('Control+z');
    let row = await serverRow(a.page, boardId, noteId, 'A\'s old title', (r) => r.title === 'Old title');
    assert.equal(row.content, '- flour\n- twelve eggs\n- milk\n- butter', 'B\'s content is kept');
    await noteOf(b.page, noteId).getByText('Old title').waitFor();
    await noteOf(a.page, noteId).getByText('twelve eggs').waitFor();

    await a.page.keyboard.press('Control+Shift+z');
    row = await serverRow(a.page, boardId, noteId, 'A\'s new title again', (r) => r.title === 'New title');
    assert.equal(row.content, '- flour\n- twelve eggs\n- milk\n- butter', 'B\'s content is still kept');
  });
});

/**
 * editWhileOpen: A opens the editor and types on line aLine; B then saves
 * line bLine; once A's page has B's save, A saves. Returns the final row.
 */
async function editWhileOpen(t, n, aLine, aText, bLine, bText) {
  const people = await twoPeople(t, n, 'Agenda', LIST);
  const { a, b, boardId, noteId } = people;
  const aEditor = await openEditor(a.page, noteId);
  await typeOnLine(aEditor, aLine, aText);

  await t.test('UI: B sees that A is editing the note', async () => {
    await nodeOf(b.page, noteId).getByRole('status', { name: `${a.email} is editing` }).waitFor();
  });

  const bEditor = await openEditor(b.page, noteId);
  await typeOnLine(bEditor, bLine, bText);
  await save(bEditor);
  await allSaved(b.page);
  await serverRow(b.page, boardId, noteId, 'B\'s save', (r) => r.content.includes(bText));
  // The note under A's open editor shows B's save: A's page has it.
  await noteOf(a.page, noteId).getByText(bText.slice(2)).waitFor();

  await save(aEditor);
  await allSaved(a.page);
  const row = await serverRow(a.page, boardId, noteId, 'A\'s save', (r) => r.content.includes(aText));
  return { ...people, row };
}

test('6a. A saves the open editor after B saved another line of the note: both lines kept', { skip }, async (t) => {
  const { a, b, noteId, row } = await editWhileOpen(t, '6a', 0, '- spelt flour', 3, '- salted butter');
  await t.test('UI: the editor saves A\'s line onto B\'s save: both lines kept', async () => {
    assert.equal(row.content, '- spelt flour\n- eggs\n- milk\n- salted butter', 'both lines are kept');
    for (const p of [a, b]) {
      await noteOf(p.page, noteId).getByText('spelt flour').waitFor();
      await noteOf(p.page, noteId).getByText('salted butter').waitFor();
    }
    assert.equal(await nodeOf(b.page, noteId).getByRole('button', { name: OVERLAP_MARK }).count(), 0, 'nothing of B\'s was lost: no mark');
  });
});

test('6b. A saves the open editor after B saved the same line: A\'s text wins, B gets the mark and finds the lost text in History', { skip }, async (t) => {
  const { a, b, noteId, row } = await editWhileOpen(t, '6b', 1, '- brown eggs', 1, '- duck eggs');
  assert.equal(row.content, '- flour\n- brown eggs\n- milk\n- butter', 'the later save wins the line');
  await noteOf(b.page, noteId).getByText('brown eggs').waitFor();

  await t.test('UI: B sees the mark on the note, and History shows B\'s lost text', async () => {
    const mark = nodeOf(b.page, noteId).getByRole('button', { name: OVERLAP_MARK, exact: true });
    await mark.waitFor();
    assert.ok(await mark.isVisible());
    await shot(b.page, 'merge-mark', true);
    assert.equal(await nodeOf(a.page, noteId).getByRole('button', { name: OVERLAP_MARK }).count(), 0, 'A, whose text won, has no mark');
    await mark.click();
    // The History opens at the entry that holds B's version of the note.
    const hist = b.page.getByRole('dialog', { name: 'History of "Agenda"' });
    await hist.locator('.history-list li.open').waitFor();
    await hist.locator('.history-version').getByText('duck eggs').waitFor();
    await shot(b.page, 'merge-mark-history');
  });
});
