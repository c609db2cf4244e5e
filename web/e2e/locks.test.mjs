// End-to-end tests of locks and roles (issue 25; docs/api.md "Locks and
// roles", docs/web-client.md): three browser contexts, the owner, an
// editor and a "can add notes" invitee. The owner locks a note from its
// menu; the editor cannot move it (the note says why) and a direct REST
// push of it is refused with 403 naming the note; the "can add notes"
// invitee edits their own note but the owner's opens read only, with the
// reason. At 1280×800 and at 390×844 with touch. Every wait is a
// condition (the server's rows, the DOM), never a timer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { inPlace, pushNotes, screenPage, serverNotes, shot, synced, DESKTOP, PHONE } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** look saves a screenshot for a person to look at when LOCKS_SHOTS names a folder. */
async function look(page, name) {
  if (process.env.LOCKS_SHOTS) await page.screenshot({ path: `${process.env.LOCKS_SHOTS}/${name}.png` });
}

/** open opens board id for a person and waits for the live channel. */
async function open(p, id) {
  await p.page.goto(`${server.url}/b/${id}`);
  await p.page.locator('[data-connection="online"]').waitFor();
}

/** dbl double-clicks a note, or on a touch screen taps it and double-taps it (editor.test.mjs's way: two touch pointer-ups at once). */
async function dbl(screen, note) {
  if (!screen.hasTouch) return note.dblclick();
  await note.tap();
  await note.evaluate((el) => {
    for (let i = 0; i < 2; i++) el.dispatchEvent(new PointerEvent('pointerup', { pointerType: 'touch', isPrimary: true, bubbles: true }));
  });
}

/** until polls the server's notes until check holds (the test's own timeout bounds it). */
async function until(page, id, check) {
  for (;;) {
    const notes = await serverNotes(page, server, id);
    if (check(notes)) return notes;
    await page.waitForTimeout(100);
  }
}

/** board makes the owner's board with two notes, invites an editor and a "can add notes" invitee (both on pro), at screen. */
async function board(screen) {
  const owner = await screenPage(browser, server, screen, 'lock-owner', 'Workshop');
  await pushNotes(owner.page, server, owner.id, [
    { id: 'budget', title: 'Budget', content: 'Fixed', x: 40, y: 40 },
    { id: 'plan', title: 'Plan', content: 'Owner text', x: 40, y: 260 },
  ]);
  const editor = await screenPage(browser, server, screen, 'lock-editor');
  const adder = await screenPage(browser, server, screen, 'lock-adder');
  for (const p of [editor, adder]) {
    server.setPlan(p.email, 'pro');
    const r = await owner.page.request.post(`${server.url}/api/boards/${owner.id}/invite`, { data: { email: p.email } });
    assert.equal(r.status(), 200);
  }
  return { owner, editor, adder, id: owner.id };
}

