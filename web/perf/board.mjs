// The perf scripts' shared parts: a board of NOTES sticky notes in a grid
// (and CONNECTORS, FRAMES), logged in through the API; a view at a zoom;
// a pan measured by requestAnimationFrame.

/** GRID is the seeded notes' pitch: 220×160 notes, 40 px apart. */
export const GRID = { dx: 260, dy: 200 };

/**
 * seedBoard logs perf@example.com in, fills board "perf" and returns the
 * storage state (cookies) for fresh contexts.
 */
export async function seedBoard(server, browser, { notes, connectors = 0, frames = 0 }) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const req = ctx.request;
  await req.post(server.url + '/api/auth/send-otp', { data: { email: 'perf@example.com' } });
  const code = await server.code('perf@example.com');
  await req.post(server.url + '/api/auth/verify-otp', { data: { email: 'perf@example.com', code } });
  await req.post(server.url + '/api/boards/perf/access');
  const cols = Math.ceil(Math.sqrt(notes));
  for (let start = 0; start < notes; start += 500) {
    const upserted = [];
    for (let i = start; i < Math.min(notes, start + 500); i++) {
      upserted.push({
        id: `n${i}`,
        title: `Note ${i}`,
        content: `Some **Markdown** for note ${i}.\n\n- a point\n- another point with a [link](https://example.com/${i})`,
        x: (i % cols) * GRID.dx,
        y: Math.floor(i / cols) * GRID.dy,
        color: ['yellow', 'blue', 'green', 'pink'][i % 4],
        type: 'sticky',
        updatedAt: new Date().toISOString(),
      });
    }
    const r = await req.post(server.url + '/api/boards/perf/sync', {
      data: { clientVersion: 0, board: { name: 'Perf', updatedAt: new Date().toISOString() }, notes: { upserted, deleted: [] }, trackerItems: { upserted: [], deleted: [] } },
    });
    if (r.status() !== 200) throw new Error(`push: ${r.status()} ${await r.text()}`);
  }
  // Connector i joins note i to note i+1; frames go around blocks of 4 × 2 notes (issue 24).
  const at = new Date().toISOString();
  const fr = Array.from({ length: frames }, (_, k) => {
    const i = (k * 2 * cols) % notes;
    return { id: `f${k}`, title: `Frame ${k}`, x: (i % cols) * GRID.dx - 20, y: Math.floor(i / cols) * GRID.dy - 40, w: GRID.dx * 4, h: GRID.dy * 2, color: 'gray', updatedAt: at };
  });
  const co = Array.from({ length: connectors }, (_, i) => ({ id: `c${i}`, from: `n${i}`, to: `n${(i + 1) % notes}`, label: '', style: 'arrow', color: 'gray', updatedAt: at }));
  for (let start = 0; start < Math.max(fr.length, co.length); start += 500) {
    const r = await req.post(server.url + '/api/boards/perf/sync', {
      data: { clientVersion: 0, notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [], deleted: [] }, frames: { upserted: fr.slice(start, start + 500), deleted: [] }, connectors: { upserted: co.slice(start, start + 500), deleted: [] } },
    });
    if (r.status() !== 200) throw new Error(`push: ${r.status()} ${await r.text()}`);
  }
  const state = await ctx.storageState();
  await ctx.close();
  return state;
}

/** viewOf reads the canvas's pan and zoom from xyflow's viewport transform. */
export async function viewOf(page) {
  return page.evaluate(() => {
    const m = new DOMMatrixReadOnly(getComputedStyle(document.querySelector('.react-flow__viewport')).transform);
    const pane = document.querySelector('.react-flow__pane').getBoundingClientRect();
    return { x: m.e, y: m.f, zoom: m.a, w: pane.width, h: pane.height };
  });
}

/** inView counts the seeded grid's notes that the view shows (wholly or in part). */
export function inView(v, notes) {
  const cols = Math.ceil(Math.sqrt(notes));
  const x0 = -v.x / v.zoom;
  const y0 = -v.y / v.zoom;
  const x1 = x0 + v.w / v.zoom;
  const y1 = y0 + v.h / v.zoom;
  let n = 0;
  for (let i = 0; i < notes; i++) {
    const x = (i % cols) * GRID.dx;
    const y = Math.floor(i / cols) * GRID.dy;
    if (x + 220 > x0 && x < x1 && y + 160 > y0 && y < y1) n++;
  }
  return n;
}

/**
 * zoomTo fits the board ("0") and then zooms in with the wheel at the
 * pane's middle until the zoom is within 4 % of target (a far view such as
 * the one the issue-26 comparison used).
 */
export async function zoomTo(page, target) {
  await page.keyboard.press('0');
  await page.waitForTimeout(400);
  const pane = await page.evaluate(() => {
    const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  });
  await page.mouse.move(pane.x, pane.y);
  for (let k = 0; k < 60; k++) {
    const v = await viewOf(page);
    if (Math.abs(v.zoom / target - 1) < 0.04) break;
    // xyflow zooms by 2^(-deltaY × 0.002) per wheel event: the step that reaches the target, bounded.
    const dy = Math.max(-200, Math.min(200, -Math.log2(target / v.zoom) / 0.002));
    await page.mouse.wheel(0, dy);
    await page.waitForTimeout(120);
  }
  await page.waitForTimeout(400);
  return viewOf(page);
}

/** startFrames counts animation frames from now on (window.__frames). */
export async function startFrames(page) {
  await page.evaluate(() => {
    window.__frames = [];
    const tick = (t) => {
      window.__frames.push(t);
      if (window.__frames.length < 10000) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

/**
 * paneSpot finds an empty spot of the pane (a pan starts there) or a note
 * (a move): a DOM note, else the middle of a seeded grid note the canvas
 * layer draws (given notes, the board's count).
 */
export async function paneSpot(page, what, notes = 0) {
  if (what === 'note' && notes && !(await page.locator('.note').count())) {
    const v = await viewOf(page);
    const pane = await page.evaluate(() => {
      const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
      return { x: r.left, y: r.top };
    });
    const cols = Math.ceil(Math.sqrt(notes));
    for (let i = 0; i < notes; i++) {
      const x = ((i % cols) * GRID.dx + 110) * v.zoom + v.x;
      const y = (Math.floor(i / cols) * GRID.dy + 80) * v.zoom + v.y;
      if (x > 300 && y > 100 && x < v.w - 300 && y < v.h - 200) return { x: pane.x + x, y: pane.y + y };
    }
    return null;
  }
  return page.evaluate((what) => {
    const pane = document.querySelector('.react-flow__pane').getBoundingClientRect();
    for (let y = pane.top + 60; y < pane.bottom - 20; y += 7) {
      for (let x = pane.left + 20; x < pane.right - 220; x += 7) {
        const el = document.elementFromPoint(x, y);
        if (what === 'pane' ? el?.classList.contains('react-flow__pane') || el?.tagName === 'CANVAS' : el?.closest('.note')) return { x, y };
      }
    }
    return null;
  }, what);
}

/**
 * selfTimes sums a CPU profile's sampled self time by function (name, file,
 * line and column), in ms; dt is the self time by profile node id.
 */
export function selfTimes(profile) {
  const self = new Map();
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) || 0) + (profile.timeDeltas[i] || 0) / 1000);
  for (const n of profile.nodes) {
    const f = n.callFrame;
    const k = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}:${f.columnNumber}`;
    self.set(k, (self.get(k) || 0) + (dt.get(n.id) || 0));
  }
  return { self, dt };
}
