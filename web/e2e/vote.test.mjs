// End-to-end test of dot voting (issue 25, "Dot voting"): the owner starts
// a vote on the idea notes, three people put three dots each (one on a
// phone, by keyboard), nobody sees anyone else's dots before the reveal,
// only the totals; a dot is taken back and put elsewhere; once revealed all
// three see the same exact counts and the same ranked list, whose top notes
// become work items. Screens go to docs/screenshots/ when SCREENSHOTS=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { skip, withServerAndBrowser } from './harness.mjs';
import { personPage, openOnline, createBoard, menuItem, pushNotes, shot, DESKTOP, PHONE } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

// A logged-in context at a screen's size, and a board opened in it and online.
const userPage = (email, screen = DESKTOP) => personPage(browser, server, email, screen);
const openBoard = (page, id) => openOnline(page, server, id);

/** The board: five idea notes (A to E) in two columns, and a risk note out of the vote. */
const IDEAS = ['A', 'B', 'C', 'D', 'E'].map((t, i) => ({ id: `idea-${t}`, title: `Idea ${t}`, type: 'idea', x: (i % 2) * 260, y: Math.floor(i / 2) * 200 }));
const RISK = { id: 'risk-1', title: 'A risk', type: 'risk', x: 260, y: 400 };

/** dots reads what a page shows of the vote on each note: my dots (data-mine) and, once revealed, the count. */
function dots(page) {
  return page.evaluate(() => {
    const out = {};
    for (const el of document.querySelectorAll('.vote-dots')) out[el.dataset.noteId] = { mine: Number(el.dataset.mine) };
    for (const el of document.querySelectorAll('.vote-count')) out[el.dataset.noteId] = { ...out[el.dataset.noteId], count: Number(el.dataset.count) };
    return out;
  });
}

/** results reads the ranked list: [title, count] in order. */
async function results(page) {
  const panel = page.getByRole('region', { name: 'Results' });
  await panel.waitFor();
  return panel.locator('li').evaluateAll((lis) => lis.map((li) => [li.querySelector('.vote-result-title').textContent.trim(), Number(li.dataset.count), li.querySelector('.vote-result-voters')?.textContent ?? '']));
}

const chip = (page) => page.locator('.vote-chip-main');
const total = (page) => page.locator('.vote-chip-total');

async function voteControls(page) {
  const dialog = page.getByRole('dialog', { name: 'Vote controls' });
  if (!(await dialog.isVisible())) await page.locator('.vote-face').click();
  await dialog.waitFor();
  return dialog;
}

/** voteFor puts a dot on a note: a click, or on the phone the keyboard (the control is a button with a name). */
async function voteFor(u, title, { keyboard = false } = {}) {
  const button = u.page.getByRole('button', { name: `Vote for ${title}`, exact: true });
  if (keyboard) {
    await button.focus();
    await u.page.keyboard.press('Enter');
  } else await button.click();
}

