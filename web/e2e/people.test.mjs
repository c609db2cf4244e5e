// End-to-end tests of "Who is here" (issue 25): the top bar shows the
// owner, an editor and a viewer live, and one leaving; following moves the
// follower's view when the followed pans, and stops when the follower pans;
// Go to jumps once; the owner's "Bring everyone here" moves everyone else's
// view, with a toast saying who. Screens go to docs/screenshots/ when
// SCREENSHOTS=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { skip, withServerAndBrowser } from './harness.mjs';
import { personPage, openOnline, createBoard, pushNotes, shot, DESKTOP, PHONE } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

// A logged-in context at a screen's size, and a board opened in it and online.
const userPage = (email, screen = DESKTOP) => personPage(browser, server, email, screen);
const openBoard = (page, id) => openOnline(page, server, id);

/** centre is the page's view: the board point in the middle of its canvas, and the zoom. */
function centre(page) {
  return page.evaluate(() => {
    const flow = document.querySelector('.react-flow');
    const vp = document.querySelector('.react-flow__viewport');
    const m = new DOMMatrixReadOnly(getComputedStyle(vp).transform);
    const r = flow.getBoundingClientRect();
    return { x: (r.width / 2 - m.e) / m.a, y: (r.height / 2 - m.f) / m.a, zoom: m.a };
  });
}

/** sameView waits until page's view is at v (within a board unit, zoom within 0.1 %). */
async function sameView(page, v, what) {
  try {
    await page.waitForFunction(
      (want) => {
        const flow = document.querySelector('.react-flow');
        const vp = document.querySelector('.react-flow__viewport');
        const m = new DOMMatrixReadOnly(getComputedStyle(vp).transform);
        const r = flow.getBoundingClientRect();
        const x = (r.width / 2 - m.e) / m.a;
        const y = (r.height / 2 - m.f) / m.a;
        return Math.abs(x - want.x) < 1 && Math.abs(y - want.y) < 1 && Math.abs(m.a - want.zoom) / want.zoom < 0.001;
      },
      v,
      { timeout: 5000 },
    );
  } catch (e) {
    assert.fail(`${what}: view ${JSON.stringify(await centre(page))}, wanted ${JSON.stringify(v)} (${e.message})`);
  }
}

/** sameViews waits until follower's view is leader's (read together, so a leader still settling is waited for). */
async function sameViews(follower, leader, what) {
  const near = (a, b) => Math.abs(a.x - b.x) < 1 && Math.abs(a.y - b.y) < 1 && Math.abs(a.zoom - b.zoom) / b.zoom < 0.001;
  let a, b;
  for (let i = 0; i < 50; i++) {
    [a, b] = await Promise.all([centre(follower), centre(leader)]);
    if (near(a, b)) return b;
    await follower.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))));
  }
  assert.fail(`${what}: view ${JSON.stringify(a)}, wanted ${JSON.stringify(b)}`);
}

/** pan drags the canvas by (dx, dy) from a point of the pane with no note (a mouse, or a finger on a touch screen). */
async function pan(page, dx, dy) {
  const r = await page.locator('.react-flow').boundingBox();
  const x = r.x + r.width * 0.55;
  const y = r.y + r.height * 0.35;
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(x + (dx * i) / 8, y + (dy * i) / 8);
  await page.mouse.up();
}

/** people opens the who-is-here list from the avatar of email (or "+N" with email null); returns its dialog. */
async function people(page, email) {
  const bar = page.locator('.people-avatars');
  await (email ? bar.locator(`button[data-email="${email}"]`) : bar.locator('button.more')).click();
  const list = page.getByRole('dialog', { name: 'Who is here' });
  await list.waitFor();
  return list;
}

