// End-to-end tests of the board's timer (issue 25, "A timer everyone
// sees"): the owner starts it, everyone sees the same time left, computed
// from the server's clock (one page's own clock is ten minutes off), pause
// freezes it everywhere, a reload keeps it, stop removes it; at zero it
// says "Time's up". Screens go to docs/screenshots/ when SCREENSHOTS=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, shot, DESKTOP, PHONE } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const SKEW_MS = 10 * 60 * 1000;

/** userPage logs email in, in a context of its own at screen, with its Date skewed by skewMs. */
async function userPage(email, { screen = DESKTOP, skewMs = 0 } = {}) {
  const ctx = await browser.newContext({ viewport: screen.viewport, hasTouch: !!screen.hasTouch, isMobile: !!screen.isMobile });
  if (skewMs) {
    // This computer's clock is wrong: every Date the page makes, and
    // Date.now(), are skewMs ahead. performance.now() is left alone.
    await ctx.addInitScript((skew) => {
      const Real = Date;
      class Skewed extends Real {
        constructor(...a) {
          if (a.length === 0) super(Real.now() + skew);
          else super(...a);
        }
        static now() {
          return Real.now() + skew;
        }
      }
      globalThis.Date = Skewed;
    }, skewMs);
  }
  const page = await ctx.newPage();
  await login(page, server, email);
  return { ctx, page, email };
}

async function openBoard(page, id) {
  await page.goto(`${server.url}/b/${id}`);
  await page.locator('[data-connection="online"]').waitFor();
}

/**
 * reading is what a page computes, read in one go: the timer's state, its
 * end in server time, what it shows, and its clock estimate as the
 * server's time minus this machine's (offset is server time minus the
 * page's performance.now(); performance.timeOrigin is when that clock
 * started, on this machine's clock, which Date's skew does not touch).
 */
function reading(page) {
  return page.evaluate(() => {
    const el = document.querySelector('.session-timer');
    if (!el) return null;
    const d = el.dataset;
    const num = (v) => (v === undefined ? null : Number(v));
    return {
      state: d.state,
      endsAt: num(d.endsAt),
      remainingMs: num(d.remainingMs),
      text: el.querySelector('.timer-time')?.textContent ?? null,
      serverMinusMachine: d.offset === undefined ? null : Number(d.offset) - performance.timeOrigin,
      roundTrip: num(d.roundTrip),
      pageDateMinusMachine: Date.now() - (performance.timeOrigin + performance.now()),
    };
  });
}

/** waitState waits until the page's timer is in state (none: no timer) with a clock estimate. */
async function waitState(page, state) {
  if (state === 'gone') return page.locator('.session-timer').waitFor({ state: 'detached' });
  await page.locator(`.session-timer[data-state="${state}"]${state === 'none' ? '' : '[data-offset]'}`).waitFor();
}

async function ownerControls(page) {
  const dialog = page.getByRole('dialog', { name: 'Timer controls' });
  if (!(await dialog.isVisible())) await page.locator('.session-timer button.timer-face').click();
  await dialog.waitFor();
  return dialog;
}