/** axeVote runs axe (every rule) on the vote's own parts that are on the page: names, labels, roles, contrast. */
async function axeVote(page) {
  let b = new AxeBuilder({ page });
  for (const sel of ['.vote-chip', '.vote-results', '.vote-dots', '.vote-count', '.vote-pop', '.vote-owner']) if (await page.locator(sel).count()) b = b.include(sel);
  const r = await b.analyze();
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`);
}

async function waitLeft(page, n) {
  await page.locator(`.vote-chip[data-left="${n}"]`).waitFor();
}

test('a dot vote: three people vote, see only their own dots and the totals, then the same exact results; the top notes become work items', { skip }, async () => {
  const ada = await userPage('ada-vote@example.com');
  const id = await createBoard(ada.page, 'Retro vote');
  await pushNotes(ada.page, server, id, [...IDEAS, RISK]);
  for (const email of ['bob-vote@example.com', 'cat-vote@example.com']) {
    const res = await ada.page.request.post(`${server.url}/api/boards/${id}/invite`, { data: { email } });
    assert.equal(res.status(), 200);
    server.setPlan(email, 'pro');
  }
  const bob = await userPage('bob-vote@example.com', PHONE);
  const cat = await userPage('cat-vote@example.com');
  await openBoard(ada.page, id);
  for (const u of [bob, cat]) await openBoard(u.page, id);
  const people = [ada, bob, cat];

  // Only the owner starts a vote; before one nobody has a chip.
  assert.equal(await bob.page.locator('.vote-face').count(), 0);
  assert.equal(await cat.page.locator('.vote-face').count(), 0);
  const controls = await voteControls(ada.page);
  assert.equal(await controls.getByLabel('Dots per person').inputValue(), '3');
  assert.equal(await controls.getByLabel('At most per note').inputValue(), '1');
  assert.equal(await controls.getByLabel('Anonymous', { exact: false }).isChecked(), true);
  // A bad number says which and starts nothing.
  await controls.getByLabel('At most per note').fill('4');
  await controls.getByRole('button', { name: 'Start voting' }).click();
  await controls.getByRole('alert').getByText('Dots per note').waitFor();
  await controls.getByLabel('At most per note').fill('1');
  await controls.getByLabel('On', { exact: true }).selectOption('type:idea');
  await controls.getByLabel('Anonymous', { exact: false }).uncheck();
  assert.deepEqual(await axeVote(ada.page), []);
  await shot(ada.page, 'vote-start-desktop');
  await ada.page.screenshot({ path: '/tmp/vote-start-desktop.png' });
  await controls.getByRole('button', { name: 'Start voting' }).click();
  await controls.waitFor({ state: 'detached' });

  for (const u of people) {
    await chip(u.page).getByText('Voting · 3 of 3 dots left').waitFor();
    await waitLeft(u.page, 3);
  }
  // The idea notes are votable, the risk note is not.
  for (const u of people) {
    for (const n of IDEAS) await u.page.getByRole('button', { name: `Vote for ${n.title}`, exact: true }).waitFor();
    assert.equal(await u.page.locator(`.vote-dots[data-note-id="${RISK.id}"]`).count(), 0, 'the risk note is out of the vote');
  }

  // Ada: A, B, C. Bob (phone, keyboard): A, B, D. Cat: A, C, D, then takes D back and puts it on E.
  for (const [i, t] of ['Idea A', 'Idea B', 'Idea C'].entries()) {
    await voteFor(ada, t);
    await waitLeft(ada.page, 2 - i);
  }
  for (const [i, t] of ['Idea A', 'Idea B', 'Idea D'].entries()) {
    await voteFor(bob, t, { keyboard: true });
    await waitLeft(bob.page, 2 - i);
  }
  for (const [i, t] of ['Idea A', 'Idea C', 'Idea D'].entries()) {
    await voteFor(cat, t);
    await waitLeft(cat.page, 2 - i);
  }
  await chip(cat.page).getByText('Voting · 0 of 3 dots left').waitFor();
  // Out of dots: the other notes' controls say why, and do nothing.
  const eButton = cat.page.getByRole('button', { name: 'Vote for Idea E', exact: true });
  assert.equal(await eButton.getAttribute('aria-disabled'), 'true');
  assert.match(await eButton.getAttribute('title'), /used all your dots/);
  // One per note: a second dot on A is refused here too.
  assert.equal(await ada.page.getByRole('button', { name: 'Vote for Idea A', exact: true }).getAttribute('aria-disabled'), 'true');

  assert.deepEqual(await axeVote(bob.page), []);
  assert.deepEqual(await axeVote(ada.page), []);
  await shot(bob.page, 'vote-open-phone');
  await bob.page.screenshot({ path: '/tmp/vote-open-phone.png' });
  const bar = await bob.page.locator('header.topbar').boundingBox();
  assert.ok(bar.height <= 50, `phone top bar is ${bar.height}px high`);
  const chipBox = await bob.page.locator('.vote-chip').boundingBox();
  assert.ok(chipBox.height <= 40 && chipBox.x >= 0 && chipBox.x + chipBox.width <= 390, `the chip is one row on the phone: ${JSON.stringify(chipBox)}`);

  // Cat takes D back (the button of her dots on D) and puts it on E.
  await cat.page.getByRole('button', { name: 'Take back a vote from Idea D' }).click();
  await waitLeft(cat.page, 1);
  await cat.page.locator('.vote-dots[data-note-id="idea-D"][data-mine="0"]').waitFor();
  await voteFor(cat, 'Idea E');
  await waitLeft(cat.page, 0);

  // Everyone sees the totals, nobody sees another's dots: each page shows its own.
  for (const u of people) await total(u.page).getByText('9 dots from 3 people').waitFor();
  const mine = { ada: ['A', 'B', 'C'], bob: ['A', 'B', 'D'], cat: ['A', 'C', 'E'] };
  for (const u of people) {
    const who = u.email.split('-')[0];
    const shown = await dots(u.page);
    for (const n of IDEAS) assert.equal(shown[n.id].mine, mine[who].includes(n.title.slice(-1)) ? 1 : 0, `${who} sees their own dots only, on ${n.title}: ${JSON.stringify(shown)}`);
    assert.equal(await u.page.locator('.vote-count').count(), 0, 'no counts before the reveal');
    assert.equal(await u.page.getByRole('region', { name: 'Results' }).count(), 0);
  }
  // A reload keeps my dots (they come from the server).
  await bob.page.reload();
  await bob.page.locator('[data-connection="online"]').waitFor();
  await waitLeft(bob.page, 0);
  assert.deepEqual(
    Object.entries(await dots(bob.page))
      .filter(([, v]) => v.mine)
      .map(([k]) => k)
      .sort(),
    ['idea-A', 'idea-B', 'idea-D'],
  );
  await shot(ada.page, 'vote-open-desktop');
  await ada.page.screenshot({ path: '/tmp/vote-open-desktop.png' });

  // The owner reveals: everyone sees the same exact counts and ranked list.
  await (await voteControls(ada.page)).getByRole('button', { name: 'Reveal results' }).click();
  const lists = [];
  const want = { 'idea-A': 3, 'idea-B': 2, 'idea-C': 2, 'idea-D': 1, 'idea-E': 1 };
  for (const u of people) {
    await chip(u.page).getByText('Results').waitFor();
    for (const [note, count] of Object.entries(want)) await u.page.locator(`.vote-count[data-note-id="${note}"][data-count="${count}"]`).waitFor();
    assert.equal(await u.page.locator('.vote-count').count(), 5);
    const list = await results(u.page);
    // Most dots first; ties in the server's order, the same on every page.
    assert.deepEqual(
      list.map(([, c]) => c),
      [3, 2, 2, 1, 1],
      `${u.email}: ${JSON.stringify(list)}`,
    );
    assert.equal(list[0][0], 'Idea A');
    assert.deepEqual(list.slice(1, 3).map(([t]) => t).sort(), ['Idea B', 'Idea C']);
    lists.push(JSON.stringify(list.map(([t, c]) => [t, c])));
    // Not anonymous: the voters' names are shown.
    assert.match(list[0][2], /ada-vote@example\.com/);
    assert.match(list[0][2], /bob-vote@example\.com/);
    assert.match(list[0][2], /cat-vote@example\.com/);
  }
  assert.equal(new Set(lists).size, 1, `one ranked list for all: ${lists}`);
  assert.deepEqual(await axeVote(ada.page), []);
  assert.deepEqual(await axeVote(bob.page), []);
  // And in dark mode (it follows the system's).
  await ada.page.emulateMedia({ colorScheme: 'dark' });
  await ada.page.locator(':root[data-scheme="dark"]').waitFor({ state: 'attached' });
  assert.deepEqual(await axeVote(ada.page), []);
  await ada.page.screenshot({ path: '/tmp/vote-results-desktop-dark.png' });
  await ada.page.emulateMedia({ colorScheme: 'light' });
  await ada.page.locator(':root[data-scheme="light"]').waitFor({ state: 'attached' });
  await shot(ada.page, 'vote-results-desktop');
  await shot(bob.page, 'vote-results-phone');
  await ada.page.screenshot({ path: '/tmp/vote-results-desktop.png' });
  await bob.page.screenshot({ path: '/tmp/vote-results-phone.png' });

  // The top three become work items, seen by the others as any edit.
  const panel = ada.page.getByRole('region', { name: 'Results' });
  await panel.getByRole('button', { name: 'Create work items (3)' }).click();
  await panel.getByText('Created CB-1, CB-2, CB-3.').waitFor();
  await cat.page.getByRole('button', { name: 'Work items (3)', exact: true }).waitFor();
  const pulled = await (await cat.page.request.get(`${server.url}/api/boards/${id}/sync?since=0`)).json();
  assert.deepEqual(pulled.trackerItems.map((i) => i.summary).sort(), ['Idea A', 'Idea B', 'Idea C']);
  // Cat is not offered them again: they are items already.
  const catPanel = cat.page.getByRole('region', { name: 'Results' });
  await catPanel.getByText('work item CB-1').waitFor();
  assert.equal(await catPanel.getByRole('button', { name: 'Create work items' }).isDisabled(), true);
  assert.equal(await catPanel.getByRole('checkbox').count(), 2, 'only D and E can still be picked');

  // Clear: the vote is gone everywhere.
  await (await voteControls(ada.page)).getByRole('button', { name: 'Clear vote' }).click();
  for (const u of people) {
    await u.page.locator('.vote-chip').waitFor({ state: 'detached' });
    assert.equal(await u.page.locator('.vote-count, .vote-dots').count(), 0);
  }

  // The vote stays in the board's history (issue 25): the owner opens Vote
  // history and sees the results entry, the ranked notes read from it, and
  // no Restore (the server refuses one, 400 naming logKey).
  await menuItem(ada.page, 'Vote history');
  const history = ada.page.getByRole('dialog', { name: 'Vote history' });
  const entry = history.locator('li[data-action="reveal_vote"]');
  await entry.getByText('Vote results').waitFor();
  await entry.getByText('9 dots from 3 people · first: Idea A (3 dots)').waitFor();
  assert.equal(await history.getByRole('button', { name: /Restore/ }).count(), 0, 'a vote entry has no Restore');
  await entry.getByRole('button', { name: /^View the results of / }).click();
  const record = history.locator('.history-vote-results');
  await record.waitFor();
  const ranked = await record.locator('li').evaluateAll((lis) => lis.map((li) => [li.querySelector('.vote-result-title').textContent.trim(), Number(li.dataset.count)]));
  assert.deepEqual(ranked.map(([, c]) => c), [3, 2, 2, 1, 1]);
  assert.equal(ranked[0][0], 'Idea A');
  assert.deepEqual(ranked.slice(1, 3).map(([t]) => t).sort(), ['Idea B', 'Idea C']);
  assert.match(await record.locator('li').first().locator('.vote-result-voters').textContent(), /bob-vote@example\.com/);
  // The start is there too, under its own filter.
  await history.getByLabel('Show').selectOption('start_vote');
  await history.locator('li[data-action="start_vote"]').getByText('on the idea notes · 3 dots each').waitFor();
  await history.getByLabel('Show').selectOption('reveal_vote');
  await entry.getByRole('button', { name: /^View the results of / }).click();
  await record.waitFor();
  const log = await (await ada.page.request.get(`${server.url}/api/boards/${id}/log?action=reveal_vote`)).json();
  const refusedRestore = await ada.page.request.post(`${server.url}/api/boards/${id}/log/restore`, { data: { logKey: log.entries[0].key, type: 'note' } });
  assert.equal(refusedRestore.status(), 400);
  assert.equal((await refusedRestore.json()).field, 'logKey');
  // The board's Markdown (Export as Markdown, current.md) and its restore are untouched by the vote's entries.
  const md = await ada.page.request.get(`${server.url}/api/boards/${id}/snapshot?download=1`);
  assert.equal(md.status(), 200);
  assert.match(await md.text(), /Idea A/);
  const current = await ada.page.request.post(`${server.url}/api/boards/${id}/log/restore`, { data: { logKey: 'current.md', type: 'board' } });
  assert.equal(current.status(), 200);
  assert.equal((await current.json()).notes.length, 6);
  const axeHistory = await new AxeBuilder({ page: ada.page }).include('.history').analyze();
  assert.deepEqual(axeHistory.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`), [], 'Vote history');
  await shot(ada.page, 'vote-history-desktop');
  await ada.page.screenshot({ path: '/tmp/vote-history-desktop.png' });
  // On the phone (an invitee: any member reads the history).
  await menuItem(bob.page, 'Vote history');
  const phoneHistory = bob.page.getByRole('dialog', { name: 'Vote history' });
  await phoneHistory.locator('li[data-action="reveal_vote"]').getByText('9 dots from 3 people · first: Idea A (3 dots)').waitFor();
  await bob.page.screenshot({ path: '/tmp/vote-history-list-phone.png' });
  await phoneHistory.locator('li[data-action="reveal_vote"]').getByRole('button', { name: /^View the results of / }).tap();
  await phoneHistory.locator('.history-vote-results li').first().waitFor();
  await shot(bob.page, 'vote-history-phone');
  await bob.page.screenshot({ path: '/tmp/vote-history-phone.png' });
  for (const u of people) await u.ctx.close();
});

