// Export (issue 24): PNG, SVG and PDF of the board drawn in the browser, with
// the size of the board and the notes in them (the PNG's pixels read back);
// JSON Canvas out of one board and into a new one that then equals it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, synced, shot, menuItem, serverNotes as notesOn, pushNotes as pushTo, DESKTOP } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const serverNotes = (page, id) => notesOn(page, server, id);

// Two notes side by side (220×160 each, 80 px apart) and one larger below:
// the board's box is 0..620 × 0..460, so an export is that plus 32 px a side.
const NOTES = [
  { id: 'a', title: 'Launch plan', content: 'Ship **1.0** by May\n\n- docs\n- site', x: 0, y: 0, color: 'yellow' },
  { id: 'b', title: 'Risks', content: 'Too *little* time', x: 300, y: 0, color: 'blue' },
  { id: 'c', title: 'Decision', content: 'We go.', x: 0, y: 260, w: 620, h: 200, color: 'green', type: 'decision' },
];
const BOX = { w: 620 + 64, h: 460 + 64 };

/** exportAs opens Export…, picks the format and colours, and answers the downloaded file's bytes and name. */
async function exportAs(page, format, colours = 'Light') {
  await menuItem(page, 'Export…');
  const dialog = page.getByRole('dialog', { name: 'Export' });
  await dialog.getByRole('radio', { name: format }).check();
  if (format !== 'JSON Canvas (.canvas, Obsidian Canvas)') await dialog.getByRole('radio', { name: colours }).check();
  const [dl] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Export' }).click()]);
  const path = await dl.path();
  await dialog.waitFor({ state: 'detached' });
  return { bytes: await readFile(path), name: dl.suggestedFilename() };
}

/** pixelsOf reads the PNG's pixels at the points (in board px, scale 2, the export's 32 px margin) in the page. */
async function pixelsOf(page, png, points) {
  return page.evaluate(
    async ({ b64, points }) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const px = (x, y) => [...ctx.getImageData((x + 32) * 2, (y + 32) * 2, 1, 1).data.slice(0, 3)];
      // Dark pixels (text) inside a box: the Markdown was drawn, not just the paper.
      const ink = (x, y, w, h) => {
        const d = ctx.getImageData((x + 32) * 2, (y + 32) * 2, w * 2, h * 2).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 200) n++;
        return n;
      };
      return { at: points.map(([x, y]) => px(x, y)), titleInk: ink(0, 20, 220, 30), bodyInk: ink(0, 50, 220, 60), gapInk: ink(230, 20, 60, 100) };
    },
    { b64: png.toString('base64'), points },
  );
}

