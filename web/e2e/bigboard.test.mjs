// End-to-end test of a big board (issue 26): past 500 notes the canvas
// hands xyflow only the notes near the view and draws the rest, and every
// note below 60 %, on a <canvas> layer (canvas/cull.ts, CanvasLayer.tsx).
// A person still clicks, drags, box-selects, fits and walks the notes
// with the keyboard as on a small board.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, pushNotes, serverNotes, synced } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const N = 600;
const COLS = 25;
const at = (i) => ({ x: (i % COLS) * 260, y: Math.floor(i / COLS) * 200 });

/** view is the canvas's pan and zoom, and the pane's place on the page. */
async function view(page) {
  return page.evaluate(() => {
    const m = new DOMMatrixReadOnly(getComputedStyle(document.querySelector('.react-flow__viewport')).transform);
    const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
    return { x: m.e, y: m.f, zoom: m.a, left: r.left, top: r.top, w: r.width, h: r.height };
  });
}
/** onScreen is where a board point is on the page. */
const onScreen = (v, p) => ({ x: v.left + v.x + p.x * v.zoom, y: v.top + v.y + p.y * v.zoom });

test('a big board: notes the layer draws are clicked, dragged, box-selected, fitted and reached by keyboard', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, 'big@example.com');
  const id = await createBoard(page, 'Big');
  const notes = Array.from({ length: N }, (_, i) => ({ id: `n${i}`, title: `Note ${i}`, color: ['yellow', 'blue', 'green', 'pink'][i % 4], ...at(i) }));
  for (let i = 0; i < N; i += 500) await pushNotes(page, server, id, notes.slice(i, i + 500));
  await page.reload();
  await page.getByText(`${N} notes`).waitFor();
  await page.waitForTimeout(300);
  let v = await view(page);
  assert.ok(v.zoom < 0.6, `opens below 60 %: ${v.zoom}`);
  // Below 60 % the layer draws the notes: xyflow holds only the tab stop.
  assert.ok((await page.locator('.react-flow__node').count()) <= 2, 'the notes are not DOM');

  // The notes in view, by column and row from the top-left one.
  const c0 = Math.ceil(-v.x / v.zoom / 260) + 1;
  const r0 = Math.ceil(-v.y / v.zoom / 200) + 1;
  const vis = (dc, dr) => (r0 + dr) * COLS + c0 + dc;
  // A click on a drawn note selects it, and it becomes a DOM note (focusable, read out).
  const k = vis(0, 0);
  let p = onScreen(v, { x: at(k).x + 110, y: at(k).y + 80 });
  await page.mouse.click(p.x, p.y);
  await page.locator(`[data-note-id="n${k}"].selected`).waitFor();
  await page.getByText('1 selected').waitFor();

  // A drag of another drawn note moves it (one push), by what the pointer moved at this zoom.
  const d = vis(3, 1);
  p = onScreen(v, { x: at(d).x + 110, y: at(d).y + 80 });
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let s = 1; s <= 5; s++) await page.mouse.move(p.x + s * 12, p.y + s * 6);
  await page.mouse.up();
  await synced(page);
  const moved = (await serverNotes(page, server, id)).find((n) => n.id === `n${d}`);
  assert.ok(Math.abs(moved.x - (at(d).x + 60 / v.zoom)) <= 1 && Math.abs(moved.y - (at(d).y + 30 / v.zoom)) <= 1, `moved to ${moved.x},${moved.y}`);
  assert.equal((await page.locator(`[data-note-id="n${k}"].selected`).count()), 0, 'the dragged note is the selection now');

  // A box (Shift+drag) takes the drawn notes wholly inside it: two rows of two.
  const a = onScreen(v, { x: at(vis(0, 2)).x - 15, y: at(vis(0, 2)).y - 15 });
  const b = onScreen(v, { x: at(vis(1, 3)).x + 235, y: at(vis(1, 3)).y + 175 });
  await page.keyboard.down('Shift');
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2);
  await page.mouse.move(b.x, b.y);
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.getByText('4 selected').waitFor();

  // Zoom to fit shows the whole board (not only the notes xyflow holds).
  await page.mouse.click(v.left + v.w - 40, v.top + 40); // an empty spot: nothing selected
  await page.keyboard.press('0');
  await page.waitForTimeout(500);
  v = await view(page);
  const last = onScreen(v, { x: at(N - 1).x + 220, y: at(N - 1).y + 160 });
  const first = onScreen(v, at(0));
  assert.ok(first.x >= v.left - 1 && first.y >= v.top - 1 && last.x <= v.left + v.w + 1 && last.y <= v.top + v.h + 1, `fitted: ${JSON.stringify({ first, last, v })}`);

  // The keyboard walks to notes the layer draws: the arrow brings the next note into view, as DOM, focused.
  p = onScreen(v, { x: at(0).x + 110, y: at(0).y + 80 });
  await page.mouse.click(p.x, p.y);
  await page.locator('[data-note-id="n0"].selected').waitFor();
  await page.locator('[data-note-id="n0"]').focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-note-id') === 'n1');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-note-id') === `n${1 + 25}`);
  await ctx.close();
});
