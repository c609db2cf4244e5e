import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch, skip } from './harness.mjs';

let server, browser;
before(async () => {
  if (skip) return;
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the app is served at / and at client routes; unknown API paths stay JSON', { skip }, async () => {
  const page = await browser.newPage();
  const res = await page.goto(server.url + '/b/some-board');
  assert.equal(res.status(), 200);
  assert.equal(await page.title(), 'Corkboard');
  const api = await page.request.get(server.url + '/api/nope');
  assert.equal(api.status(), 404);
  assert.deepEqual(await api.json(), { error: 'No such endpoint.' });
  await page.close();
});