async function axeClean(page, selector) {
  const r = await new AxeBuilder({ page }).include(selector).analyze();
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`), [], `axe on ${selector}`);
}

/** oneRow checks the top bar is one row: its height, and every control's middle on the bar's middle line. */
async function oneRow(page, what) {
  const bar = await page.locator('header.topbar').boundingBox();
  assert.ok(bar.height <= 50, `${what}: the top bar is ${bar.height}px high`);
  const mids = await page.locator('header.topbar').evaluate((h) =>
    [...h.querySelectorAll('a, button, h1')]
      .filter((e) => e.getClientRects().length && !e.closest('.people-popover'))
      .map((e) => {
        const r = e.getBoundingClientRect();
        return { t: e.getAttribute('aria-label') || e.textContent, mid: r.top + r.height / 2, right: r.right };
      }),
  );
  const mid = bar.y + bar.height / 2;
  for (const m of mids) {
    assert.ok(Math.abs(m.mid - mid) < 4, `${what}: ${m.t} is off the one row (${m.mid} vs ${mid})`);
    assert.ok(m.right <= bar.x + bar.width + 0.5, `${what}: ${m.t} is cut off at ${m.right}`);
  }
}

test('who is here: three people live and one leaving; follow, Go to and Bring everyone here move the views', { skip }, async (t) => {
  const ada = await userPage('ada-people@example.com');
  const id = await createBoard(ada.page, 'Planning session');
  await pushNotes(ada.page, server, id, [
    { id: 'p1', title: 'Far left', x: -900, y: -300 },
    { id: 'p2', title: 'Middle', x: 0, y: 0 },
    { id: 'p3', title: 'Far right', x: 1400, y: 700 },
  ]);
  for (const email of ['bob-people@example.com', 'cat-people@example.com']) {
    const res = await ada.page.request.post(`${server.url}/api/boards/${id}/invite`, { data: { email } });
    assert.equal(res.status(), 200);
  }
  server.setPlan('bob-people@example.com', 'pro'); // bob edits; cat (free) views
  const bob = await userPage('bob-people@example.com', PHONE);
  const cat = await userPage('cat-people@example.com');
  await ada.page.reload();
  await ada.page.locator('[data-connection="online"]').waitFor();
  for (const u of [bob, cat]) await openBoard(u.page, id);

  // Everyone sees all three, themselves first.
  for (const u of [ada, bob, cat]) {
    await u.page.locator('ul.people-avatars[aria-label="3 people here"]').waitFor();
    const first = u.page.locator('.people-avatars button').first();
    assert.equal(await first.getAttribute('aria-label'), `${u.email} (you)`);
  }
  // The desktop shows three avatars; the phone two and "+1", on one row with the rest of the bar.
  assert.deepEqual(await ada.page.locator('.people-avatars button').evaluateAll((bs) => bs.map((b) => b.dataset.text)), ['AP', 'BP', 'CP']);
  assert.deepEqual(await bob.page.locator('.people-avatars button').evaluateAll((bs) => bs.map((b) => b.dataset.text)), ['BP', '+2']);
  await oneRow(ada.page, 'desktop');
  await oneRow(bob.page, 'phone');

  // The list, from a person's avatar: that person's row, with Go to and Follow; the owner's Bring everyone here.
  // By keyboard: the avatar is a button; Enter opens the list.
  await ada.page.locator('.people-avatars button[data-email="cat-people@example.com"]').focus();
  await ada.page.keyboard.press('Enter');
  let list = ada.page.getByRole('dialog', { name: 'Who is here' });
  await list.waitFor();
  await list.getByRole('button', { name: 'Go to cat-people@example.com' }).waitFor();
  assert.equal(await ada.page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Go to cat-people@example.com', 'the focus is on the clicked person');
  await list.getByRole('button', { name: 'Bring everyone here' }).waitFor();
  await axeClean(ada.page, '.people');
  await shot(ada.page, 'people-list-desktop');
  await ada.page.screenshot({ path: '/tmp/people-list-desktop.png' });
  // Dark mode: the list and the avatars keep their contrast.
  await ada.page.emulateMedia({ colorScheme: 'dark' });
  await ada.page.locator('html[data-scheme="dark"]').waitFor();
  await axeClean(ada.page, '.people');
  await ada.page.emulateMedia({ colorScheme: 'light' });
  await ada.page.locator('html[data-scheme="light"]').waitFor();
  await ada.page.keyboard.press('Escape');
  await list.waitFor({ state: 'detached' });
  assert.equal(await ada.page.evaluate(() => document.activeElement?.dataset.email), 'cat-people@example.com', 'Escape gives the focus back');

  // Only the owner can bring everyone.
  list = await people(cat.page, 'ada-people@example.com');
  assert.equal(await list.getByRole('button', { name: 'Bring everyone here' }).count(), 0);

  // Cat follows Ada: Ada pans and zooms, Cat's view goes with it.
  const catStart = await centre(cat.page);
  await list.getByRole('button', { name: 'Follow ada-people@example.com' }).click();
  const bar = cat.page.locator('.follow-bar');
  await bar.getByText('Following ada-people').waitFor();
  await pan(ada.page, -300, -120);
  await ada.page.mouse.wheel(0, -200);
  const adaView = await sameViews(cat.page, ada.page, 'cat follows ada');
  assert.notEqual(adaView.zoom, catStart.zoom, 'the zoom followed too');
  t.diagnostic(`ada's view ${JSON.stringify(adaView)}`);
  await axeClean(cat.page, '.follow-bar');
  await shot(cat.page, 'people-following-desktop');
  await cat.page.screenshot({ path: '/tmp/people-following-desktop.png' });

  // Cat pans herself: following stops, and Ada's next pan leaves Cat where she is.
  await pan(cat.page, 200, 0);
  await bar.waitFor({ state: 'detached' });
  const catView = await centre(cat.page);
  await pan(ada.page, 150, 150);
  await sameView(cat.page, catView, 'cat stopped following');

  // Go to, on the phone: Bob's view jumps to Ada's once, then stays his.
  const adaNow = await centre(ada.page);
  list = await people(bob.page, null);
  await axeClean(bob.page, '.people');
  await shot(bob.page, 'people-list-phone');
  await bob.page.screenshot({ path: '/tmp/people-list-phone.png' });
  await list.getByRole('button', { name: 'Go to ada-people@example.com' }).click();
  await sameView(bob.page, { ...adaNow, zoom: adaNow.zoom }, 'bob went to ada');
  await bob.page.locator('.follow-bar').waitFor({ state: 'detached' });

  // Bring everyone here: Ada pans far, then brings Bob and Cat to her view, with a toast.
  await pan(ada.page, 400, -200);
  const there = await centre(ada.page);
  list = await people(ada.page, 'ada-people@example.com');
  await list.getByRole('button', { name: 'Bring everyone here' }).click();
  await sameView(cat.page, there, 'cat was brought');
  await sameView(bob.page, there, 'bob was brought');
  for (const u of [bob, cat]) await u.page.getByRole('status').filter({ hasText: 'ada-people brought everyone here' }).waitFor();
  await axeClean(cat.page, '.summon-toast-region');
  await shot(bob.page, 'people-brought-phone');
  await bob.page.screenshot({ path: '/tmp/people-brought-phone.png' });
  await cat.page.getByRole('button', { name: 'Dismiss' }).click();
  await cat.page.locator('.summon-toast').waitFor({ state: 'detached' });

  // Bob follows Cat; Cat leaves: everyone else sees two people, and Bob's follow ends.
  list = await people(bob.page, null);
  await list.getByRole('button', { name: 'Follow cat-people@example.com' }).click();
  await bob.page.locator('.follow-bar').getByText('Following cat-people').waitFor();
  await cat.ctx.close();
  for (const u of [ada, bob]) await u.page.locator('ul.people-avatars[aria-label="2 people here"]').waitFor();
  await bob.page.locator('.follow-bar').waitFor({ state: 'detached' });
  assert.deepEqual(await ada.page.locator('.people-avatars button').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-label'))), ['ada-people@example.com (you)', 'bob-people@example.com']);

  for (const u of [ada, bob]) await u.ctx.close();
});
