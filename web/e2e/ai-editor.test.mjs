// End-to-end tests of the AI in the note editor (docs/web-client.md, "AI
// (issue 12)": Ask AI and slash commands, Analyse and rewrite), against the
// real binary and the fake Ollama as a process, answering with the
// recordings of web/e2e/ollama/editor/script.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { skipAI, withAIServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, synced, openFull } from './helpers.mjs';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'ollama', 'editor', 'script.json');
const skip = skipAI;

let fake, server, browser;
withAIServerAndBrowser((up) => ({ fake, server, browser } = up), SCRIPT);

/** open logs a new user in (on the pro plan: the free plan allows 5 AI requests a minute) on a new board. */
async function open(email, boardName) {
  server.setPlan(email, 'pro');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  await login(page, server, email);
  const id = await createBoard(page, boardName);
  return { ctx, page, id };
}

/** serverNote reads a note as the server holds it. */
async function serverNote(page, boardId, noteId) {
  const res = await page.request.get(`${server.url}/api/boards/${boardId}/sync?since=0`);
  assert.equal(res.status(), 200);
  return (await res.json()).notes.find((n) => n.id === noteId);
}

/** editNote opens a note's editor and returns the dialog and the note's id. */
async function editNote(page, title) {
  const node = page.locator('.note', { hasText: title });
  const noteId = await node.locator('xpath=ancestor-or-self::*[@data-id][1]').getAttribute('data-id');
  const dialog = await openFull(page, node);
  return { dialog, noteId };
}

