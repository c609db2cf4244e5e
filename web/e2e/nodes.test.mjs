// Two nodes on one PostgreSQL database (docs/scale-out.md): two people,
// each in a browser connected to a different node, see each other's notes
// and pointers live. The database is made for the test and dropped after
// it. Like the Go tests of persist/postgres, this fails when PostgreSQL is
// not reachable, unless CORKBOARD_TEST_PG=skip says to skip it.
import { test, before, after } from 'node:test';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { skip as skipBrowser, startServer, launch, BIN } from './harness.mjs';
import { login, createBoard, addNote, invite } from './helpers.mjs';

const DSN = process.env.CORKBOARD_TEST_PG_DSN || 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable';
const skip = skipBrowser || (process.env.CORKBOARD_TEST_PG === 'skip' ? 'CORKBOARD_TEST_PG=skip' : false);

function psql(sql) {
  execFileSync('psql', ['-v', 'ON_ERROR_STOP=1', '-q', '-d', DSN, '-c', sql], { stdio: 'pipe' });
}

let nodeA, nodeB, browser, dbName, store;
before(async () => {
  if (skip) return;
  dbName = 'corkboard_e2e_' + randomBytes(6).toString('hex');
  psql(`CREATE DATABASE ${dbName}`);
  const u = new URL(DSN);
  u.pathname = '/' + dbName;
  store = u.toString();
  // Node A first: it applies the migrations; B finds them applied (both
  // may start together too, under the advisory lock, as tested in Go).
  nodeA = await startServer({ args: ['-store', store, '-node-id', 'a'] });
  nodeB = await startServer({ args: ['-store', store, '-node-id', 'b'] });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await nodeA?.stop();
  await nodeB?.stop();
  if (dbName) psql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
});

async function userPage(node, email) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, node, email);
  return { ctx, page };
}

test('two people on two nodes see each other\'s notes and pointers live', { skip }, async () => {
  const ada = await userPage(nodeA, 'ada@example.com');
  const id = await createBoard(ada.page, 'Across nodes');
  // The plan is set in the shared database, as docs/scale-out.md says.
  execFileSync(BIN, ['plan', 'set', '-store', store, 'grace@example.com', 'pro'], { stdio: 'pipe' });
  await invite(ada.page, 'grace@example.com');

  // Grace logs in on node B (her code is in B's outbox) and opens the board there.
  const grace = await userPage(nodeB, 'grace@example.com');
  await grace.page.goto(`${nodeB.url}/b/${id}`);
  await grace.page.locator('[data-connection="online"]').waitFor();
  await grace.page.getByRole('button', { name: '+ Note' }).waitFor();

  await addNote(ada.page, 'Pushed on node A');
  await grace.page.locator('.note', { hasText: 'Pushed on node A' }).waitFor({ timeout: 20000 });
  await addNote(grace.page, 'Pushed on node B');
  await ada.page.locator('.note', { hasText: 'Pushed on node B' }).waitFor({ timeout: 20000 });

  // Grace's pointer crosses from B to A, with her name.
  const box = await grace.page.locator('.react-flow__pane').boundingBox();
  for (let i = 0; i < 5; i++) await grace.page.mouse.move(box.x + 300 + i * 20, box.y + 300 + i * 10);
  await ada.page.locator('.cursor:not(.leaving)', { hasText: 'grace@example.com' }).waitFor({ timeout: 20000 });
  await grace.ctx.close();
  await ada.ctx.close();
});
