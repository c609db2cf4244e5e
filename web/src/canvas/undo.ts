// The board's undo stack: one per open board, made by BoardScreen and shared
// by the canvas (its own edits, Ctrl+Z and the Undo button) and the panels
// that change notes from outside it (the AI chat pushes one entry per AI
// turn, so a whole turn is undone as one step).

/** UndoEntry is one step: what the user hears ("Undid the <label>.") and how to revert it. */
export interface UndoEntry {
  label: string;
  run: () => void;
}

/** UNDO_LIMIT is how many steps are kept; older ones are forgotten. */
export const UNDO_LIMIT = 100;

/** UndoStack keeps the last UNDO_LIMIT steps, newest on top. */
export class UndoStack {
  private readonly entries: UndoEntry[] = [];

  push(e: UndoEntry): void {
    this.entries.push(e);
    if (this.entries.length > UNDO_LIMIT) this.entries.shift();
  }

  /** pop takes the newest step off the stack (the caller runs it), or undefined. */
  pop(): UndoEntry | undefined {
    return this.entries.pop();
  }

  get size(): number {
    return this.entries.length;
  }
}
