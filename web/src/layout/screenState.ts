// The board screen's own state: which side panel is in the dock, which
// dialog is open, whether the board menu is open, and the rename draft.
// Plain TypeScript with one subscription (useSyncExternalStore), so the
// rules ("one panel at a time", "a dialog closes the menu") are tested
// without React and BoardScreen only renders.

/** Panel is a side panel the dock holds; one at a time. */
export type Panel = 'items' | 'chat' | 'history' | 'snapshots';

/** ScreenDialog is a modal dialog of the board screen. */
export type ScreenDialog = 'share' | 'import' | 'phases' | 'export' | 'importCanvas';

/** HistoryTarget is what the history panel shows: a note's history (at an entry), or the board's deleted notes (no noteId). */
export interface HistoryTarget {
  noteId?: string;
  openKey?: string;
  /** action: the board's history at its deleted notes (default) or its votes' entries. */
  action?: 'delete_note' | 'start_vote' | 'reveal_vote';
}

/** ScreenState is an immutable snapshot of the board screen's state. */
export interface ScreenState {
  panel: Panel | null;
  /** history is the history panel's target while panel is 'history'. */
  history: HistoryTarget | null;
  dialog: ScreenDialog | null;
  menuOpen: boolean;
  /** renaming is the name being typed, or null when the name is not being edited. */
  renaming: string | null;
  /**
   * chatOpened: the chat has been opened once. It then stays mounted while
   * other panels show, so its conversation (and an answer still applying
   * its changes) survives closing it.
   */
  chatOpened: boolean;
}

const INITIAL: ScreenState = { panel: null, history: null, dialog: null, menuOpen: false, renaming: null, chatOpened: false };

/** ScreenStore holds a ScreenState and tells subscribers when it changes. */
export class ScreenStore {
  private state: ScreenState = INITIAL;
  private readonly listeners = new Set<() => void>();

  /** getSnapshot returns the current state (the same object until something changes). */
  getSnapshot = (): ScreenState => this.state;

  /** onChange calls cb after every change; it returns the unsubscribe function. */
  onChange = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };

  /** openPanel shows p in the dock, replacing the panel there; the menu closes. */
  openPanel(p: Exclude<Panel, 'history'>): void {
    this.set({ panel: p, history: null, menuOpen: false, chatOpened: this.state.chatOpened || p === 'chat' });
  }

  /** togglePanel opens p, or closes it when it is the one shown (a rail button). */
  togglePanel(p: Exclude<Panel, 'history'>): void {
    if (this.state.panel === p) this.closePanel();
    else this.openPanel(p);
  }

  /** openHistory shows the history panel at target (a note's, or the deleted notes). */
  openHistory(target: HistoryTarget): void {
    this.set({ panel: 'history', history: { ...target }, menuOpen: false });
  }

  /** closePanel empties the dock. */
  closePanel(): void {
    if (this.state.panel !== null) this.set({ panel: null, history: null });
  }

  /** openDialog opens a modal dialog; the menu closes. */
  openDialog(d: ScreenDialog): void {
    this.set({ dialog: d, menuOpen: false });
  }

  /** closeDialog closes the open dialog. */
  closeDialog(): void {
    if (this.state.dialog !== null) this.set({ dialog: null });
  }

  /** setMenu opens or closes the board menu. */
  setMenu(open: boolean): void {
    if (this.state.menuOpen !== open) this.set({ menuOpen: open });
  }

  /** startRename begins editing the board's name from its current name. */
  startRename(current: string): void {
    this.set({ renaming: current, menuOpen: false });
  }

  /** typeName updates the rename draft (ignored when not renaming). */
  typeName(v: string): void {
    if (this.state.renaming !== null) this.set({ renaming: v });
  }

  /**
   * finishRename ends the rename and returns the name to save: the trimmed
   * draft when it is not empty and differs from current, else null.
   */
  finishRename(current: string): string | null {
    const draft = this.state.renaming;
    if (draft === null) return null;
    this.set({ renaming: null });
    const name = draft.trim();
    return name && name !== current ? name : null;
  }

  /** cancelRename drops the draft. */
  cancelRename(): void {
    if (this.state.renaming !== null) this.set({ renaming: null });
  }

  private set(patch: Partial<ScreenState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of [...this.listeners]) l();
  }
}
