// What the Firefox tests share (Debian's firefox-esr, driven by
// puppeteer-core over WebDriver BiDi). Puppeteer has no getByLabel or
// getByRole, so these find controls the way a user does: a label's text, a
// button's text or label.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// Poll on a timer rather than on animation frames (the default), which a
// headless page that paints nothing need not run.
export const POLL = { polling: 50 };

/** control waits for the form control labelled text. */
export async function control(page, text) {
  const h = await page.waitForFunction(
    (t) => [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === t && l.control)?.control,
    POLL,
    text,
  );
  return h.asElement();
}

/** fill types value into the control labelled text. */
export async function fill(page, text, value) {
  const el = await control(page, text);
  await el.click({ count: 3 });
  await el.type(value);
  return el;
}

/** press clicks the enabled button whose text (or aria-label) is name. */
export async function press(page, name, within = 'body') {
  const h = await page.waitForFunction(
    (n, w) =>
      [...document.querySelectorAll(`${w} button`)].find(
        (b) => !b.disabled && (b.textContent.trim() === n || b.getAttribute('aria-label') === n),
      ),
    POLL,
    name,
    within,
  );
  await h.asElement().click();
}

/** see waits until text is in the page (in selector when given). */
export async function see(page, text, selector = 'body') {
  await page.waitForFunction((t, s) => [...document.querySelectorAll(s)].some((e) => e.textContent.includes(t)), POLL, text, selector);
}

/** login logs email in through the login form, reading the code from server's outbox. */
export async function login(page, server, email) {
  await page.goto(server.url + '/');
  await fill(page, 'E-mail address', email);
  const before = server.outboxCount();
  await press(page, 'Send me a code');
  const code = await server.code(email, before);
  const field = await control(page, '6-digit code');
  assert.equal(await field.evaluate((e) => e.getAttribute('autocomplete')), 'one-time-code');
  await field.type(code);
  await press(page, 'Log in');
  await see(page, 'Your boards', 'h1, h2');
}

/** userPage logs email in, in a browser context of its own, at 1280×800. */
export async function userPage(browser, server, email) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await login(page, server, email);
  return { ctx, page };
}

/** createBoard creates a board from the board list and returns its ID once it is open and online. */
export async function createBoard(page, name) {
  await fill(page, 'Name', name);
  await press(page, 'Create board');
  await page.waitForSelector('[data-connection="online"]');
  await see(page, name, 'h1, h2');
  return new URL(page.url()).pathname.split('/').pop();
}

/** addNote adds a note with + Note, titled in place. */
export async function addNote(page, title) {
  await press(page, '+ Note');
  await fill(page, 'Title', title);
  await press(page, 'Save', 'form.inplace');
  await see(page, title, '.note');
}

/** synced waits until no edit waits to be sent. */
export const synced = (page) => page.waitForSelector('[data-pending="0"]');

/** api calls the server from the page, with its session. */
export function api(page, method, path, body) {
  return page.evaluate(
    async (m, p, b) => {
      const res = await fetch(p, { method: m, headers: b ? { 'Content-Type': 'application/json' } : {}, body: b ? JSON.stringify(b) : undefined });
      return { status: res.status, body: await res.json() };
    },
    method,
    path,
    body,
  );
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * contrastViolations runs axe-core's colour-contrast rule in the page and
 * lists what fails. The script goes in through the driver (not a <script>
 * tag, which the page's CSP refuses).
 */
export async function contrastViolations(page) {
  await page.evaluate(axeSource);
  const v = await page.evaluate(async () => (await window.axe.run(document, { runOnly: ['color-contrast'] })).violations);
  return v.map((x) => `${x.id}: ${x.nodes.map((n) => `${n.target.join(' ')} ${n.any.map((a) => a.message).join(' ')}`).join('; ')}`);
}
