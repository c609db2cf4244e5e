import { useEffect } from 'react';
import { useReactFlow, useStoreApi } from '@xyflow/react';
import type { FollowStore, View } from './follow';
import type { PresenceStore } from '../sync/presence';

/** FOLLOW_MS is how long a followed view's move takes: light, and shorter than the 100 ms between two views plus some. */
const FOLLOW_MS = 180;
/** JUMP_MS is a Go to's or a summon's move: quick, but seen as a move. */
const JUMP_MS = 300;
/** GESTURE_MS is how long after a key, a click or a wheel turn a change of view is still the person's own. */
const GESTURE_MS = 400;
/** DRAG_PX is how far a pointer moves before it is a drag (a click on a note is not a pan). */
const DRAG_PX = 4;

/**
 * ViewSync is the canvas's side of "Who is here" (rendered inside
 * ReactFlow): it tells the follow store my view whenever it changes, and
 * whether I changed it myself; it lets the store move my view; and it
 * tells the server I am active when I type (a pointer says so already).
 *
 * "Myself" is told from the input, not from the view: a change while a
 * pointer drags, within a moment of a wheel turn, or within a moment of a
 * key or a click when the follow is not moving the view (the zoom
 * buttons, the arrow keys) is mine; a follow's own animation is not.
 */
export function ViewSync({ follow, presence }: { follow: FollowStore; presence: PresenceStore }) {
  const rf = useReactFlow();
  const store = useStoreApi();

  useEffect(() => {
    const centre = (): View => {
      const { transform, width, height } = store.getState();
      const [tx, ty, zoom] = transform;
      return { x: (width / 2 - tx) / zoom, y: (height / 2 - ty) / zoom, zoom };
    };
    let animUntil = 0;
    let wheelUntil = 0;
    let gestureUntil = 0;
    let down: { x: number; y: number; moved: boolean } | null = null;
    const now = () => performance.now();
    const reduced = () => window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;

    follow.setViewport({
      current: centre,
      show: (v, how) => {
        const { width, height, minZoom, maxZoom } = store.getState();
        const zoom = Math.min(maxZoom, Math.max(minZoom, v.zoom));
        const duration = reduced() ? 0 : how === 'follow' ? FOLLOW_MS : JUMP_MS;
        animUntil = now() + duration + 80;
        void rf.setViewport({ x: width / 2 - v.x * zoom, y: height / 2 - v.y * zoom, zoom }, { duration });
      },
    });

    let last = store.getState();
    const unsubscribe = store.subscribe((s) => {
      const was = last;
      last = s;
      if (s.transform === was.transform) {
        // The canvas was measured or resized: its centre moved, not by anyone's hand.
        if (s.width !== was.width || s.height !== was.height) follow.viewChanged(centre(), false);
        return;
      }
      const t = now();
      const byUser = !!down?.moved || t < wheelUntil || (t >= animUntil && t < gestureUntil);
      follow.viewChanged(centre(), byUser);
    });
    // Where I look when the board opens: who follows me, and a summon, need it.
    follow.viewChanged(centre(), false);

    const el = store.getState().domNode;
    const onWheel = (e: WheelEvent) => {
      if (!(e.target as Element).closest?.('.nowheel')) wheelUntil = now() + GESTURE_MS;
    };
    const onDown = (e: PointerEvent) => {
      down = { x: e.clientX, y: e.clientY, moved: false };
    };
    const onMove = (e: PointerEvent) => {
      if (down && !down.moved && Math.hypot(e.clientX - down.x, e.clientY - down.y) > DRAG_PX) down.moved = true;
    };
    const onUp = () => {
      down = null;
      gestureUntil = now() + GESTURE_MS;
    };
    const onKey = () => {
      gestureUntil = now() + GESTURE_MS;
      // Typing is activity the server cannot see (no pointer moves): say so, at most every 30 s.
      presence.sendActive();
    };
    el?.addEventListener('wheel', onWheel, { capture: true, passive: true });
    el?.addEventListener('pointerdown', onDown, { capture: true });
    window.addEventListener('pointermove', onMove, { passive: true });
    window.addEventListener('pointerup', onUp);
    window.addEventListener('pointercancel', onUp);
    window.addEventListener('keydown', onKey, { capture: true });
    return () => {
      follow.setViewport(null);
      unsubscribe();
      el?.removeEventListener('wheel', onWheel, { capture: true });
      el?.removeEventListener('pointerdown', onDown, { capture: true });
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', onUp);
      window.removeEventListener('pointercancel', onUp);
      window.removeEventListener('keydown', onKey, { capture: true });
    };
  }, [follow, presence, rf, store]);

  return null;
}