test('a timer the owner starts shows the same time left everywhere, whatever the clocks say; pause, reload and stop', { skip }, async (t) => {
  const ada = await userPage('ada-timer@example.com');
  const id = await createBoard(ada.page, 'Workshop timer');
  for (const email of ['bob-timer@example.com', 'cat-timer@example.com']) {
    const res = await ada.page.request.post(`${server.url}/api/boards/${id}/invite`, { data: { email } });
    assert.equal(res.status(), 200);
  }
  server.setPlan('bob-timer@example.com', 'pro'); // bob edits; cat (free) views
  const bob = await userPage('bob-timer@example.com', { screen: PHONE });
  const cat = await userPage('cat-timer@example.com', { skewMs: SKEW_MS });
  for (const u of [bob, cat]) await openBoard(u.page, id);
  assert.ok(Math.abs((await cat.page.evaluate(() => Date.now() - (performance.timeOrigin + performance.now()))) - SKEW_MS) < 1000, "cat's Date is ten minutes ahead");

  // Only the owner has the controls; before a timer, the others see nothing.
  await waitState(ada.page, 'none');
  assert.equal(await bob.page.locator('.session-timer').count(), 0);
  assert.equal(await cat.page.locator('.session-timer').count(), 0);

  const controls = await ownerControls(ada.page);
  await shot(ada.page, 'timer-controls-desktop');
  await controls.getByRole('button', { name: '5 min' }).click();
  await controls.waitFor({ state: 'detached' });
  const pages = [ada.page, bob.page, cat.page];
  await Promise.all(pages.map((p) => waitState(p, 'running')));

  // Every page has the server's end, and the same estimate of the server's
  // time: at any one moment they show the same time left, within 0.5 s.
  const runningReadings = await Promise.all(pages.map(reading));
  const endsAt = runningReadings[0].endsAt;
  for (const r of runningReadings) assert.equal(r.endsAt, endsAt, `every page counts to the same end: ${JSON.stringify(runningReadings)}`);
  const skews = runningReadings.map((r) => r.serverMinusMachine);
  assert.ok(Math.max(...skews) - Math.min(...skews) < 500, `the pages' server clocks agree within 0.5 s: ${skews}`);
  t.diagnostic(`server clock estimates minus this machine's (ms): ${skews.map((x) => x.toFixed(1))}; round trips ${runningReadings.map((r) => r.roundTrip.toFixed(1))}`);
  // The server runs on this machine, so each estimate is this machine's
  // clock, within half the round trip it was learnt over (NTP's bound), give
  // or take 25 ms: whole milliseconds of serverTime, the browser's rounding,
  // and this machine's clock being slewed since the page's timeOrigin.
  for (const r of runningReadings) assert.ok(Math.abs(r.serverMinusMachine) <= r.roundTrip / 2 + 25, `estimate ${r.serverMinusMachine} ms off, round trip ${r.roundTrip}`);
  // Cat's page reads the same time, not its own clock's (which would be 00:00).
  for (const r of runningReadings) {
    assert.match(r.text, /^0[45]:\d\d$/);
    assert.ok(r.remainingMs > 280_000 && r.remainingMs <= 300_000, `remaining ${r.remainingMs}`);
  }
  assert.ok(runningReadings[2].pageDateMinusMachine > SKEW_MS - 1000);
  // Not the owner's: read only.
  await bob.page.getByRole('timer').waitFor();
  assert.equal(await cat.page.locator('.session-timer button').count(), 0);
  await shot(ada.page, 'timer-running-desktop');
  await shot(bob.page, 'timer-running-phone');
  await ada.page.screenshot({ path: '/tmp/timer-running-desktop.png' });
  await bob.page.screenshot({ path: '/tmp/timer-running-phone.png' });
  // One row on a phone, timer included.
  const bar = await bob.page.locator('header.topbar').boundingBox();
  assert.ok(bar.height <= 50, `phone top bar is ${bar.height}px high`);

  // Pause: the same frozen value everywhere.
  const running = await ownerControls(ada.page);
  await ada.page.screenshot({ path: '/tmp/timer-controls-desktop.png' });
  await shot(ada.page, 'timer-controls-running-desktop');
  await running.getByRole('button', { name: 'Pause' }).click();
  await Promise.all(pages.map((p) => waitState(p, 'paused')));
  const frozen = await Promise.all(pages.map(reading));
  for (const r of frozen) {
    assert.equal(r.remainingMs, frozen[0].remainingMs, `paused everywhere at the same value: ${JSON.stringify(frozen)}`);
    assert.equal(r.text, frozen[0].text);
  }
  await ada.page.keyboard.press('Escape');

  // A reload keeps it, paused and then running.
  await Promise.all([bob.page.reload(), cat.page.reload()]);
  await Promise.all([waitState(bob.page, 'paused'), waitState(cat.page, 'paused')]);
  for (const p of [bob.page, cat.page]) assert.equal((await reading(p)).remainingMs, frozen[0].remainingMs);
  await (await ownerControls(ada.page)).getByRole('button', { name: 'Resume' }).click();
  await Promise.all(pages.map((p) => waitState(p, 'running')));
  await cat.page.reload();
  await waitState(cat.page, 'running');
  const resumed = await Promise.all(pages.map(reading));
  for (const r of resumed) assert.equal(r.endsAt, resumed[0].endsAt);
  const after = resumed.map((r) => r.serverMinusMachine);
  assert.ok(Math.max(...after) - Math.min(...after) < 500, `after a reload, the clocks still agree: ${after}`);

  // +1 min reaches everyone.
  await (await ownerControls(ada.page)).getByRole('button', { name: '+1 min' }).click();
  await cat.page.waitForFunction((was) => Number(document.querySelector('.session-timer')?.dataset.endsAt) === was + 60_000, resumed[0].endsAt);

  // Stop: gone everywhere.
  await (await ownerControls(ada.page)).getByRole('button', { name: 'Stop' }).click();
  await Promise.all([waitState(ada.page, 'none'), waitState(bob.page, 'gone'), waitState(cat.page, 'gone')]);
  for (const u of [ada, bob, cat]) await u.ctx.close();
});

test("at zero the timer says Time's up to everyone; the owner starts a custom length on a phone", { skip }, async () => {
  const ada = await userPage('ada-timesup@example.com', { screen: PHONE });
  const id = await createBoard(ada.page, 'Short timer');
  const res = await ada.page.request.post(`${server.url}/api/boards/${id}/invite`, { data: { email: 'dan-timesup@example.com' } });
  assert.equal(res.status(), 200);
  const dan = await userPage('dan-timesup@example.com', { skewMs: -SKEW_MS });
  await openBoard(dan.page, id);

  const controls = await ownerControls(ada.page);
  // A bad length says why, and starts nothing.
  await controls.getByLabel('Minutes').fill('soon');
  await controls.getByRole('button', { name: 'Start', exact: true }).click();
  await controls.getByRole('alert').getByText('Give minutes').waitFor();
  await ada.page.screenshot({ path: '/tmp/timer-controls-phone.png' });
  await shot(ada.page, 'timer-controls-phone');
  const bar = await ada.page.locator('header.topbar').boundingBox();
  assert.ok(bar.height <= 50, `phone top bar is ${bar.height}px high`);

  await controls.getByLabel('Minutes').fill('0:03');
  await controls.getByRole('button', { name: 'Start', exact: true }).click();
  await Promise.all([waitState(ada.page, 'running'), waitState(dan.page, 'running')]);
  // Dan's clock is ten minutes behind: without the server's clock the
  // timer would show 10 minutes more; it ends with everyone else's.
  const r = await reading(dan.page);
  assert.ok(r.remainingMs <= 3000, `dan sees ${r.remainingMs} ms left`);
  for (const p of [ada.page, dan.page]) {
    await p.getByText("Time's up").waitFor({ timeout: 10_000 });
    await p.locator('.session-timer.is-ended').waitFor();
    assert.equal((await reading(p)).text, '00:00');
  }
  await dan.page.screenshot({ path: '/tmp/timer-timesup-desktop.png' });
  await ada.page.screenshot({ path: '/tmp/timer-timesup-phone.png' });
  await shot(ada.page, 'timer-timesup-phone');
  await shot(dan.page, 'timer-timesup-desktop');
  for (const u of [ada, dan]) await u.ctx.close();
});
