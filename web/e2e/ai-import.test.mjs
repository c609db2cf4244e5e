// End-to-end tests of "Import a document" and tracker generation
// (docs/web-client.md, "AI (issue 12)"), against the real binary and the
// fake Ollama (cmd/corkboard-fakeollama) replaying web/e2e/ollama/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { skipAI, withAIServerAndBrowser } from './harness.mjs';
import { login, createBoard, synced, invite, menuItem } from './helpers.mjs';

let server, browser;
withAIServerAndBrowser((up) => ({ server, browser } = up));

const skip = skipAI;

async function userPage(email) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, email);
  return { ctx, page };
}

async function seriousViolations(page, include) {
  const r = await new AxeBuilder({ page }).include(include).analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

const isDocPost = (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/api/canvas/document-to-notes';
const isLogPost = (r) => r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/log');

// The recording document-to-notes.ndjson proposes three notes: "Goal"
// (green, requirement), "Risk: onboarding" (pink, risk) and "Open question"
// (yellow, question).
const DOCUMENT = '# Beta plan\n\nWe launch the beta to ten teams by March. 🚀\nRisk: new users may not find the import button.\nWhich plan do beta teams get?\n';

test('a pasted document becomes the picked notes, and the other user sees them arrive live', { skip }, async () => {
  const ada = await userPage('ada-imp@example.com');
  const id = await createBoard(ada.page, 'Import board');
  await invite(ada.page, 'grace-imp@example.com');

  // Grace has the board open before the import: the notes must come to her live.
  const grace = await userPage('grace-imp@example.com');
  await grace.page.goto(`${server.url}/b/${id}`);
  await grace.page.locator('[data-connection="online"]').waitFor();

  await menuItem(ada.page, 'Import document');
  const dialog = ada.page.getByRole('dialog', { name: 'Import a document' });
  const text = dialog.getByLabel('Document text');

  // A failure keeps the document in the dialog and says what happened (the
  // fake answers 404 "model not found" to this text; the server says 503).
  await text.fill('FAKE-MODEL-404 ' + DOCUMENT);
  await dialog.getByRole('button', { name: 'Propose notes' }).click();
  await dialog.getByRole('alert').filter({ hasText: 'The local AI model is not available' }).waitFor();
  assert.match(await dialog.getByRole('alert').innerText(), /ollama pull/);
  assert.equal(await text.inputValue(), 'FAKE-MODEL-404 ' + DOCUMENT, 'the text stays after an error');

  await text.fill(DOCUMENT);
  // The rocket is one character, as the server counts.
  assert.equal(await dialog.locator('[data-count]').getAttribute('data-count'), String([...DOCUMENT].length));
  await dialog.getByText(`${[...DOCUMENT].length} / 100,000 characters`).waitFor();
  const sent = ada.page.waitForRequest(isDocPost);
  await dialog.getByRole('button', { name: 'Propose notes' }).click();
  const body = JSON.parse((await sent).postData());
  assert.deepEqual(body, { text: DOCUMENT, boardId: id });

  await dialog.getByRole('heading', { name: '3 proposed notes' }).waitFor();
  const preview = dialog.locator('.import-note');
  assert.equal(await preview.count(), 3);
  // Shown as the note will look: its colour, its type, its rendered Markdown.
  const goal = dialog.getByRole('article', { name: 'requirement: Goal' });
  assert.equal(await goal.evaluate((e) => getComputedStyle(e).backgroundColor), 'rgb(205, 240, 197)');
  await goal.locator('strong', { hasText: 'ten teams' }).waitFor();
  for (const t of ['Goal', 'Risk: onboarding', 'Open question']) assert.equal(await dialog.getByRole('checkbox', { name: `Add “${t}”` }).isChecked(), true, `${t} is picked by default`);
  assert.deepEqual(await seriousViolations(ada.page, '.dialog'), [], 'import preview');

  await dialog.getByRole('checkbox', { name: 'Add “Risk: onboarding”' }).uncheck();
  const logged = [];
  ada.page.on('request', (r) => {
    if (isLogPost(r)) logged.push(...JSON.parse(r.postData()).entries);
  });
  const logSent = ada.page.waitForResponse((r) => isLogPost(r.request()));
  await dialog.getByRole('button', { name: 'Add 2 notes' }).click();
  // The dialog says what happened, since the grid may be outside the view.
  await dialog.getByRole('status').filter({ hasText: 'Added 2 notes from the document. Zoom to fit (or the 0 key) shows the whole board.' }).waitFor();
  assert.equal((await logSent).status(), 200);
  await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
  await dialog.waitFor({ state: 'detached' });
  await ada.page.getByRole('button', { name: 'Zoom to fit' }).click();

  await ada.page.locator('.note', { hasText: 'Goal' }).waitFor();
  await ada.page.locator('.note', { hasText: 'Open question' }).waitFor();
  await synced(ada.page);
  assert.deepEqual(
    logged.map((e) => e.action),
    ['create_note', 'create_note'],
    'each added note is logged as create_note',
  );

  // Grace sees both arrive, without reloading.
  await grace.page.locator('.note', { hasText: 'Goal' }).waitFor();
  await grace.page.locator('.note', { hasText: 'Open question' }).waitFor();
  assert.equal(await grace.page.locator('.note', { hasText: 'Risk: onboarding' }).count(), 0, 'the unpicked note was not added');

  const res = await ada.page.request.get(`${server.url}/api/boards/${id}/sync?since=0`);
  const notes = (await res.json()).notes.sort((a, b) => a.x - b.x);
  assert.deepEqual(
    notes.map(({ title, content, color, type, x, y }) => ({ title, content, color, type, x, y })),
    [
      { title: 'Goal', content: 'Launch the beta to **ten teams** by March.', color: 'green', type: 'requirement', x: 0, y: 0 },
      { title: 'Open question', content: 'Which plan do beta teams get?', color: 'yellow', type: 'question', x: 260, y: 0 },
    ],
    'the picked notes, in a grid from the origin of the empty board',
  );
  await ada.ctx.close();
  await grace.ctx.close();
});

test('tracker generation in its three modes: previewed, then the picked items added or replaced', { skip }, async () => {
  const { ctx, page } = await userPage('gen@example.com');
  const id = await createBoard(page, 'Generate board');
  // An item with the id the regenerate recording names (item-1), pushed as another client would.
  const pushed = await page.request.post(`${server.url}/api/boards/${id}/sync`, {
    data: { clientVersion: 0, notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [{ id: 'item-1', key: 'CB-1', type: 'story', summary: 'Log in', status: 'in-progress', updatedAt: new Date().toISOString() }], deleted: [] } },
  });
  assert.equal(pushed.status(), 200);
  await page.getByRole('button', { name: 'Work items (1)' }).click();
  const tracker = page.locator('.tracker');
  await tracker.getByRole('button', { name: 'CB-1 Log in: open' }).waitFor();
  const generate = async () => {
    await tracker.getByRole('button', { name: 'Generate' }).click();
    return page.getByRole('dialog', { name: 'Generate work items' });
  };
  const isGen = (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/api/canvas/tracker/generate';

  // 1. The next step: stories (the defaults); one of the two is added.
  let dialog = await generate();
  assert.equal(await dialog.getByRole('radio', { name: /^The next step/ }).isChecked(), true);
  assert.equal(await dialog.getByLabel('Type of items').inputValue(), 'story');
  let sent = page.waitForRequest(isGen);
  await dialog.getByRole('button', { name: 'Generate', exact: true }).click();
  let body = JSON.parse((await sent).postData());
  assert.equal(body.mode, 'generate_step');
  assert.equal(body.step, 'story');
  assert.deepEqual(body.items, [{ id: 'item-1', key: 'CB-1', type: 'story', summary: 'Log in', status: 'in-progress' }]);
  await dialog.getByRole('heading', { name: '2 proposed items' }).waitFor();
  await dialog.getByText('Recommended next: Generate tasks.').waitFor();
  await dialog.getByText('The stories are ready to be broken down into tasks.').waitFor();
  assert.deepEqual(await seriousViolations(page, '.dialog'), [], 'generation preview');
  await dialog.getByRole('checkbox', { name: /Invite a teammate to a board/ }).uncheck();
  await dialog.getByRole('button', { name: 'Add 1 item' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Added 1 item: CB-2.' }).waitFor();
  await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
  await tracker.getByRole('button', { name: 'CB-2 Sign in with a one-time code: open' }).waitFor();
  assert.equal(await tracker.getByText('Invite a teammate to a board').count(), 0);

  // 2. Children of CB-2: two tasks under it.
  dialog = await generate();
  await dialog.getByRole('radio', { name: /^Children of an item/ }).check();
  const parentId = await dialog.getByLabel('Item to break down').locator('option', { hasText: 'CB-2' }).getAttribute('value');
  await dialog.getByLabel('Item to break down').selectOption(parentId);
  sent = page.waitForRequest(isGen);
  await dialog.getByRole('button', { name: 'Generate', exact: true }).click();
  body = JSON.parse((await sent).postData());
  assert.equal(body.mode, 'generate_children');
  assert.equal(body.parentId, parentId);
  await dialog.getByRole('heading', { name: '2 proposed items' }).waitFor();
  assert.equal(await dialog.getByText('under CB-2').count(), 2);
  await dialog.getByText('Recommended next: Nothing more to generate.').waitFor();
  await dialog.getByRole('button', { name: 'Add 2 items' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Added 2 items: CB-3, CB-4.' }).waitFor();
  await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();

  // 3. A better version of CB-1, which it replaces in place.
  dialog = await generate();
  await dialog.getByRole('radio', { name: /^Better versions of items/ }).check();
  await dialog.getByRole('checkbox', { name: 'CB-1 Log in' }).check();
  sent = page.waitForRequest(isGen);
  await dialog.getByRole('button', { name: 'Generate', exact: true }).click();
  body = JSON.parse((await sent).postData());
  assert.equal(body.mode, 'regenerate_items');
  assert.deepEqual(body.itemIds, ['item-1']);
  await dialog.getByRole('heading', { name: '1 proposed item' }).waitFor();
  await dialog.locator('.gen-replaces', { hasText: 'replaces CB-1:' }).locator('del', { hasText: 'Log in' }).waitFor();
  await dialog.getByRole('button', { name: 'Replace 1 item' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Replaced 1 item: CB-1.' }).waitFor();
  await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
  await tracker.getByRole('button', { name: 'CB-1 Sign in with a one-time e-mail code: open' }).waitFor();

  await synced(page);
  const res = await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`);
  const items = new Map((await res.json()).trackerItems.map((i) => [i.key, i]));
  assert.equal(items.size, 4);
  assert.deepEqual(
    (({ id, type, status, summary }) => ({ id, type, status, summary }))(items.get('CB-1')),
    { id: 'item-1', type: 'story', status: 'in-progress', summary: 'Sign in with a one-time e-mail code' },
    'replaced in place: same id, type and status',
  );
  assert.equal(items.get('CB-2').status, 'todo');
  for (const k of ['CB-3', 'CB-4']) {
    assert.equal(items.get(k).parentId, parentId, `${k} is a child of CB-2`);
    assert.equal(items.get(k).type, 'task');
  }
  await ctx.close();
});

test('a document over 100,000 characters is refused before anything is sent', { skip }, async () => {
  const { ctx, page } = await userPage('long@example.com');
  await createBoard(page, 'Long board');
  let posts = 0;
  page.on('request', (r) => {
    if (isDocPost(r)) posts++;
  });
  await menuItem(page, 'Import document');
  const dialog = page.getByRole('dialog', { name: 'Import a document' });
  const text = dialog.getByLabel('Document text');
  // 99,999 + 2 astral characters: 100,001 characters, 100,003 UTF-16 units.
  await text.fill('a'.repeat(99_999) + '😀😀');
  await dialog.getByText('100,001 / 100,000 characters').waitFor();
  await dialog.getByRole('alert').filter({ hasText: 'The document has 100,001 characters; at most 100,000 can be imported.' }).waitFor();
  assert.equal(await dialog.getByRole('button', { name: 'Propose notes' }).isDisabled(), true);
  await text.press('Enter'); // a newline: still over
  await dialog.getByText('100,002 / 100,000 characters').waitFor();
  assert.equal(posts, 0, 'nothing was sent');

  // Back to exactly 100,000: the refusal goes and the button comes back.
  await text.fill('a'.repeat(99_999) + '😀');
  await dialog.getByText('100,000 / 100,000 characters').waitFor();
  assert.equal(await dialog.getByRole('alert').count(), 0);
  assert.equal(await dialog.getByRole('button', { name: 'Propose notes' }).isEnabled(), true);

  // A Markdown file replaces the text and is counted the same way.
  await dialog.getByLabel('File (.txt or .md)').setInputFiles({ name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan 🚀\n') });
  await dialog.getByText('9 / 100,000 characters · from plan.md').waitFor();
  assert.equal(await text.inputValue(), '# Plan 🚀\n');
  await dialog.getByLabel('File (.txt or .md)').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from('x') });
  await dialog.getByRole('alert').filter({ hasText: '"photo.png" is not a text or Markdown file (.txt, .md).' }).waitFor();
  assert.equal(await text.inputValue(), '# Plan 🚀\n', 'a refused file leaves the text alone');
  await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
  assert.equal(posts, 0);
  await ctx.close();
});

test('Cancel stops an import that is still running and keeps the document', { skip }, async () => {
  const { ctx, page } = await userPage('cancel@example.com');
  await createBoard(page, 'Cancel board');
  // The answer never comes: the request stays open until the page drops it.
  await page.route('**/api/canvas/document-to-notes', () => {});
  await menuItem(page, 'Import document');
  const dialog = page.getByRole('dialog', { name: 'Import a document' });
  await dialog.getByLabel('Document text').fill(DOCUMENT);
  await dialog.getByRole('button', { name: 'Propose notes' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Reading the document and proposing notes' }).waitFor();
  const failed = page.waitForEvent('requestfailed', isDocPost);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await failed;
  await dialog.getByRole('button', { name: 'Propose notes' }).waitFor();
  assert.equal(await dialog.getByLabel('Document text').inputValue(), DOCUMENT);
  assert.equal(await dialog.getByRole('alert').count(), 0, 'a cancel is not an error');
  assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA', 'the focus goes back to the document');
  await ctx.close();
});