for (const screen of [DESKTOP, PHONE]) {
  test(`a locked note cannot be moved by an editor, who is told why; a REST push is refused (${screen.name})`, { skip }, async () => {
    const { owner, editor, adder, id } = await board(screen);
    await owner.page.reload();
    await owner.page.locator('[data-connection="online"]').waitFor();
    const budget = (p) => p.page.locator('.note[data-note-id="budget"]');

    // The owner locks it from the note's menu (a right click opens it on both screens).
    await budget(owner).waitFor();
    await budget(owner).click({ button: 'right' });
    const menu = owner.page.getByRole('menu', { name: 'Note menu: Budget' });
    await menu.getByRole('menuitem', { name: 'Lock', exact: true }).click();
    await budget(owner).getByRole('img', { name: 'Locked' }).waitFor();
    await synced(owner.page);
    await until(owner.page, id, (ns) => ns.find((n) => n.id === 'budget')?.locked === true);

    // The editor sees the lock live, and a drag of the note does not move it: the note says why.
    await open(editor, id);
    await budget(editor).getByRole('img', { name: 'Locked' }).waitFor();
    const plan = editor.page.locator('.note[data-note-id="plan"]');
    const box = await budget(editor).boundingBox();
    const planBox = await plan.boundingBox();
    const from = { x: box.x + box.width / 2, y: box.y + box.height - 20 };
    if (screen.hasTouch) {
      const cdp = await editor.page.context().newCDPSession(editor.page);
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: Math.round(from.x), y: Math.round(from.y) }] });
      for (let i = 1; i <= 10; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: Math.round(from.x + 12 * i), y: Math.round(from.y) }] });
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    } else {
      await editor.page.mouse.move(from.x, from.y);
      await editor.page.mouse.down();
      await editor.page.mouse.move(from.x + 150, from.y + 40, { steps: 10 });
      await editor.page.mouse.up();
    }
    await budget(editor).getByText("Locked by the board's owner.").waitFor();
    await look(editor.page, `locked-note-${screen.name}`);
    if (screen === DESKTOP) await shot(editor.page, 'locks-editor');
    // The drag may pan the board; the note stays where it was among the others.
    const after = await budget(editor).boundingBox();
    const planAfter = await plan.boundingBox();
    assert.ok(Math.abs(after.x - planAfter.x - (box.x - planBox.x)) < 1 && Math.abs(after.y - planAfter.y - (box.y - planBox.y)) < 1, 'the locked note did not move on screen');
    const stored = (await serverNotes(editor.page, server, id)).find((n) => n.id === 'budget');
    assert.equal(stored.x, 40, 'the server kept the note where it was');

    // A direct REST push by the editor is refused whole, naming the note.
    const res = await editor.page.request.post(`${server.url}/api/boards/${id}/sync`, {
      data: { clientVersion: 0, notes: { upserted: [{ id: 'budget', title: 'Budget', content: 'Mine now', x: 500, y: 40, color: 'yellow', type: 'sticky', updatedAt: new Date().toISOString() }], deleted: [] }, trackerItems: { upserted: [], deleted: [] } },
    });
    assert.equal(res.status(), 403);
    assert.deepEqual(await res.json(), { error: 'Note "budget" is locked by the board\'s owner.', field: 'notes.upserted[0]', id: 'budget' });
    assert.equal((await serverNotes(editor.page, server, id)).find((n) => n.id === 'budget').content, 'Fixed');
    for (const p of [owner, editor, adder]) await p.ctx.close();
  });

  test(`a "can add notes" invitee edits their own note but not the owner's (${screen.name})`, { skip }, async () => {
    const { owner, editor, adder, id } = await board(screen);
    await owner.page.reload();
    await owner.page.locator('[data-connection="online"]').waitFor();

    // The owner gives the role in the share dialog.
    await owner.page.getByRole('button', { name: 'Share', exact: true }).click();
    const share = owner.page.getByRole('dialog', { name: 'Share this board' });
    await share.getByLabel(`Role of ${adder.email}`).selectOption('add');
    await share.getByRole('listitem').filter({ hasText: adder.email }).getByText('Can add notes and edit their own').waitFor();
    await look(owner.page, `share-roles-${screen.name}`);
    if (screen === DESKTOP) await shot(owner.page, 'locks-share-roles');
    await share.getByRole('button', { name: 'Close' }).click();

    await open(adder, id);
    await adder.page.getByText('You can add notes and edit your own').waitFor();
    // Their own note: added, then edited in place.
    const plus = adder.page.getByRole('button', { name: '+ Note' });
    await (screen.hasTouch ? plus.tap() : plus.click());
    await inPlace(adder.page).getByLabel('Title').fill('My idea');
    await inPlace(adder.page).getByRole('button', { name: 'Save' }).click();
    const mine = adder.page.locator('.note', { hasText: 'My idea' });
    await mine.waitFor();
    await synced(adder.page);
    await dbl(screen, mine);
    await inPlace(adder.page).getByLabel('Title').fill('My idea, better');
    await inPlace(adder.page).getByRole('button', { name: 'Save' }).click();
    await synced(adder.page);
    const notes = await until(adder.page, id, (ns) => ns.some((n) => n.title === 'My idea, better'));
    assert.equal(notes.find((n) => n.title === 'My idea, better').createdBy, adder.email);

    // The owner's note opens read only, with the reason. On a phone the
    // in-place editor left the view on the new note, with the owner's
    // partly off screen: the whole board first, as a person would.
    const fit = adder.page.getByRole('button', { name: 'Zoom to fit' });
    await (screen.hasTouch ? fit.tap() : fit.click());
    await dbl(screen, adder.page.locator('.note[data-note-id="plan"]'));
    const dialog = adder.page.getByRole('dialog', { name: 'Note' });
    await dialog.getByText('Added by someone else: you can add notes and edit only your own.').waitFor();
    assert.equal(await dialog.getByLabel('Title').getAttribute('readonly'), '');
    await look(adder.page, `add-role-readonly-${screen.name}`);
    if (screen === DESKTOP) await shot(adder.page, 'locks-add-role');
    await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
    // And a push of it is refused by the server.
    const res = await adder.page.request.post(`${server.url}/api/boards/${id}/sync`, {
      data: { notes: { upserted: [{ id: 'plan', title: 'Mine', content: '', x: 0, y: 0, color: 'yellow', type: 'sticky', updatedAt: new Date().toISOString() }], deleted: [] } },
    });
    assert.equal(res.status(), 403);
    assert.equal((await res.json()).field, 'notes.upserted[0]');
    assert.equal((await serverNotes(adder.page, server, id)).find((n) => n.id === 'plan').title, 'Plan');
    for (const p of [owner, editor, adder]) await p.ctx.close();
  });
}
