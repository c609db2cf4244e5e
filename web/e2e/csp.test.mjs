// End-to-end test of the Content-Security-Policy (issue 21): the app shell
// carries the strict policy and nosniff, JSON answers carry nosniff, and the
// app works under the policy with no violation reported: log in, open a
// board, add a note seen live by a second person, a chat with the AI panel
// (streamed answer rendered as Markdown), the history panel (a lazy chunk).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skipAI, withAIServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, invite, menuItem } from './helpers.mjs';

let server, browser;
withAIServerAndBrowser(({ server: s, browser: b }) => {
  server = s;
  browser = b;
});

/**
 * watched opens a page whose CSP violations are collected, from the
 * securitypolicyviolation event (set up before any script of the app runs)
 * and from the console, where Chromium reports them too.
 */
async function watched(viewport = { width: 1400, height: 900 }) {
  const ctx = await browser.newContext({ viewport });
  await ctx.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(`${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`));
  });
  const page = await ctx.newPage();
  const console = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) console.push(m.text());
  });
  const violations = async () => [...(await page.evaluate(() => window.__cspViolations ?? [])), ...console];
  return { ctx, page, violations };
}

test('the app shell has a strict CSP and nosniff, and the app works under it with no violation', { skip: skipAI }, async () => {
  const shell = await fetch(`${server.url}/b/anything`);
  const csp = shell.headers.get('content-security-policy') ?? '';
  for (const d of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'"]) {
    assert.ok(csp.includes(d), `Content-Security-Policy ${JSON.stringify(csp)} lacks ${d}`);
  }
  assert.equal(shell.headers.get('x-content-type-options'), 'nosniff');
  const json = await fetch(`${server.url}/api/auth/me`);
  assert.equal(json.status, 401);
  assert.equal(json.headers.get('x-content-type-options'), 'nosniff');

  const ada = await watched();
  await login(ada.page, server, 'ada-csp@example.com');
  const boardId = await createBoard(ada.page, 'CSP board');
  await invite(ada.page, 'grace-csp@example.com');

  const grace = await watched();
  await login(grace.page, server, 'grace-csp@example.com');
  await grace.page.goto(`${server.url}/b/${boardId}`);
  await grace.page.locator('[data-connection="online"]').waitFor(); // the live socket under connect-src 'self'

  await addNote(ada.page, 'Under the policy', '| a | b |\n|--:|:-:|\n| 1 | 2 |');
  await grace.page.locator('.note', { hasText: 'Under the policy' }).waitFor();

  // The AI panel: a streamed chat answer (fetch, zod, markdown-it).
  await ada.page.getByRole('button', { name: 'AI assistant' }).click();
  const panel = ada.page.getByRole('complementary', { name: 'AI assistant' });
  await panel.getByText(/AI credits? left this month/).waitFor();
  await panel.getByRole('textbox').fill('Add a launch checklist');
  await panel.getByRole('button', { name: 'Send' }).click();
  await ada.page.locator('.note', { hasText: 'Launch checklist' }).waitFor();
  await grace.page.locator('.note', { hasText: 'Launch checklist' }).waitFor();

  // The history panel is a chunk of its own, with its own stylesheet.
  await menuItem(grace.page, 'Deleted notes');
  await grace.page.getByRole('dialog').or(grace.page.getByRole('complementary', { name: /deleted/i })).first().waitFor();

  assert.deepEqual(await ada.violations(), []);
  assert.deepEqual(await grace.violations(), []);
  await ada.ctx.close();
  await grace.ctx.close();
});
