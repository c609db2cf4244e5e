import { useEffect } from 'react';
import { useReactFlow, useStoreApi } from '@xyflow/react';
import { followOf, type View } from './follow';
import type { PresenceStore } from '../sync/presence';
import { OwnMoves } from './ownMoves';

/** FOLLOW_MS is how long a followed view's move takes: light, and shorter than the 100 ms between two views plus some. */
const FOLLOW_MS = 180;
/** JUMP_MS is a Go to's or a summon's move: quick, but seen as a move. */
const JUMP_MS = 300;

/**
 * ViewSync is the canvas's side of "Who is here" (rendered inside
 * ReactFlow): it tells the follow store my view whenever it changes, and
 * whether I changed it myself (ownMoves.ts); it lets the store move my
 * view; and it tells the server I am active when I type (a pointer says
 * so already).
 */
export function ViewSync({ presence }: { presence: PresenceStore }) {
  const follow = followOf(presence);
  const rf = useReactFlow();
  const store = useStoreApi();

  useEffect(() => {
    const centre = (): View => {
      const { transform, width, height } = store.getState();
      const [tx, ty, zoom] = transform;
      return { x: (width / 2 - tx) / zoom, y: (height / 2 - ty) / zoom, zoom };
    };
    const own = new OwnMoves();
    const now = () => performance.now();
    const reduced = () => window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;

    follow.setViewport({
      current: centre,
      show: (v, how) => {
        const { width, height, minZoom, maxZoom } = store.getState();
        const zoom = Math.min(maxZoom, Math.max(minZoom, v.zoom));
        const duration = reduced() ? 0 : how === 'follow' ? FOLLOW_MS : JUMP_MS;
        own.animating(now(), duration);
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
      follow.viewChanged(centre(), own.mine(now()));
    });
    // Where I look when the board opens: who follows me, and a summon, need it.
    follow.viewChanged(centre(), false);

    const el = store.getState().domNode;
    const onWheel = (e: WheelEvent) => {
      if (!(e.target as Element).closest?.('.nowheel')) own.wheel(now());
    };
    const onDown = (e: PointerEvent) => own.pointerDown(e.clientX, e.clientY);
    const onMove = (e: PointerEvent) => own.pointerMove(e.clientX, e.clientY);
    const onUp = () => own.pointerUp(now());
    const onKey = () => {
      own.key(now());
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
