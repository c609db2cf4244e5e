// End-to-end tests of read-only links (issue 25): the owner makes a link in
// the share dialog; a browser with nobody logged in opens it, sees the
// board view only and a change live, and is cut off when the owner revokes
// it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, synced, shot, DESKTOP, PHONE } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** shotTo saves a screenshot for a person to look at when LINK_SHOTS names a folder (besides shot's docs/screenshots). */
async function look(page, name) {
  await shot(page, name);
  if (process.env.LINK_SHOTS) await page.screenshot({ path: `${process.env.LINK_SHOTS}/${name}.png` });
}

/** createLink makes a link in the share dialog and returns its URL (shown this once). */
async function createLink(page, expiry = '7 days') {
  await page.getByRole('button', { name: 'Share' }).click();
  const share = page.getByRole('dialog', { name: 'Share this board' });
  await share.getByLabel('Expires after').selectOption({ label: expiry });
  await share.getByRole('button', { name: 'Create read-only link' }).click();
  const field = share.getByLabel('The new link');
  await field.waitFor();
  const url = await field.inputValue();
  assert.match(url, /\/l\/[A-Za-z0-9_-]{43}$/);
  await share.locator('.link-list li', { hasText: /Expires .*Created / }).first().waitFor();
  return { share, url };
}

for (const screen of [DESKTOP, PHONE]) {
  test(`a read-only link opens the board without login, live, and is cut off when revoked (${screen.name})`, { skip }, async () => {
    const ownerCtx = await browser.newContext({ viewport: DESKTOP.viewport, permissions: ['clipboard-read', 'clipboard-write'] });
    const owner = await ownerCtx.newPage();
    await login(owner, server, `ada-link-${screen.name}@example.com`);
    await createBoard(owner, 'Roadmap for all');
    await addNote(owner, 'Before the link');
    await synced(owner);

    // The share dialog at this test's screen size (the board itself was made at the desktop's).
    await owner.setViewportSize(screen.viewport);
    const { share, url } = await createLink(owner);
    // Copied to the clipboard, shown this once, listed with its expiry.
    await share.getByText('Link copied.', { exact: false }).waitFor();
    assert.equal(await owner.evaluate(() => navigator.clipboard.readText()), url);
    assert.equal(await share.locator('.link-list li').count(), 1);
    await look(owner, `links-share-dialog-${screen.name}`);
    await share.locator('.link-list li').first().scrollIntoViewIfNeeded();
    await look(owner, `links-share-list-${screen.name}`);
    await share.getByRole('button', { name: 'Close' }).click();
    await owner.setViewportSize(DESKTOP.viewport);

    // A fresh browser, nobody logged in.
    const viewerCtx = await browser.newContext({ viewport: screen.viewport, hasTouch: !!screen.hasTouch, isMobile: !!screen.isMobile });
    const viewer = await viewerCtx.newPage();
    const res = await viewer.goto(url);
    assert.equal(res.headers()['x-robots-tag'], 'noindex, nofollow');
    assert.equal(res.headers()['referrer-policy'], 'no-referrer');
    assert.equal(await viewer.locator('meta[name="robots"]').getAttribute('content'), 'noindex, nofollow');
    await viewer.locator('[data-connection="online"]').waitFor();
    await viewer.getByRole('heading', { name: 'Roadmap for all' }).waitFor();
    await viewer.locator('.note', { hasText: 'Before the link' }).waitFor();
    await viewer.locator('.view-only-mark', { hasText: 'View only' }).waitFor();
    // View only: no adding, sharing, AI, history or account.
    for (const name of ['+ Note', 'Share', 'Log out', 'AI assistant']) {
      assert.equal(await viewer.getByRole('button', { name, exact: true }).count(), 0, `${name} is offered to a link`);
    }
    await viewer.getByRole('button', { name: 'Board menu' }).click();
    assert.equal(await viewer.getByRole('menuitem', { name: 'Deleted notes' }).count(), 0);
    assert.equal(await viewer.getByRole('menuitem', { name: 'Snapshots' }).count(), 0);
    await viewer.keyboard.press('Escape');
    await look(viewer, `links-viewer-${screen.name}`);

    // A change the owner makes reaches the link live.
    await addNote(owner, 'Made while they watch');
    await viewer.locator('.note', { hasText: 'Made while they watch' }).waitFor();

    // The owner revokes the link: the open page is cut off at once.
    await owner.getByRole('button', { name: 'Share' }).click();
    const again = owner.getByRole('dialog', { name: 'Share this board' });
    await again.getByRole('button', { name: /^Revoke the link/ }).click();
    await again.getByText('No links.').waitFor();
    await viewer.getByRole('heading', { name: 'This link no longer works' }).waitFor();
    assert.equal(await viewer.locator('.note').count(), 0);
    await look(viewer, `links-gone-${screen.name}`);

    // And opening it again says the same.
    await viewer.goto(url);
    await viewer.getByRole('heading', { name: 'This link no longer works' }).waitFor();
    await viewerCtx.close();
    await ownerCtx.close();
  });
}

test('leaving a link page for the app asks for a login', { skip }, async () => {
  const ownerCtx = await browser.newContext({ viewport: DESKTOP.viewport });
  const owner = await ownerCtx.newPage();
  await login(owner, server, 'ada-link-leave@example.com');
  const id = await createBoard(owner, 'Leave me');
  const res = await owner.request.post(`${server.url}/api/boards/${id}/links`, { data: { expiresInHours: 1 } });
  assert.equal(res.status(), 201);
  const { url } = await res.json();

  const viewerCtx = await browser.newContext({ viewport: DESKTOP.viewport });
  const viewer = await viewerCtx.newPage();
  await viewer.goto(url);
  await viewer.locator('.view-only-mark').waitFor();
  await viewer.getByRole('link', { name: 'Corkboard' }).click();
  await viewer.getByLabel('E-mail address').waitFor();
  await viewerCtx.close();
  await ownerCtx.close();
});
