// One traced pan of a big board: where the main thread's time goes per
// pointer move and per frame (a diagnostic beside perf.mjs, not a test).
//   NOTES=2000 [CONNECTORS=2000 FRAMES=50] [ZOOM=0.1|fit] [MOVES=150] [WEB_DIR=...] node perf/trace-pan.mjs
import { startServer, launch } from '../e2e/harness.mjs';
import { seedBoard, zoomTo, paneSpot, startFrames, viewOf, inView, selfTimes } from './board.mjs';

const NOTES = Number(process.env.NOTES || 2000);
const MOVES = Number(process.env.MOVES || 150);
const server = await startServer({ args: process.env.WEB_DIR ? ['-web-dir', process.env.WEB_DIR] : [] });
const browser = await launch();
try {
  const state = await seedBoard(server, browser, { notes: NOTES, connectors: Number(process.env.CONNECTORS || 0), frames: Number(process.env.FRAMES || 0) });
  const c = await browser.newContext({ viewport: { width: 1280, height: 800 }, storageState: { cookies: state.cookies, origins: [] } });
  const page = await c.newPage();
  await page.goto(server.url + '/b/perf');
  await page.waitForFunction(() => performance.getEntriesByName('corkboard:interactive').length > 0, null, { timeout: 30000 });
  // A rule to try (CSSOM: the page's CSP refuses a style tag).
  if (process.env.PERF_CSS) await page.evaluate((rule) => document.styleSheets[0].insertRule(rule, document.styleSheets[0].cssRules.length), process.env.PERF_CSS);
  await page.waitForTimeout(500);
  if (process.env.ZOOM === 'fit') {
    await page.keyboard.press('0');
    await page.waitForTimeout(500);
  } else if (process.env.ZOOM) await zoomTo(page, Number(process.env.ZOOM));
  const v = await viewOf(page);
  console.log(`zoom ${v.zoom.toFixed(3)}, ${inView(v, NOTES)} notes in view, ${await page.locator('.react-flow__node').count()} xyflow nodes drawn`);
  const start = await paneSpot(page, 'pane');
  const cdp = await c.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await cdp.send('Profiler.start');
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  await startFrames(page);
  for (let i = 1; i <= MOVES; i++) await page.mouse.move(start.x + Math.sin(i / 10) * 200, start.y + (1 - Math.cos(i / 10)) * 100);
  await page.mouse.up();
  const frames = await page.evaluate(() => window.__frames.splice(0));
  const buf = await browser.stopTracing();
  const { profile } = await cdp.send('Profiler.stop');
  console.log(`${((frames.length - 1) / ((frames.at(-1) - frames[0]) / 1000)).toFixed(1)} fps over ${MOVES} moves`);
  const { self, dt } = selfTimes(profile);
  // WHO=name: the callers of a function (its sampled self time by call chain).
  if (process.env.WHO) {
    const parent = new Map();
    for (const n of profile.nodes) for (const ch of n.children || []) parent.set(ch, n);
    const chains = new Map();
    for (const n of profile.nodes) {
      if (n.callFrame.functionName !== process.env.WHO) continue;
      const names = [];
      for (let p = parent.get(n.id); p && names.length < 8; p = parent.get(p.id)) names.push(p.callFrame.functionName || '(anon)');
      const k = names.join(' < ');
      chains.set(k, (chains.get(k) || 0) + (dt.get(n.id) || 0));
    }
    console.log([...chains].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, ms]) => `  ${ms.toFixed(0)} ms ${k}`).join('\n'));
  }
  console.log('self time (sampled):\n' + [...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([n, ms]) => `  ${ms.toFixed(0)} ms  ${n}`).join('\n'));
  const events = JSON.parse(buf.toString()).traceEvents;
  const byName = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur) continue;
    if (!['FunctionCall', 'EventDispatch', 'UpdateLayoutTree', 'Layout', 'Paint', 'PrePaint', 'Layerize', 'RasterTask', 'Commit', 'FireAnimationFrame', 'HitTest', 'MinorGC', 'MajorGC', 'ThreadControllerImpl::RunTask', 'ProxyMain::BeginMainFrame'].includes(e.name)) continue;
    byName.set(e.name, (byName.get(e.name) || 0) + e.dur / 1000);
  }
  console.log('trace totals:\n' + [...byName].sort((a, b) => b[1] - a[1]).map(([n, ms]) => `  ${n} ${ms.toFixed(0)} ms`).join('\n'));
} finally {
  await browser.close();
  await server.stop();
}
