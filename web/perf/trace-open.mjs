// One traced open of a 2,000-note board: where the main thread's time goes
// (a diagnostic beside perf.mjs, not a test). NOTES=2000 [WEB_DIR=<a build>] node perf/trace-open.mjs
import { startServer, launch } from '../e2e/harness.mjs';
import { seedBoard, selfTimes } from './board.mjs';
const NOTES = Number(process.env.NOTES || 2000);
const server = await startServer({ args: process.env.WEB_DIR ? ['-web-dir', process.env.WEB_DIR] : [] });
const browser = await launch();
try {
  const state = await seedBoard(server, browser, { notes: NOTES });
  const c = await browser.newContext({ viewport: { width: 1280, height: 800 }, storageState: { cookies: state.cookies, origins: [] } });
  const page = await c.newPage();
  const cdp = await c.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  await page.goto(server.url + '/b/perf');
  await page.waitForFunction(() => performance.getEntriesByName('corkboard:interactive').length > 0, null, { timeout: 30000 });
  const buf = await browser.stopTracing();
  const { profile } = await cdp.send('Profiler.stop');
  const { self } = selfTimes(profile);
  console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([n, ms]) => `${ms.toFixed(0)} ms  ${n}`).join('\n'));
  const events = JSON.parse(buf.toString()).traceEvents;
  const byName = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur) continue;
    if (!['FunctionCall', 'EvaluateScript', 'v8.compile', 'ParseHTML', 'UpdateLayoutTree', 'Layout', 'Paint', 'PrePaint', 'Layerize', 'RasterTask', 'CompositeLayers', 'Commit', 'TimerFire', 'FireAnimationFrame', 'EventDispatch', 'RunMicrotasks', 'GCEvent', 'MinorGC', 'MajorGC', 'HitTest', 'IntersectionObserverController::computeIntersections', 'ResizeObserverController::DeliverObservations'].includes(e.name)) continue;
    byName.set(e.name, (byName.get(e.name) || 0) + e.dur / 1000);
  }
  console.log([...byName].sort((a, b) => b[1] - a[1]).map(([n, ms]) => `${n} ${ms.toFixed(0)} ms`).join('\n'));
  console.log(await page.evaluate(() => performance.getEntriesByType('mark').map((m) => `${m.name} ${Math.round(m.startTime)}`).join(', ')));
  console.log('nodes', await page.locator('.react-flow__node').count());
} finally {
  await browser.close();
  await server.stop();
}