test('on a phone the owner runs a vote on a frame, tied to the timer: it ends with the timer, everywhere, and the server refuses dots after', { skip }, async () => {
  const ada = await userPage('ada-votetimer@example.com', PHONE);
  const id = await createBoard(ada.page, 'Frame vote');
  // Two notes in the frame "Ideas" (their centres inside), one outside.
  const now = new Date().toISOString();
  const res = await ada.page.request.post(`${server.url}/api/boards/${id}/sync`, {
    data: { clientVersion: 0, notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [], deleted: [] }, frames: { upserted: [{ id: 'f1', title: 'Ideas', x: -20, y: -60, w: 300, h: 480, color: 'gray', locked: false, updatedAt: now }], deleted: [] } },
  });
  assert.equal(res.status(), 200);
  await pushNotes(ada.page, server, id, [
    { id: 'in-1', title: 'Inside one', x: 20, y: 0 },
    { id: 'in-2', title: 'Inside two', x: 20, y: 200 },
    { id: 'out-1', title: 'Outside', x: 320, y: 0 },
  ]);
  await ada.page.request.post(`${server.url}/api/boards/${id}/invite`, { data: { email: 'dan-votetimer@example.com' } });
  const dan = await userPage('dan-votetimer@example.com'); // free plan: a viewer, who may still vote
  await openBoard(ada.page, id);
  await openBoard(dan.page, id);

  // The timer first (the vote's end needs one): 30 seconds, time to vote.
  await ada.page.locator('.session-timer button.timer-face').click();
  const timer = ada.page.getByRole('dialog', { name: 'Timer controls' });
  await timer.getByLabel('Minutes').fill('0:30');
  await timer.getByRole('button', { name: 'Start', exact: true }).click();
  await ada.page.locator('.session-timer[data-state="running"]').waitFor();

  const controls = await voteControls(ada.page);
  await controls.getByLabel('On', { exact: true }).selectOption({ label: 'Ideas' });
  await controls.getByLabel('Ends').selectOption('timer');
  await shot(ada.page, 'vote-start-phone');
  await ada.page.screenshot({ path: '/tmp/vote-start-phone.png' });
  const bar = await ada.page.locator('header.topbar').boundingBox();
  assert.ok(bar.height <= 50, `phone top bar is ${bar.height}px high`);
  await controls.getByRole('button', { name: 'Start voting' }).click();
  await controls.waitFor({ state: 'detached' });

  for (const p of [ada.page, dan.page]) {
    await p.getByRole('button', { name: 'Vote for Inside one', exact: true }).waitFor();
    await p.getByRole('button', { name: 'Vote for Inside two', exact: true }).waitFor();
    assert.equal(await p.locator('.vote-dots[data-note-id="out-1"]').count(), 0, 'the note outside the frame is not in the vote');
  }
  await ada.page.getByRole('button', { name: 'Vote for Inside one', exact: true }).tap();
  await waitLeft(ada.page, 2);
  await voteFor(dan, 'Inside one');
  await waitLeft(dan.page, 2);
  await total(dan.page).getByText('2 dots from 2 people').waitFor();
  await ada.page.screenshot({ path: '/tmp/vote-open-owner-phone.png' });

  // The owner stops the timer: the vote ends with it on every page, and the server takes no more dots.
  await ada.page.locator('.session-timer button.timer-face').click();
  await ada.page.getByRole('dialog', { name: 'Timer controls' }).getByRole('button', { name: 'Stop' }).click();
  for (const p of [ada.page, dan.page]) {
    await chip(p).getByText('Voting ended with the timer').waitFor();
    assert.equal(await p.locator('.vote-add').count(), 0);
  }
  const refused = await dan.page.request.post(`${server.url}/api/boards/${id}/votes`, { data: { noteId: 'in-2', delta: 1 } });
  assert.equal(refused.status(), 409);

  await (await voteControls(ada.page)).getByRole('button', { name: 'Reveal results' }).click();
  for (const p of [ada.page, dan.page]) await p.locator('.vote-count[data-note-id="in-1"][data-count="2"]').waitFor();
  assert.deepEqual(
    (await results(dan.page)).map(([t, c, v]) => [t, c, v]),
    [['Inside one', 2, '']],
    'anonymous: no names',
  );
  // A viewer cannot make work items.
  assert.equal(await dan.page.getByRole('button', { name: /Create work items/ }).count(), 0);
  for (const u of [ada, dan]) await u.ctx.close();
});
