// The <canvas> layer under xyflow's notes (issue 26): it paints the dot
// grid and the scene of layer.ts (the rows xyflow is not given) on every
// change of the view,
// and useWindow says which rows xyflow is given (cull.ts), taking a new
// window only when the view leaves the last one.
import { memo, useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';
import type { Editor } from '../editor/Editor';
import { useStoreApi } from '@xyflow/react';
import { levelOf, sameRows, stale, TITLE_FONT, viewOf, windowFor, type Window } from './cull';
import { dotsOf, lineInView, NOTE_LINE, type Scene } from './layer';
import type { Rect } from '../editor/geometry';

type Transform = [number, number, number];

/** useStableRows is a map of rows, the previous one while it holds the same row objects (cull.ts's sameRows). */
export function useStableRows<V>(m: ReadonlyMap<string, V>): ReadonlyMap<string, V> {
  const last = useRef(m);
  if (!sameRows(last.current, m)) last.current = m;
  return last.current;
}

/**
 * useWindow is the window of rows handed to xyflow: taken from the view at
 * mount, and again only when the view leaves it (a store subscription, so
 * a pan inside it renders nothing).
 */
export function useWindow(): Window {
  const store = useStoreApi();
  const [win, setWin] = useState<Window>(() => {
    const s = store.getState();
    return windowFor(viewOf(s.transform, s.width || window.innerWidth, s.height || window.innerHeight));
  });
  const current = useRef(win);
  current.current = win;
  useEffect(() => {
    const check = (s: { transform: Transform; width: number; height: number }) => {
      if (!s.width || !s.height) return;
      const v = viewOf(s.transform, s.width, s.height);
      if (stale(current.current, v)) {
        current.current = windowFor(v);
        setWin(current.current);
      }
    };
    check(store.getState());
    return store.subscribe((s, prev) => {
      if (s.transform !== prev.transform || s.width !== prev.width || s.height !== prev.height) check(s);
    });
  }, [store]);
  return win;
}

/** Look is what the layer reads from the page's style: the accent and the dots' colour (light or dark). */
interface Look {
  scheme: string | undefined;
  accent: string;
  dots: string;
}

/** lookOf reads the page's colours once per scheme (layout/theme.ts sets data-scheme on <html>). */
function lookOf(last: Look | null, el: Element): Look {
  const scheme = document.documentElement.dataset.scheme;
  if (last && last.scheme === scheme) return last;
  const css = getComputedStyle(el);
  return { scheme, accent: css.getPropertyValue('--accent').trim() || '#0b57d0', dots: css.getPropertyValue('--canvas-dots').trim() || '#91919a' };
}

/** Dots is the dot grid's pattern, made once per zoom and colour. */
interface Dots {
  key: string;
  pattern: CanvasPattern | null;
  gap: number;
}

/**
 * paintDots fills the layer with the board's dot grid, where xyflow's
 * Background drew it as an SVG pattern (re-rastered over the whole screen
 * on every frame of a pan: most of a pan's raster time). Returns whether it drew.
 */
function paintDots(ctx: CanvasRenderingContext2D, t: Transform, w: number, h: number, dpr: number, colour: string, cache: { current: Dots | null }): boolean {
  const [tx, ty, zoom] = t;
  const d = dotsOf(zoom);
  if (!d) return false;
  const key = `${zoom} ${dpr} ${colour}`;
  if (cache.current?.key !== key) {
    const size = Math.max(1, Math.round(d.gap * dpr));
    const tile = document.createElement('canvas');
    tile.width = size;
    tile.height = size;
    const tc = tile.getContext('2d');
    if (tc) {
      tc.fillStyle = colour;
      tc.beginPath();
      tc.arc(size / 2, size / 2, (d.d * dpr) / 2, 0, Math.PI * 2);
      tc.fill();
    }
    cache.current = { key, pattern: ctx.createPattern(tile, 'repeat'), gap: size / dpr };
  }
  const p = cache.current.pattern;
  if (!p) return false;
  // A dot sits in the middle of each gap, as xyflow's pattern put them (offset half a gap).
  const g = cache.current.gap;
  p.setTransform(new DOMMatrix([1, 0, 0, 1, (((tx - g / 2) % g) + g) % g * dpr, (((ty - g / 2) % g) + g) % g * dpr]));
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = p;
  ctx.fillRect(0, 0, w * dpr, h * dpr);
  return true;
}

/**
 * TextFit cuts titles to a width with an ellipsis. A text's width is summed
 * from its characters' widths, measured once per font and character
 * (measuring each title took most of a 10,000-note open's layer time;
 * kerning is left out), and each cut is kept: the same titles are drawn on
 * every frame.
 */
class TextFit {
  private widths = new Map<string, number>();
  private cuts = new Map<string, string>();

  private width(ctx: CanvasRenderingContext2D, chars: readonly string[]): number {
    let w = 0;
    for (const ch of chars) {
      const key = ctx.font + ch;
      let cw = this.widths.get(key);
      if (cw === undefined) {
        cw = ctx.measureText(ch).width;
        this.widths.set(key, cw);
      }
      w += cw;
    }
    return w;
  }

  fit(ctx: CanvasRenderingContext2D, text: string, w: number): string {
    const key = `${ctx.font}\u0000${w}\u0000${text}`;
    let out = this.cuts.get(key);
    if (out !== undefined) return out;
    const chars = [...text];
    out = text;
    if (this.width(ctx, chars) > w) {
      const dots = this.width(ctx, ['…']);
      let n = 0;
      let used = 0;
      for (const ch of chars) {
        const cw = this.width(ctx, [ch]);
        if (used + cw + dots > w) break;
        used += cw;
        n++;
      }
      out = chars.slice(0, n).join('') + '…';
    }
    if (this.cuts.size > 20000) this.cuts.clear();
    this.cuts.set(key, out);
    return out;
  }
}

/** anyInView says whether a scene has something in a view (nearer in, the layer is blank: everything there is DOM). */
function anyInView(scene: Scene, view: Rect): boolean {
  const vx1 = view.x + view.w;
  const vy1 = view.y + view.h;
  const inView = (x: number, y: number, rw: number, rh: number) => x <= vx1 && x + rw >= view.x && y <= vy1 && y + rh >= view.y;
  for (const f of scene.frames) if (inView(f.rect.x, f.rect.y, f.rect.w, f.rect.h)) return true;
  for (const flat of scene.notes.values()) for (let i = 0; i < flat.length; i += 4) if (inView(flat[i], flat[i + 1], flat[i + 2], flat[i + 3])) return true;
  for (const g of scene.connectors.values()) for (const l of g.lines) if (lineInView(l, view)) return true;
  return false;
}

/**
 * paint draws a scene at a transform onto a context of w×h CSS pixels at a
 * device pixel ratio; it returns whether it drew anything. A blank layer
 * that stays blank is not touched (clearing it would make the browser
 * composite a changed canvas on every frame of a pan).
 */
function paint(ctx: CanvasRenderingContext2D, scene: Scene, t: Transform, w: number, h: number, dpr: number, fits: TextFit, blank: boolean, look: Look, dots: { current: Dots | null }): boolean {
  const [tx, ty, zoom] = t;
  const view: Rect = { x: -tx / zoom, y: -ty / zoom, w: w / zoom, h: h / zoom };
  const any = scene.count > 0 && anyInView(scene, view);
  const dotted = !!dotsOf(zoom);
  if (!any && !dotted && blank) return false;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  paintDots(ctx, t, w, h, dpr, look.dots, dots);
  if (!any) return dotted;
  ctx.setTransform(dpr * zoom, 0, 0, dpr * zoom, dpr * tx, dpr * ty);
  const vx1 = view.x + view.w;
  const vy1 = view.y + view.h;
  const inView = (x: number, y: number, rw: number, rh: number) => x <= vx1 && x + rw >= view.x && y <= vy1 && y + rh >= view.y;
  // Frames under everything, as in the DOM (FRAME_Z).
  for (const f of scene.frames) {
    const r = f.rect;
    if (!inView(r.x, r.y, r.w, r.h)) continue;
    ctx.fillStyle = f.fill;
    ctx.strokeStyle = f.line;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.roundRect(r.x + 1, r.y + 1, r.w - 2, r.h - 2, 10);
    ctx.fill();
    ctx.stroke();
    // The title as a far frame shows it (editor.css: 2.4rem in a 36 px head).
    ctx.fillStyle = f.line;
    ctx.font = `600 ${38.4}px system-ui, sans-serif`;
    ctx.textBaseline = 'middle';
    ctx.fillText(fits.fit(ctx, f.title, r.w - 20), r.x + 10, r.y + 22);
  }
  // Connectors under the notes, as xyflow's edge layer is.
  for (const g of scene.connectors.values()) {
    ctx.strokeStyle = g.color;
    ctx.fillStyle = g.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(g.dashed ? [8, 6] : []);
    ctx.beginPath();
    let heads = false;
    for (const l of g.lines) {
      if (!lineInView(l, view)) continue;
      ctx.moveTo(l.x1, l.y1);
      ctx.lineTo(l.x2, l.y2);
      heads ||= !!l.head;
    }
    ctx.stroke();
    ctx.setLineDash([]);
    if (!heads) continue;
    ctx.beginPath();
    for (const l of g.lines) {
      if (!l.head || !lineInView(l, view)) continue;
      ctx.moveTo(l.x2, l.y2);
      ctx.lineTo(l.head[0], l.head[1]);
      ctx.lineTo(l.head[2], l.head[3]);
      ctx.closePath();
    }
    ctx.fill();
  }
  // Notes: one filled path per colour, one outline path for all.
  const outline = new Path2D();
  for (const [bg, flat] of scene.notes) {
    ctx.fillStyle = bg;
    ctx.beginPath();
    for (let i = 0; i < flat.length; i += 4) {
      const x = flat[i], y = flat[i + 1], rw = flat[i + 2], rh = flat[i + 3];
      if (!inView(x, y, rw, rh)) continue;
      ctx.rect(x, y, rw, rh);
      outline.rect(x, y, rw, rh);
    }
    ctx.fill();
  }
  ctx.strokeStyle = NOTE_LINE;
  ctx.lineWidth = 1;
  ctx.stroke(outline);
  if (levelOf(zoom) === 'title') {
    ctx.fillStyle = '#1f2328';
    ctx.font = `600 ${TITLE_FONT}px system-ui, sans-serif`;
    ctx.textBaseline = 'top';
    for (const t of scene.titles) {
      if (!inView(t.x, t.y, t.w, 60)) continue;
      ctx.fillText(fits.fit(ctx, t.text, t.w - 20), t.x + 10, t.y + 28);
    }
  }
  if (scene.selected.length) {
    ctx.strokeStyle = look.accent;
    ctx.lineWidth = 12;
    ctx.beginPath();
    for (const r of scene.selected) if (inView(r.x, r.y, r.w, r.h)) ctx.rect(r.x - 6, r.y - 6, r.w + 12, r.h + 12);
    ctx.stroke();
  }
  return true;
}

/**
 * CanvasLayer is the <canvas> under xyflow's viewport. It repaints at most
 * once per animation frame, when the view or the scene changes; it takes
 * no pointer events (the pane under it does, Canvas.tsx hit-tests the rows).
 */
export const CanvasLayer = memo(function CanvasLayer({ scene }: { scene: Scene }) {
  const store = useStoreApi();
  const ref = useRef<HTMLCanvasElement>(null);
  const sceneRef = useRef(scene);
  sceneRef.current = scene;
  const frame = useRef(0);
  const fits = useRef(new TextFit());
  const blank = useRef(true);
  const look = useRef<Look | null>(null);
  const dots = useRef<Dots | null>(null);
  const draw = useRef(() => {});
  draw.current = () => {
    frame.current = 0;
    const el = ref.current;
    const ctx = el?.getContext('2d');
    if (!el || !ctx) return;
    const { transform, width, height } = store.getState();
    const dpr = window.devicePixelRatio || 1;
    const pw = Math.round(width * dpr);
    const ph = Math.round(height * dpr);
    if (el.width !== pw || el.height !== ph) {
      blank.current = true;
      el.width = pw;
      el.height = ph;
      el.style.width = `${width}px`;
      el.style.height = `${height}px`;
    }
    look.current = lookOf(look.current, el);
    blank.current = !paint(ctx, sceneRef.current, transform, width, height, dpr, fits.current, blank.current, look.current, dots);
  };
  useEffect(() => {
    const schedule = () => {
      if (!frame.current) frame.current = requestAnimationFrame(() => draw.current());
    };
    const off = store.subscribe((s, prev) => {
      if (s.transform !== prev.transform || s.width !== prev.width || s.height !== prev.height) schedule();
    });
    return () => {
      off();
      if (frame.current) cancelAnimationFrame(frame.current);
      frame.current = 0;
    };
  }, [store]);
  // A new scene paints now (before the browser paints this render), so that a row leaving xyflow does not blink.
  useLayoutEffect(() => draw.current(), [scene]);
  return <canvas ref={ref} className="canvas-layer" aria-hidden="true" />;
});

/** DRAG_PX is how far (screen px) a press on a layer row moves before it is a drag, not a click. */
const DRAG_PX = 3;

/**
 * useLayerDrag lets a note or frame the layer draws be dragged as a DOM
 * one is: a press on it (the pane is under the layer, so xyflow would pan)
 * selects it and moves it, with the rest of the selection when it was
 * selected; the drop is one move (Editor.moveNotes). hit says which row a
 * pointer is on (null: none; the pan goes on), from says where a row is
 * (null: it does not move, a locked frame).
 */
export function useLayerDrag(wrapper: RefObject<HTMLDivElement | null>, editor: Editor, hit: (clientX: number, clientY: number) => string | null, from: (id: string) => { x: number; y: number } | null, enabled: boolean) {
  const store = useStoreApi();
  const args = useRef({ hit, from, enabled });
  args.current = { hit, from, enabled };
  useEffect(() => {
    const el = wrapper.current;
    if (!el) return;
    let drag: { id: string; sx: number; sy: number; zoom: number; starts: Map<string, { x: number; y: number }>; moved: boolean; additive: boolean } | null = null;
    const onDown = (e: PointerEvent) => {
      const a = args.current;
      if (!a.enabled || !e.isPrimary || e.button !== 0 || e.shiftKey || !(e.target as Element).classList?.contains('react-flow__pane')) return;
      if (editor.getSnapshot().tool !== 'select') return;
      const id = a.hit(e.clientX, e.clientY);
      const at = id ? a.from(id) : null;
      if (!id || !at) return;
      const sel = editor.getSnapshot().selected;
      const starts = new Map([[id, at]]);
      if (sel.has(id)) for (const other of sel) if (other !== id) { const p = a.from(other); if (p) starts.set(other, p); }
      drag = { id, sx: e.clientX, sy: e.clientY, zoom: store.getState().transform[2], starts, moved: false, additive: e.metaKey || e.ctrlKey };
      // Not a pan: xyflow's pan starts on the mouse or touch event that follows.
      e.stopPropagation();
      window.addEventListener('pointermove', onMove);
      window.addEventListener('pointerup', onUp);
      window.addEventListener('pointercancel', onUp);
    };
    const stopPan = (e: Event) => {
      if (drag) e.stopPropagation();
    };
    const onMove = (e: PointerEvent) => {
      if (!drag) return;
      const dx = (e.clientX - drag.sx) / drag.zoom;
      const dy = (e.clientY - drag.sy) / drag.zoom;
      if (!drag.moved && Math.hypot(e.clientX - drag.sx, e.clientY - drag.sy) < DRAG_PX) return;
      if (!drag.moved) {
        drag.moved = true;
        if (!editor.getSnapshot().selected.has(drag.id)) editor.select(drag.id, drag.additive);
      }
      editor.previewMove(new Map([...drag.starts].map(([id, p]) => [id, { x: p.x + dx, y: p.y + dy }])));
    };
    const onUp = (e: PointerEvent) => {
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', onUp);
      window.removeEventListener('pointercancel', onUp);
      const d = drag;
      drag = null;
      if (!d) return;
      // A press that did not move is a click: the pane's click selects the row (Canvas.tsx).
      if (!d.moved) return;
      // The click that ends a drag is not one (it would select the one row under the pointer).
      const swallow = (c: Event) => c.stopPropagation();
      window.addEventListener('click', swallow, { capture: true, once: true });
      setTimeout(() => window.removeEventListener('click', swallow, { capture: true }), 0);
      const dx = (e.clientX - d.sx) / d.zoom;
      const dy = (e.clientY - d.sy) / d.zoom;
      editor.moveNotes([...d.starts].map(([id, p]) => ({ id, x: p.x + dx, y: p.y + dy })));
    };
    el.addEventListener('pointerdown', onDown, true);
    el.addEventListener('mousedown', stopPan, true);
    el.addEventListener('touchstart', stopPan, true);
    return () => {
      el.removeEventListener('pointerdown', onDown, true);
      el.removeEventListener('mousedown', stopPan, true);
      el.removeEventListener('touchstart', stopPan, true);
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', onUp);
      window.removeEventListener('pointercancel', onUp);
    };
  }, [wrapper, editor, store]);
}
