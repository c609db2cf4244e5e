// OwnMoves tells a change of view the person made (a drag, a wheel, a key,
// a zoom button) from one the follow logic made (docs/web-client.md, "My
// own pans"): from the input, not the view, because both move the same
// viewport. Plain TypeScript; ViewSync feeds it the canvas's events.

/** GESTURE_MS is how long after a key, a click or a wheel turn a change of view is still the person's own. */
export const GESTURE_MS = 400;
/** DRAG_PX is how far a pointer moves before it is a drag (a click on a note is not a pan). */
export const DRAG_PX = 4;

export class OwnMoves {
  private animUntil = 0;
  private wheelUntil = 0;
  private gestureUntil = 0;
  private down: { x: number; y: number; moved: boolean } | null = null;

  /** animating: the follow logic moves the view from t for ms (its animation, and a frame or so after). */
  animating(t: number, ms: number): void {
    this.animUntil = t + ms + 80;
  }

  wheel(t: number): void {
    this.wheelUntil = t + GESTURE_MS;
  }

  pointerDown(x: number, y: number): void {
    this.down = { x, y, moved: false };
  }

  pointerMove(x: number, y: number): void {
    const d = this.down;
    if (d && !d.moved && Math.hypot(x - d.x, y - d.y) > DRAG_PX) d.moved = true;
  }

  /** pointerUp ends a press; a click acts after it (the zoom buttons), so a moment still counts. */
  pointerUp(t: number): void {
    this.down = null;
    this.gestureUntil = t + GESTURE_MS;
  }

  key(t: number): void {
    this.gestureUntil = t + GESTURE_MS;
  }

  /**
   * mine says whether a change of view at t is the person's: while a
   * pointer drags, just after a wheel turn (both interrupt an animation),
   * or just after a key or a click when no followed view is being shown.
   */
  mine(t: number): boolean {
    return !!this.down?.moved || t < this.wheelUntil || (t >= this.animUntil && t < this.gestureUntil);
  }
}
