// FollowStore: following someone's view, "Go to" (following until their
// first view), and being brought to the owner's view (docs/web-client.md,
// "Who is here, follow and bring everyone"). Plain TypeScript over the
// presence store's signals; the canvas gives it a Viewport to move, and
// tells it about my view and about the person moving it by hand.
import type { Peer } from '../api/types';
import type { PresenceSignal } from '../sync/presence';
import { nameOf } from '../canvas/peopleView';

/** View is a view of the board: its centre in board coordinates and the zoom. */
export interface View {
  x: number;
  y: number;
  zoom: number;
}

/** Viewport is the canvas as the follow logic moves it. */
export interface Viewport {
  /** show moves the view: 'follow' animated lightly, 'jump' at once (a Go to, a summon). */
  show(v: View, how: 'follow' | 'jump'): void;
  /** current is my view now. */
  current(): View;
}

/** What FollowStore needs of the presence store. */
export interface FollowPresence {
  onSignal(cb: (s: PresenceSignal) => void): () => void;
  follow(id: string): void;
  viewOnce(id: string): void;
  summon(x: number, y: number, zoom: number): boolean;
  sendView(x: number, y: number, zoom: number): void;
}

/** Following is whom I follow: once for a "Go to" (unfollowed at their first view). */
export interface Following extends Peer {
  name: string;
  once: boolean;
}

/** FollowState is the snapshot the follow bar and the toast render. */
export interface FollowState {
  following: Following | null;
  /** toast is "Ana brought everyone here" after a summon, until dismissed; key tells two apart. */
  toast: { text: string; key: number } | null;
  /** notice is for the live region: following stopped, or everyone was brought here. */
  notice: string;
}

const stores = new WeakMap<FollowPresence, FollowStore>();

/**
 * followOf is the board's FollowStore, one per presence store (so one per
 * open board): the top bar and the canvas share it without it being
 * handed down through the canvas's props.
 */
export function followOf(presence: FollowPresence): FollowStore {
  let f = stores.get(presence);
  if (!f) stores.set(presence, (f = new FollowStore(presence)));
  return f;
}

export class FollowStore {
  private state: FollowState = { following: null, toast: null, notice: '' };
  private readonly cbs = new Set<() => void>();
  private viewport: Viewport | null = null;
  /** pending is a view that came before the canvas was there. */
  private pending: { v: View; how: 'follow' | 'jump' } | null = null;
  private toasts = 0;

  constructor(private readonly presence: FollowPresence) {}

  /**
   * attach listens to the presence store's signals until the function it
   * returns is called (a React effect's cleanup: the store outlives a
   * StrictMode remount).
   */
  attach(): () => void {
    return this.presence.onSignal((s) => this.onSignal(s));
  }

  onChange = (cb: () => void): (() => void) => {
    this.cbs.add(cb);
    return () => this.cbs.delete(cb);
  };

  getSnapshot = (): FollowState => this.state;

  /** setViewport is called by the canvas when it is there (and with null when it goes). */
  setViewport(v: Viewport | null): void {
    this.viewport = v;
    if (v && this.pending) {
      v.show(this.pending.v, this.pending.how);
      this.pending = null;
    }
  }

  /**
   * follow starts following a person's connection; once: a "Go to", which
   * asks for their latest view (`view?`) and ends with it.
   */
  follow(peer: Peer, once = false): void {
    if (!peer.id) return;
    if (once) {
      this.presence.follow(''); // a Go to ends a follow of someone else
      this.presence.viewOnce(peer.id);
    } else {
      this.presence.follow(peer.id);
    }
    this.set({ following: { id: peer.id, email: peer.email, color: peer.color, name: nameOf(peer.email), once }, notice: once ? '' : `Following ${nameOf(peer.email)}` });
  }

  /** stop stops following (the Stop button). */
  stop(): void {
    this.end('');
  }

  /**
   * viewChanged is my view after every change: shared with the server (who
   * follows me, a summon's target); a change the person made themselves
   * (byUser) stops following.
   */
  viewChanged(v: View, byUser: boolean): void {
    this.presence.sendView(v.x, v.y, v.zoom);
    if (byUser && this.state.following) this.end(this.state.following.once ? '' : `Stopped following ${this.state.following.name}`);
  }

  /** bringEveryone moves everyone's view to mine (the owner's button); false when the channel is down. */
  bringEveryone(): boolean {
    const v = this.viewport?.current();
    if (!v || !this.presence.summon(v.x, v.y, v.zoom)) return false;
    this.set({ notice: 'Everyone was brought to your view' });
    return true;
  }

  /** dismissToast closes the "brought everyone here" toast. */
  dismissToast(): void {
    if (this.state.toast) this.set({ toast: null });
  }

  private onSignal(s: PresenceSignal) {
    const f = this.state.following;
    switch (s.kind) {
      case 'view':
        if (!f || s.peer.id !== f.id) return;
        this.show({ x: s.x, y: s.y, zoom: s.zoom }, f.once ? 'jump' : 'follow');
        if (f.once) this.end('');
        return;
      case 'followEnded':
        if (f && s.id === f.id) this.end(`${f.name} left: you are no longer following them`);
        return;
      case 'left':
        if (f && s.ids.includes(f.id)) this.end(`${f.name} left: you are no longer following them`);
        return;
      case 'summon': {
        if (f) this.end('');
        this.show({ x: s.x, y: s.y, zoom: s.zoom }, 'jump');
        const text = `${nameOf(s.peer.email)} brought everyone here`;
        this.set({ toast: { text, key: ++this.toasts }, notice: '' });
        return;
      }
      case 'hello':
        return;
    }
  }

  private show(v: View, how: 'follow' | 'jump') {
    if (this.viewport) this.viewport.show(v, how);
    else this.pending = { v, how };
  }

  /** end stops following (the presence store tells the server, unless the server ended it). */
  private end(notice: string) {
    if (!this.state.following) return;
    this.presence.follow('');
    this.set({ following: null, notice });
  }

  private set(p: Partial<FollowState>) {
    this.state = { ...this.state, ...p };
    [...this.cbs].forEach((cb) => cb());
  }
}