const hex = (s) => [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
const near = (a, b) => a.every((v, i) => Math.abs(v - b[i]) <= 3);

test('export PNG, SVG and PDF: the board\'s size, the notes and their Markdown in them, light and dark', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: DESKTOP.viewport, acceptDownloads: true });
  const page = await ctx.newPage();
  await login(page, server, 'export@example.com');
  const id = await createBoard(page, 'Launch');
  await pushTo(page, server, id, NOTES);
  await page.locator('[data-note-id="c"]').waitFor();
  await synced(page);

  // PNG: twice the board's box (sharp on dense screens), the notes' colours where they are, text on them.
  const png = await exportAs(page, 'PNG image');
  assert.equal(png.name, 'Launch.png');
  assert.equal(png.bytes.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual([png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)], [BOX.w * 2, BOX.h * 2]);
  if (process.env.SCREENSHOTS) await writeFile(new URL('../../docs/screenshots/export-board.png', import.meta.url), png.bytes);
  const px = await pixelsOf(page, png.bytes, [
    [110, 150], // a's bottom: yellow paper
    [410, 150], // b's bottom: blue
    [600, 440], // c's bottom right: green
    [260, 100], // between a and b: the light board
  ]);
  const want = [hex('#fff3a3'), hex('#c9e4ff'), hex('#cdf0c5'), hex('#f3f4f6')];
  px.at.forEach((got, i) => assert.ok(near(got, want[i]), `pixel ${i}: ${got}, want ${want[i]}`));
  assert.ok(px.titleInk > 100 && px.bodyInk > 100, `the title and the Markdown are drawn (${px.titleInk}, ${px.bodyInk} dark pixels)`);
  assert.equal(px.gapInk, 0, 'nothing is drawn between the notes');

  // Dark: the board's dark background, the notes the same paper.
  const dark = await exportAs(page, 'PNG image', 'Dark');
  if (process.env.SCREENSHOTS) await writeFile(new URL('../../docs/screenshots/export-board-dark.png', import.meta.url), dark.bytes);
  const dpx = await pixelsOf(page, dark.bytes, [[110, 150], [260, 100]]);
  assert.ok(near(dpx.at[0], hex('#fff3a3')) && near(dpx.at[1], hex('#0f141a')), `dark: ${JSON.stringify(dpx.at)}`);

  // SVG: the box in CSS pixels, the notes' titles and rendered Markdown as text.
  const svg = await exportAs(page, 'SVG image');
  const text = svg.bytes.toString();
  assert.equal(svg.name, 'Launch.svg');
  assert.match(text, new RegExp(`^<svg [^>]*width="${BOX.w}" height="${BOX.h}"`));
  for (const t of ['Launch plan', 'Risks', 'Decision', '<strong>1.0</strong>', '<em>little</em>']) assert.ok(text.includes(t), `the SVG has ${t}`);
  // It opens as an image of that size.
  const dims = await page.evaluate(async (s) => {
    const img = new Image();
    img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(s);
    await img.decode();
    return [img.naturalWidth, img.naturalHeight];
  }, text);
  assert.deepEqual(dims, [BOX.w, BOX.h]);

  // PDF: one page of the box (in points: 0.75 a pixel) holding a JPEG of it.
  const pdf = await exportAs(page, 'PDF document');
  const raw = pdf.bytes.toString('latin1');
  assert.equal(pdf.name, 'Launch.pdf');
  assert.ok(raw.startsWith('%PDF-1.4') && raw.trimEnd().endsWith('%%EOF'));
  assert.ok(raw.includes('/Count 1'), 'one page');
  assert.ok(raw.includes(`/MediaBox [0 0 ${BOX.w * 0.75} ${BOX.h * 0.75}]`), 'the page is the board\'s size');
  assert.ok(raw.includes(`/Width ${BOX.w * 2} /Height ${BOX.h * 2}`), 'the image is the PNG\'s size');
  assert.ok(pdf.bytes.length > 10_000, `the PDF has the picture (${pdf.bytes.length} bytes)`);

  // The selection alone: one note, its box.
  await page.locator('[data-note-id="b"]').click();
  await page.locator('.note.selected[data-note-id="b"]').waitFor();
  await menuItem(page, 'Export…');
  const dialog = page.getByRole('dialog', { name: 'Export' });
  await dialog.getByLabel('What').selectOption('selection');
  await dialog.getByRole('radio', { name: 'SVG image' }).check();
  await shot(page, 'export-dialog');
  const [dl] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Export' }).click()]);
  const sel = (await readFile(await dl.path())).toString();
  assert.equal(dl.suggestedFilename(), 'Launch (selection).svg');
  assert.match(sel, /^<svg [^>]*width="284" height="224"/);
  assert.ok(sel.includes('Risks') && !sel.includes('Launch plan'));
  await ctx.close();
});

test('JSON Canvas: export a board and import it into a new board that then equals it', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: DESKTOP.viewport, acceptDownloads: true });
  const page = await ctx.newPage();
  await login(page, server, 'canvas@example.com');
  const id = await createBoard(page, 'Roadmap');
  await pushTo(page, server, id, NOTES);
  await page.locator('[data-note-id="c"]').waitFor();
  await synced(page);

  const out = await exportAs(page, 'JSON Canvas (.canvas, Obsidian Canvas)');
  assert.equal(out.name, 'Roadmap.canvas');
  const doc = JSON.parse(out.bytes.toString());
  assert.deepEqual(doc.nodes.map((n) => [n.id, n.type, n.width, n.height]), [['a', 'text', 220, 160], ['b', 'text', 220, 160], ['c', 'text', 620, 200]]);
  assert.equal(doc.nodes[0].text, '# Launch plan\n\nShip **1.0** by May\n\n- docs\n- site');

  const dir = await mkdtemp(join(tmpdir(), 'corkboard-canvas-'));
  const file = join(dir, 'Roadmap copy.canvas');
  await writeFile(file, out.bytes);
  await menuItem(page, 'Import JSON Canvas…');
  const dialog = page.getByRole('dialog', { name: 'Import a JSON Canvas file' });
  await dialog.getByLabel('JSON Canvas file').setInputFiles(file);
  await dialog.getByRole('radio', { name: 'A new board' }).check();
  await dialog.getByRole('button', { name: 'Import' }).click();
  await page.waitForURL((u) => u.pathname.startsWith('/b/') && !u.pathname.endsWith(id));
  await page.getByRole('heading', { name: 'Roadmap copy' }).waitFor();
  await page.locator('[data-note-id="c"]').waitFor();
  const copy = new URL(page.url()).pathname.split('/').pop();
  const seen = (ns) => ns.map(({ id, title, content, x, y, w, h, color, type }) => ({ id, title, content, x, y, w, h, color, type })).sort((p, q) => p.id.localeCompare(q.id));
  assert.deepEqual(seen(await serverNotes(page, copy)), seen(await serverNotes(page, id)));

  // A file that is not a canvas is refused with the field named, and nothing is made.
  const bad = join(dir, 'bad.canvas');
  await writeFile(bad, JSON.stringify({ nodes: [{ id: 'x', type: 'text', x: 0, y: 0, width: 0, height: 10 }] }));
  await menuItem(page, 'Import JSON Canvas…');
  await dialog.getByLabel('JSON Canvas file').setInputFiles(bad);
  await dialog.getByRole('radio', { name: 'This board (notes with the same id are replaced)' }).check();
  await dialog.getByRole('button', { name: 'Import' }).click();
  await dialog.getByRole('alert').filter({ hasText: 'nodes[0].width' }).waitFor();
  assert.equal((await serverNotes(page, copy)).length, 3);
  await ctx.close();
});

