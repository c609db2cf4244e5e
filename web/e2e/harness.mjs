// Test harness for the end-to-end tests: starts the real corkboard binary on
// a temporary data folder and a free port, launches Debian's Chromium through
// playwright-core (or Debian's Firefox ESR through puppeteer-core, over
// WebDriver BiDi), and reads login codes from <data>/outbox/.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const BIN = process.env.CORKBOARD_BIN || '';
/** skip is a reason to skip the e2e tests, or false. */
export const skip = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM}`
  : !BIN || !existsSync(BIN)
    ? 'CORKBOARD_BIN is not a built corkboard binary (make test builds it)'
    : false;

export const FAKE_OLLAMA_BIN = process.env.CORKBOARD_FAKEOLLAMA_BIN || '';
/** FAKE_OLLAMA_SCRIPT is the script whose rules answer every AI feature (docs/ai.md). */
export const FAKE_OLLAMA_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'ollama', 'script.json');
/** skipAI is a reason to skip the AI e2e tests (they need the fake Ollama too), or false. */
export const skipAI =
  skip ||
  (!FAKE_OLLAMA_BIN || !existsSync(FAKE_OLLAMA_BIN)
    ? 'CORKBOARD_FAKEOLLAMA_BIN is not a built corkboard-fakeollama binary (make test-web builds it into .cache/corkboard-fakeollama)'
    : false);

/**
 * startFakeOllama runs the fake Ollama (cmd/corkboard-fakeollama) with the
 * given script of rules; it resolves once the fake listens, to {url, log(),
 * stop()}. Pass url to startServer as opts.ollama.
 */
export async function startFakeOllama(scriptPath = FAKE_OLLAMA_SCRIPT, models = 'qwen3:4b') {
  const proc = spawn(FAKE_OLLAMA_BIN, ['-script', scriptPath, '-models', models], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (b) => (log += b));
  proc.stderr.on('data', (b) => (log += b));
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('fake ollama did not start:\n' + log)), 15000);
    const check = () => {
      const m = log.match(/fake ollama listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    };
    proc.stdout.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`fake ollama exited ${code}:\n${log}`));
    });
  });
  return {
    url,
    /** log is what the fake printed: one line per request naming the rule that answered it. */
    log: () => log,
    /** answered resolves once the rule named rule has answered n requests in all, as the fake prints them. */
    answered(rule, n) {
      const count = () => log.split(`answered by rule "${rule}"`).length - 1;
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => done(new Error(`fake ollama: rule ${rule} answered ${count()} times, not ${n}:\n${log}`)), 15000);
        const check = () => count() >= n && done();
        const done = (err) => {
          clearTimeout(t);
          proc.stdout.off('data', check);
          proc.stderr.off('data', check);
          if (err) reject(err);
          else resolve();
        };
        proc.stdout.on('data', check);
        proc.stderr.on('data', check);
        check();
      });
    },
    /** release lets a reply waiting at the named gate (a rule's "gate") go on. */
    async release(gate) {
      const res = await fetch(`${url}/fake/gates/${encodeURIComponent(gate)}`, { method: 'POST' });
      if (!res.ok) throw new Error(`fake ollama: release ${gate}: ${res.status}`);
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
      }
    },
  };
}

export const FIREFOX = process.env.FIREFOX || '/usr/bin/firefox-esr';
/** skipFirefox is a reason to skip the Firefox e2e tests, or false. */
export const skipFirefox = !existsSync(FIREFOX)
  ? `no Firefox at ${FIREFOX}`
  : !BIN || !existsSync(BIN)
    ? 'CORKBOARD_BIN is not a built corkboard binary (make test builds it)'
    : false;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * startServer runs corkboard on a fresh data folder and a free port (or on
 * opts.data and opts.port, to restart a server), with opts.args added and
 * Ollama at opts.ollama (default: a closed port, so AI routes answer 503);
 * stop() ends it and deletes the data folder unless told to keep it.
 */
export async function startServer(opts = {}) {
  const data = opts.data || mkdtempSync(join(tmpdir(), 'corkboard-e2e-'));
  const port = opts.port || (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(BIN, ['-addr', `127.0.0.1:${port}`, '-data', data, '-public-url', url, '-snapshot-interval', '0', '-ollama', opts.ollama || 'http://127.0.0.1:9', ...(opts.args || [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (b) => (log += b));
  proc.stderr.on('data', (b) => (log += b));
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('corkboard did not start:\n' + log)), 15000);
    const check = () => {
      if (log.includes('corkboard listening')) {
        clearTimeout(t);
        resolve();
      }
    };
    proc.stdout.on('data', check);
    proc.once('exit', (code) => reject(new Error(`corkboard exited ${code}:\n${log}`)));
  });
  return {
    url,
    data,
    port,
    log: () => log,
    /** setPlan runs `corkboard plan set` through the admin socket. */
    setPlan(email, plan) {
      execFileSync(BIN, ['plan', 'set', '-data', data, email, plan], { stdio: 'pipe' });
    },
    /** code waits for the newest login code mailed to email. */
    async code(email, after = 0) {
      const dir = join(data, 'outbox');
      for (let i = 0; i < 100; i++) {
        if (existsSync(dir)) {
          const files = readdirSync(dir).sort();
          for (const f of files.slice(after).reverse()) {
            const eml = readFileSync(join(dir, f), 'utf8');
            if (eml.toLowerCase().includes(`to: ${email}`) || eml.includes(`<${email}>`)) {
              const m = eml.match(/login code: (\d{6})/);
              if (m) return m[1];
            }
          }
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no login code for ${email} in ${dir}`);
    },
    /** invitation waits for the invitation mailed to email and returns its body, decoded. */
    async invitation(email) {
      const dir = join(data, 'outbox');
      for (let i = 0; i < 100; i++) {
        for (const f of existsSync(dir) ? readdirSync(dir) : []) {
          const eml = readFileSync(join(dir, f), 'utf8');
          if (!eml.includes(`<${email}>`) || !/^Subject: .*invited you/m.test(eml)) continue;
          const [head, ...rest] = eml.split(/\r?\n\r?\n/);
          const body = rest.join('\n\n');
          return /quoted-printable/i.test(head) ? decodeQP(body) : body;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no invitation for ${email} in ${dir}`);
    },
    outboxCount() {
      const dir = join(data, 'outbox');
      return existsSync(dir) ? readdirSync(dir).length : 0;
    },
    async stop({ keepData = false } = {}) {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
      }
      if (!keepData) rmSync(data, { recursive: true, force: true });
    },
  };
}

/** decodeQP undoes quoted-printable (RFC 2045), which long mail lines come in. */
function decodeQP(s) {
  const bytes = [];
  const text = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === '=' && text.slice(i + 1, i + 3);
    if (hex && /^[0-9A-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i]));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** launch starts Debian's Chromium headless. */
export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

// withServerAndBrowser starts one server and one browser for a test file
// (before its tests, unless the suite is skipped) and stops both after them;
// ready receives them once they are up.
export function withServerAndBrowser(ready) {
  let server, browser;
  before(async () => {
    if (skip) return;
    server = await startServer();
    browser = await launch();
    ready(server, browser);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
}

// withAIServerAndBrowser is withServerAndBrowser for the AI tests: it also
// starts the fake Ollama with the rules of scriptPath, before a server that
// asks it (unless the AI suite is skipped), and stops it last; ready
// receives {fake, server, browser} once they are up.
export function withAIServerAndBrowser(ready, scriptPath = FAKE_OLLAMA_SCRIPT) {
  let fake, server, browser;
  before(async () => {
    if (skipAI) return;
    fake = await startFakeOllama(scriptPath);
    server = await startServer({ ollama: fake.url });
    browser = await launch();
    ready({ fake, server, browser });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await fake?.stop();
  });
}

/**
 * launchFirefox starts Debian's Firefox ESR headless through puppeteer-core
 * (WebDriver BiDi). playwright-core cannot drive it: its Firefox wants
 * Playwright's patched build, and its BiDi channel ("moz-firefox") sends
 * commands (emulation.setMediaFeaturesOverride) that Firefox 153 ESR does
 * not know, so every newContext() fails.
 */
export function launchFirefox({ coarse = false } = {}) {
  return puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true, extraPrefsFirefox: coarse ? COARSE_POINTER_PREFS : {} });
}

/**
 * COARSE_POINTER_PREFS make Firefox report a touch screen's pointer to CSS:
 * `(pointer: coarse)` and `(hover: none)` match (the bits are Firefox's
 * pointer capabilities: 1 coarse, 2 fine, 4 hover). Over BiDi there is no
 * touch or media emulation (puppeteer's hasTouch and emulateMediaFeatures
 * need CDP), so this is how the coarse-pointer CSS is checked in Firefox.
 */
const COARSE_POINTER_PREFS = { 'ui.primaryPointerCapabilities': 1, 'ui.allPointerCapabilities': 1 };

// withServerAndFirefox is withServerAndBrowser for Firefox.
export function withServerAndFirefox(ready) {
  let server, browser;
  before(async () => {
    if (skipFirefox) return;
    server = await startServer();
    browser = await launchFirefox();
    ready(server, browser);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
}