async function seriousViolations(page) {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

test('a slash command streams into the note editor, and the accepted draft is saved', { skip }, async () => {
  const { ctx, page, id } = await open('slash@example.com', 'Slash board');
  await addNote(page, 'Login', 'We need a login.');
  await synced(page);
  const { dialog, noteId } = await editNote(page, 'Login');
  const content = dialog.getByLabel('Content (Markdown)');
  await content.focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('/gen');

  const list = dialog.getByRole('listbox', { name: 'AI commands' });
  await list.waitFor();
  // Escape closes the list, not the editor; a new `/` opens it again.
  await page.keyboard.press('Escape');
  await list.waitFor({ state: 'detached' });
  assert.equal(await dialog.isVisible(), true);
  for (let i = 0; i < 4; i++) await page.keyboard.press('Backspace');
  await page.keyboard.type('/gen');
  await list.waitFor();
  assert.equal(await list.getByRole('option').count(), 7, '"/gen" matches all seven commands');
  assert.equal(await content.getAttribute('aria-controls'), await list.getAttribute('id'));
  const first = list.getByRole('option', { selected: true });
  assert.match(await first.innerText(), /^\/generate-prd/);
  assert.equal(await content.getAttribute('aria-activedescendant'), await first.getAttribute('id'));
  assert.deepEqual(await seriousViolations(page), [], 'no serious accessibility problem with the list open');

  // Typing narrows the list; arrows move; Enter runs.
  await page.keyboard.type('erate-');
  await page.keyboard.press('ArrowDown');
  assert.match(await list.getByRole('option', { selected: true }).innerText(), /^\/generate-epic/);
  await page.keyboard.press('ArrowUp');
  const asked = page.waitForRequest((r) => r.url().endsWith('/api/canvas/note-ai/generate-prd'));
  await page.keyboard.press('Enter');
  const body = (await asked).postDataJSON();
  assert.equal(body.boardId, id);
  assert.equal(body.noteId, noteId);
  assert.equal(body.noteContent, 'We need a login.\n', 'the typed command is not part of the note sent');
  assert.equal(body.prompt, undefined);
  await list.waitFor({ state: 'detached' });

  const draft = dialog.getByRole('region', { name: '/generate-prd' });
  await draft.getByRole('status').filter({ hasText: 'The draft is ready' }).waitFor();
  const preview = draft.getByLabel('AI draft');
  assert.equal(await preview.locator('strong').first().innerText(), 'Passwordless login PRD');
  assert.equal(await preview.getByRole('heading', { name: 'Requirements' }).count(), 1, 'the preview is rendered Markdown');
  assert.equal(await content.inputValue(), 'We need a login.\n', 'nothing changes before the draft is accepted');

  const frontmatter = page.waitForRequest((r) => r.url().endsWith('/api/canvas/generate-frontmatter'));
  await draft.getByRole('button', { name: 'Accept', exact: true }).click();
  assert.equal((await frontmatter).postDataJSON().title, 'Passwordless login PRD', 'the frontmatter call is fired after the accept');
  await draft.waitFor({ state: 'detached' });
  assert.equal(await dialog.getByLabel('Title').inputValue(), 'Passwordless login PRD');
  await dialog.getByText('AI summary (not saved): How users sign in to Corkboard without a password.').waitFor();
  await synced(page);

  const saved = await serverNote(page, id, noteId);
  assert.equal(saved.title, 'Passwordless login PRD');
  assert.match(saved.content, /^## Problem\nUsers forget passwords and lock themselves out\.\n/);
  assert.match(saved.content, /- Rate limits: TBD$/);
  await ctx.close();
});

test('an Ask AI draft that is rejected leaves the note unchanged', { skip }, async () => {
  const { ctx, page, id } = await open('reject@example.com', 'Reject board');
  await addNote(page, 'Plan', 'Original text');
  await synced(page);
  const before = await serverNote(page, id, (await editNote(page, 'Plan')).noteId);
  const dialog = page.getByRole('dialog', { name: 'Edit note' });

  await dialog.getByRole('button', { name: 'Ask AI' }).click();
  const draft = dialog.getByRole('region', { name: 'Ask AI' });
  await draft.getByLabel('What should the AI write in this note?').fill('An onboarding checklist');
  const asked = page.waitForRequest((r) => r.url().endsWith('/api/canvas/note-ai'));
  await draft.getByRole('button', { name: 'Ask' }).click();
  const body = (await asked).postDataJSON();
  assert.equal(body.prompt, 'An onboarding checklist');
  assert.equal(body.noteContent, 'Original text');
  await draft.getByRole('status').filter({ hasText: 'The draft is ready' }).waitFor();
  assert.equal(await draft.getByLabel('AI draft').locator('strong').first().innerText(), 'Onboarding checklist');
  assert.deepEqual(await seriousViolations(page), [], 'no serious accessibility problem with a draft shown');

  await draft.getByRole('button', { name: 'Reject' }).click();
  await draft.waitFor({ state: 'detached' });
  assert.equal(await dialog.getByLabel('Title').inputValue(), 'Plan');
  assert.equal(await dialog.getByLabel('Content (Markdown)').inputValue(), 'Original text');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await synced(page);
  const after = await serverNote(page, id, before.id);
  assert.deepEqual([after.title, after.content, after.version], [before.title, before.content, before.version], 'nothing was pushed');
  await ctx.close();
});

// The fake sends the draft's first chunks, then the server aborts the
// response. Chromium may hand the page the error before the chunks that came
// just ahead of it (it drops data still in flight when a body fails; Node's
// fetch always gets them — seen on this machine), and which one it does is up
// to its scheduling. Both outcomes are checked for what the user must see:
// the cut said in words, the note untouched until an explicit accept of
// whatever arrived. That the text read before a cut is kept is unit-tested
// on real stream bodies (src/ai/noteDraft.test.ts).
test('a cut answer says so, keeps what arrived, and is saved only when accepted', { skip }, async () => {
  const { ctx, page, id } = await open('cut@example.com', 'Cut board');
  await addNote(page, 'Draft', 'Before');
  await synced(page);
  const { dialog, noteId } = await editNote(page, 'Draft');
  await dialog.getByRole('button', { name: 'Ask AI' }).click();
  const draft = dialog.getByRole('region', { name: 'Ask AI' });
  await draft.getByLabel('What should the AI write in this note?').fill('FAKE-CUT please');
  await draft.getByRole('button', { name: 'Ask' }).click();
  // The fake holds the cut until the page shows what arrived: a browser
  // drops bytes it had not handed to the page when a connection breaks, so
  // only then is "what arrived" known.
  await draft.getByLabel('AI draft').getByText('The first part arrived').waitFor();
  await fake.release('editor-cut');
  const alert = draft.getByRole('alert').filter({ hasText: 'The answer was cut off' });
  await alert.waitFor();
  assert.equal(await alert.innerText(), 'The answer was cut off. What arrived is kept.');
  assert.equal(await dialog.getByLabel('Content (Markdown)').inputValue(), 'Before', 'a cut answer changes nothing by itself');
  assert.match(await draft.getByLabel('AI draft').innerText(), /The first part arrived/);
  assert.equal(await draft.getByRole('button', { name: 'Accept', exact: true }).count(), 0, 'a partial answer is accepted only explicitly');
  await draft.getByRole('button', { name: 'Accept what arrived' }).click();
  await draft.waitFor({ state: 'detached' });
  await synced(page);
  const saved = await serverNote(page, id, noteId);
  assert.deepEqual([saved.title, saved.content], ['Cut answer', 'The first part arrived']);
  await ctx.close();
});

test('analyse a note: a suggestion is anchored, its rewrite shown as a diff and applied', { skip }, async () => {
  const { ctx, page, id } = await open('analyse@example.com', 'Analyse board');
  await addNote(page, 'Login', 'We need a login.\nUsers log in with a password.');
  await synced(page);
  const { dialog, noteId } = await editNote(page, 'Login');
  await dialog.getByRole('button', { name: 'Analyse' }).click();
  const panel = page.getByRole('dialog', { name: 'Analyse "Login"' });
  await panel.getByRole('status').filter({ hasText: '2 suggestions.' }).waitFor();

  const mark = panel.locator('mark[data-suggestion="1"]');
  assert.equal(await mark.count(), 1, 'the first suggestion is marked in the text');
  assert.match(await mark.innerText(), /Users log in with a password\./);
  const one = panel.getByRole('listitem', { name: 'Suggestion 1' });
  const two = panel.getByRole('listitem', { name: 'Suggestion 2' });
  await one.getByText('(marked 1 in the text)').waitFor();
  await two.getByText('About the whole text.').waitFor();
  assert.deepEqual(await seriousViolations(page), []);

  await two.getByRole('button', { name: 'Reject suggestion 2' }).click();
  await two.getByRole('heading', { name: 'Suggestion 2 — rejected' }).waitFor();

  const rewrite = page.waitForRequest((r) => r.url().endsWith('/api/canvas/notes/rewrite'));
  await one.getByRole('button', { name: 'Use one-time codes' }).click();
  const body = (await rewrite).postDataJSON();
  assert.equal(body.selectedText, 'Users log in with a password.');
  assert.equal(body.instruction, 'State that users sign in with a one-time code sent by e-mail');
  const diff = one.locator('pre.ai-diff');
  await diff.waitFor();
  assert.match(await diff.locator('del').allInnerTexts().then((t) => t.join('')), /password/);
  assert.match(await diff.locator('ins').allInnerTexts().then((t) => t.join('')), /one-time code/);
  assert.equal((await serverNote(page, id, noteId)).content, 'We need a login.\nUsers log in with a password.', 'nothing is applied before the user says so');

  await one.getByRole('button', { name: 'Apply the rewrite' }).click();
  await panel.getByRole('status').filter({ hasText: 'Suggestion 1 applied and saved.' }).waitFor();
  const want = 'We need a login.\nUsers sign in with a one-time code sent to their e-mail address; the code expires after 10 minutes.';
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'detached' });
  assert.equal(await dialog.isVisible(), true, 'Escape closes the analysis, not the editor under it');
  assert.equal(await dialog.getByLabel('Content (Markdown)').inputValue(), want);
  await synced(page);
  assert.equal((await serverNote(page, id, noteId)).content, want);
  await ctx.close();
});