test('export one frame as PNG and SVG (the frame\'s size), and a PDF with one page per frame', { skip }, async () => {
  const ctx = await browser.newContext({ viewport: DESKTOP.viewport, acceptDownloads: true });
  const page = await ctx.newPage();
  await login(page, server, 'export-frames@example.com');
  const id = await createBoard(page, 'Plan');
  await pushTo(page, server, id, [
    { id: 'in1', title: 'Inside one', x: 40, y: 80 },
    { id: 'in2', title: 'Inside two', x: 1040, y: 80 },
    { id: 'loose', title: 'Loose', x: 0, y: 900 },
  ]);
  // Two frames, each wholly holding its note: a frame's export is its box and 32 px a side.
  const frames = [
    { id: 'f1', title: 'Alpha', x: 0, y: 0, w: 500, h: 300, color: 'blue', locked: false, updatedAt: new Date().toISOString() },
    { id: 'f2', title: 'Beta', x: 1000, y: 0, w: 420, h: 380, color: 'green', locked: false, updatedAt: new Date().toISOString() },
  ];
  const res = await page.request.post(`${server.url}/api/boards/${id}/sync`, { data: { clientVersion: 0, notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [], deleted: [] }, frames: { upserted: frames, deleted: [] } } });
  assert.equal(res.status(), 200, await res.text());
  await page.locator('[data-note-id="in1"]').waitFor();
  await synced(page);
  // Zoom to fit: the canvas draws only what is in view, and the frames came after the notes it opened on.
  await page.keyboard.press('0');
  await page.locator('.frame', { hasText: 'Beta' }).waitFor();

  /** exportFrame exports Frame: title as format, and answers the file. */
  async function exportOf(what, format, perFrame = false) {
    await menuItem(page, 'Export…');
    const dialog = page.getByRole('dialog', { name: 'Export' });
    await dialog.getByRole('radio', { name: format }).check();
    await dialog.getByLabel('What').selectOption({ label: what });
    if (perFrame) await dialog.getByRole('checkbox', { name: 'One page per frame' }).check();
    const [dl] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Export' }).click()]);
    const bytes = await readFile(await dl.path());
    await dialog.waitFor({ state: 'detached' });
    return { bytes, name: dl.suggestedFilename() };
  }

  const png = await exportOf('Frame: Beta', 'PNG image');
  assert.equal(png.name, 'Plan – Beta.png');
  assert.deepEqual([png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)], [(420 + 64) * 2, (380 + 64) * 2], 'the PNG is the frame\'s box (twice, for dense screens)');
  const svg = (await exportOf('Frame: Alpha', 'SVG image')).bytes.toString();
  assert.match(svg, new RegExp(`^<svg [^>]*width="${500 + 64}" height="${300 + 64}"`));
  assert.ok(svg.includes('Inside one') && svg.includes('Alpha'), 'the frame and its note are in it');
  assert.ok(!svg.includes('Inside two') && !svg.includes('Loose') && !svg.includes('Beta'), 'nothing outside the frame is');

  const pdf = (await exportOf('The whole board', 'PDF document', true)).bytes.toString('latin1');
  assert.ok(pdf.includes('/Count 2'), 'one page per frame: two pages');
  for (const f of frames) assert.ok(pdf.includes(`/MediaBox [0 0 ${(f.w + 64) * 0.75} ${(f.h + 64) * 0.75}]`), `a page of ${f.title}'s size`);
  await ctx.close();
});