test('analyse a work item: the rewrite of its summary is shown as a diff, then saved', { skip }, async () => {
  const { ctx, page, id } = await open('item@example.com', 'Item board');
  await page.getByRole('button', { name: /^Work items/ }).click();
  const tracker = page.getByRole('complementary', { name: 'Work items' });
  await tracker.getByRole('button', { name: '+ Item' }).click();
  const form = tracker.getByRole('form');
  await form.getByLabel('Summary').fill('Login');
  await form.getByRole('button', { name: 'Save' }).click();
  await synced(page);
  await tracker.getByRole('button', { name: /Login: open$/ }).click();
  await form.getByRole('button', { name: 'Analyse' }).click();
  const panel = page.getByRole('dialog', { name: /^Analyse CB-1/ });
  await panel.getByRole('status').filter({ hasText: '1 suggestion.' }).waitFor();
  const one = panel.getByRole('listitem', { name: 'Suggestion 1' });
  await one.getByText('About the whole text.').waitFor();

  const rewrite = page.waitForRequest((r) => r.url().endsWith('/api/canvas/tracker/rewrite'));
  await one.getByRole('button', { name: 'Add acceptance criteria' }).click();
  const body = (await rewrite).postDataJSON();
  assert.equal(body.field, 'summary', 'an item without a description has its summary rewritten');
  assert.equal(body.item.summary, 'Login');
  await one.locator('pre.ai-diff ins').first().waitFor();
  await one.getByRole('button', { name: 'Apply the rewrite' }).click();
  await panel.getByRole('status').filter({ hasText: 'Suggestion 1 applied and saved.' }).waitFor();
  await panel.getByRole('button', { name: 'Close' }).first().click();
  assert.equal(await form.getByLabel('Summary').inputValue(), 'Sign in with a one-time code sent by e-mail');
  await synced(page);
  const res = await page.request.get(`${server.url}/api/boards/${id}/sync?since=0`);
  const items = (await res.json()).trackerItems;
  assert.deepEqual(items.map((i) => i.summary), ['Sign in with a one-time code sent by e-mail']);
  await ctx.close();
});
