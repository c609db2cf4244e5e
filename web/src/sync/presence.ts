// PresenceStore: who is on the board, where their pointers are and which
// note each is editing. Presence is not the document: it has its own
// snapshot and subscription, so a moving pointer re-renders the cursors and
// nothing else. Plain TypeScript; the sync client feeds it live messages
// and the connection's status.
import type { HelloPresence, LiveMessage, Peer, PresentEntry } from '../api/types';
import { Notifier, type FrameScheduler } from './notify';

/** A connection on the board, with its last pointer position and the note it is editing. */
export interface Presence extends Peer {
  x?: number;
  y?: number;
  /** seen is when its last message arrived (clock ms). */
  seen: number;
  /** editing is the id of the note whose editor it has open. */
  editing?: string;
  /** idle: no activity for 2 minutes, as the server says. */
  idle?: boolean;
}

/**
 * PresenceSignal is a live message about views that the follow and
 * bring-everyone logic acts on (src/people/): handed over as it arrives,
 * not coalesced like the snapshot.
 */
export type PresenceSignal =
  | { kind: 'hello' }
  | { kind: 'view'; peer: Peer; x: number; y: number; zoom: number }
  | { kind: 'followEnded'; id: string }
  | { kind: 'summon'; peer: Peer; x: number; y: number; zoom: number }
  | { kind: 'left'; ids: readonly string[] };

/** PresenceState is an immutable snapshot of presence. */
export interface PresenceState {
  /** me is this connection, as the live hello said; null before it. */
  me: Peer | null;
  /** peers are the other connections (one person with two tabs is two). */
  peers: ReadonlyMap<string, Presence>;
  /**
   * editors maps a note's id to the other connections editing it. The map
   * is the same object until someone opens or closes an editor (a pointer
   * moving does not change it), so a note can subscribe to it cheaply.
   */
  editors: ReadonlyMap<string, readonly Peer[]>;
  /** count is how many other connections the server says are here (it may list fewer: at most 100 in hello). */
  count: number;
  /** more: the server has more connections than peers holds (ask with who()). */
  more: boolean;
}

/** What PresenceStore needs from the sync client. */
export interface PresenceOptions {
  /** send writes a message to the live channel; false when it is not open. */
  send(msg: object): boolean;
  clock: { now(): number; setTimeout(cb: () => void, ms: number): unknown; clearTimeout(h: unknown): void };
  frame?: FrameScheduler;
}

/** POINTER_INTERVAL is the least time between two pointer messages (ms): the server relays 20 a second. */
export const POINTER_INTERVAL = 50;
/** VIEW_INTERVAL is the least time between two view messages (ms): at most 10 a second. */
export const VIEW_INTERVAL = 100;
/** ACTIVE_INTERVAL is the least time between two `active` messages (ms). */
export const ACTIVE_INTERVAL = 30_000;
/** WHO_LIMIT is the page size asked of `who`. */
export const WHO_LIMIT = 100;

const NOBODY: readonly Peer[] = Object.freeze([]);

export class PresenceStore {
  private me: Peer | null = null;
  private peers = new Map<string, Presence>();
  private editors: ReadonlyMap<string, readonly Peer[]> = new Map();
  private myEditing: string | null = null;
  private snapshot: PresenceState | null = null;
  private readonly notifier: Notifier;
  private lastPointer = -Infinity;
  private pointerTimer: unknown = null;
  private nextPointer: { x: number; y: number } | null = null;
  private closed = false;
  private count = 0;
  private whoNext = '';
  private whoAsked = false;
  private lastActive = -Infinity;
  private lastView = -Infinity;
  private viewTimer: unknown = null;
  private myView: { x: number; y: number; zoom: number } | null = null;
  private viewSent = false;
  private following = '';
  private readonly signals = new Set<(s: PresenceSignal) => void>();

  constructor(private readonly o: PresenceOptions) {
    this.notifier = new Notifier(o.frame);
  }

  /** onChange tells cb about changes, at most once per animation frame; returns the unsubscribe. */
  onChange = (cb: () => void): (() => void) => this.notifier.subscribe(cb);

  /** getSnapshot is the current presence (a new object after each change). */
  getSnapshot = (): PresenceState => {
    this.snapshot ??= { me: this.me, peers: new Map(this.peers), editors: this.editors, count: Math.max(this.count, this.peers.size), more: this.count > this.peers.size };
    return this.snapshot;
  };

  /** editorsOf lists the other connections editing a note. */
  editorsOf(noteId: string): readonly Peer[] {
    return this.editors.get(noteId) ?? NOBODY;
  }

  /** editing is the note whose editor I announced open, or null. */
  editing(): string | null {
    return this.myEditing;
  }

  /**
   * handle takes a live message: hello, join, leave, pointer and editing
   * change presence; it returns false for the others.
   */
  handle(m: LiveMessage): boolean {
    const now = this.o.clock.now();
    switch (m.type) {
      case 'hello': {
        const h: HelloPresence = m;
        this.me = { id: m.you.id, email: m.you.email, color: m.you.color };
        this.peers = new Map(h.present.map((p) => [p.id, entry(p, now)]));
        // An older server sends no count: it lists everyone.
        this.count = h.presentCount ?? h.present.length;
        this.whoNext = '';
        this.whoAsked = false;
        this.editorsChanged();
        // A new connection: the server knows nothing of my editor, view or follow yet.
        if (this.myEditing) this.o.send({ type: 'editing', noteId: this.myEditing });
        if (this.myView) this.o.send({ type: 'view', ...this.myView });
        if (this.following) this.o.send({ type: 'follow', id: this.following });
        this.signal({ kind: 'hello' });
        break;
      }
      case 'join':
        if (!this.peers.has(m.id)) this.count++;
        this.peers.set(m.id, { ...this.peers.get(m.id), id: m.id, email: m.email, color: m.color, seen: now });
        break;
      case 'leave':
        if (this.peers.has(m.id)) this.count = Math.max(0, this.count - 1);
        this.drop([m.id]);
        break;
      case 'presence':
        for (const p of m.joined ?? []) {
          if (p.id === this.me?.id) continue; // my own arrival, in the tick I joined
          if (!this.peers.has(p.id) && m.count === undefined) this.count++;
          this.peers.set(p.id, { ...this.peers.get(p.id), ...entry(p, now) });
        }
        for (const id of m.idle ?? []) this.setIdle(id, true);
        for (const id of m.active ?? []) this.setIdle(id, false);
        // A batch's count is everyone the board shows, this connection included
        // (hello's presentCount is the others): the others are one fewer.
        if (m.count === undefined) this.count = Math.max(0, this.count - (m.left ?? []).filter((id) => this.peers.has(id)).length);
        else this.count = Math.max(0, m.count - 1);
        if (m.joined?.some((p) => p.editing)) this.editorsChanged();
        this.drop(m.left ?? []);
        break;
      case 'who':
        this.whoAsked = false;
        this.whoNext = m.next ?? '';
        for (const p of m.present) if (p.id !== this.me?.id) this.peers.set(p.id, { ...this.peers.get(p.id), ...entry(p, now) });
        this.editorsChanged();
        break;
      case 'view':
        // For whom I follow: not a change of who is here.
        this.signal({ kind: 'view', peer: { id: m.id, email: m.email, color: m.color }, x: m.x, y: m.y, zoom: m.zoom });
        return true;
      case 'summon':
        this.signal({ kind: 'summon', peer: { id: m.id, email: m.email, color: m.color }, x: m.x, y: m.y, zoom: m.zoom });
        return true;
      case 'error':
        // A follow the server refused (that connection is gone: 404 naming id) ends like one that ended.
        if (!m.id && m.field === 'id' && this.following) {
          const id = this.following;
          this.following = '';
          this.signal({ kind: 'followEnded', id });
        }
        return false;
      case 'follow':
        if (m.ended) {
          if (this.following === m.ended) this.following = '';
          this.signal({ kind: 'followEnded', id: m.ended });
        }
        return true;
      case 'pointer':
        this.peers.set(m.id, { ...this.peers.get(m.id), id: m.id, email: m.email, color: m.color, x: m.x, y: m.y, seen: now });
        break;
      case 'editing': {
        const p: Presence = { ...this.peers.get(m.id), id: m.id, email: m.email, color: m.color, seen: now };
        if (m.noteId) p.editing = m.noteId;
        else delete p.editing;
        this.peers.set(m.id, p);
        this.editorsChanged();
        break;
      }
      default:
        return false;
    }
    this.changed();
    return true;
  }

  /** connection follows the live channel's status: a channel that is down shows nobody. */
  connection(s: 'connecting' | 'online' | 'offline' | 'forbidden'): void {
    if (s === 'online' || s === 'connecting' || !this.peers.size) return;
    this.count = 0;
    this.peers.clear();
    this.editorsChanged();
    this.changed();
  }

  /** sendPointer shares my pointer (board coordinates), at most every 50 ms, the latest position last. */
  sendPointer(x: number, y: number): void {
    if (this.closed) return;
    this.nextPointer = { x, y };
    if (this.pointerTimer !== null) return;
    const wait = Math.max(0, this.lastPointer + POINTER_INTERVAL - this.o.clock.now());
    this.pointerTimer = this.o.clock.setTimeout(() => {
      this.pointerTimer = null;
      this.lastPointer = this.o.clock.now();
      const p = this.nextPointer;
      this.nextPointer = null;
      if (p) this.o.send({ type: 'pointer', x: p.x, y: p.y });
    }, wait);
  }

  /**
   * setEditing announces that my editor of a note opened (its id) or closed
   * (null). Sent when it changes, and again on every new connection.
   */
  setEditing(noteId: string | null): void {
    const id = noteId || null;
    if (id === this.myEditing || this.closed) return;
    this.myEditing = id;
    this.o.send({ type: 'editing', noteId: id ?? '' });
  }

  /**
   * onSignal tells cb about views, follow endings, summons and leavers as
   * they arrive (the follow logic cannot wait for a frame's coalescing);
   * returns the unsubscribe.
   */
  onSignal(cb: (s: PresenceSignal) => void): () => void {
    this.signals.add(cb);
    return () => this.signals.delete(cb);
  }

  /**
   * sendActive says I am active without a pointer (typing): at most every
   * 30 s, which is plenty against a 2-minute idle rule.
   */
  sendActive(): void {
    const now = this.o.clock.now();
    if (this.closed || now - this.lastActive < ACTIVE_INTERVAL) return;
    if (this.o.send({ type: 'active' })) this.lastActive = now;
  }

  /**
   * sendView shares my view (its centre in board coordinates, and the
   * zoom) when it changes: at most 10 a second, the latest last, and again
   * on every new connection.
   */
  sendView(x: number, y: number, zoom: number): void {
    if (this.closed) return;
    const v = { x: round(x), y: round(y), zoom: Math.round(zoom * 1000) / 1000 };
    const was = this.myView;
    if (was && was.x === v.x && was.y === v.y && was.zoom === v.zoom && this.viewSent) return;
    this.myView = v;
    this.viewSent = false;
    if (this.viewTimer !== null) return;
    const wait = Math.max(0, this.lastView + VIEW_INTERVAL - this.o.clock.now());
    this.viewTimer = this.o.clock.setTimeout(() => {
      this.viewTimer = null;
      this.lastView = this.o.clock.now();
      if (this.myView && !this.viewSent) this.viewSent = this.o.send({ type: 'view', ...this.myView });
    }, wait);
  }

  /** follow asks for the views of connection id ("" stops); kept and sent again on a new connection. */
  follow(id: string): void {
    if (this.closed || id === this.following) return;
    this.following = id;
    this.o.send({ type: 'follow', id });
  }

  /** viewOnce asks for connection id's latest view, once (`view?`: a "Go to"); it leaves a follow as it is. */
  viewOnce(id: string): void {
    if (this.closed || !id) return;
    this.o.send({ type: 'view?', id });
  }

  /** summon brings everyone to my view (the server lets only the owner). */
  summon(x: number, y: number, zoom: number): boolean {
    if (this.closed) return false;
    return this.o.send({ type: 'summon', x: round(x), y: round(y), zoom: Math.round(zoom * 1000) / 1000 });
  }

  /**
   * who asks for the next page of who is here, when the server has more
   * than this store holds and no request is under way; false when there
   * is nothing to ask.
   */
  who(): boolean {
    if (this.closed || this.whoAsked || this.count <= this.peers.size) return false;
    this.whoAsked = this.o.send({ type: 'who', after: this.whoNext, limit: WHO_LIMIT });
    return this.whoAsked;
  }

  /** close stops the timers and drops subscribers; safe twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.pointerTimer !== null) this.o.clock.clearTimeout(this.pointerTimer);
    if (this.viewTimer !== null) this.o.clock.clearTimeout(this.viewTimer);
    this.signals.clear();
    this.notifier.close();
  }

  private signal(s: PresenceSignal) {
    for (const cb of [...this.signals]) cb(s);
  }

  private setIdle(id: string, idle: boolean) {
    const p = this.peers.get(id);
    if (!p || !!p.idle === idle) return;
    const next: Presence = { ...p };
    if (idle) next.idle = true;
    else delete next.idle;
    this.peers.set(id, next);
  }

  /** drop removes connections that left (their editors with them) and tells the follow logic. */
  private drop(ids: readonly string[]) {
    let editors = false;
    const gone: string[] = [];
    for (const id of ids) {
      const was = this.peers.get(id);
      if (!was) continue;
      gone.push(id);
      editors ||= !!was.editing;
      this.peers.delete(id);
    }
    if (editors) this.editorsChanged();
    if (gone.length) this.signal({ kind: 'left', ids: gone });
  }

  private editorsChanged() {
    const m = new Map<string, Peer[]>();
    for (const p of this.peers.values()) {
      if (!p.editing) continue;
      const list = m.get(p.editing) ?? [];
      list.push({ id: p.id, email: p.email, color: p.color });
      m.set(p.editing, list);
    }
    this.editors = m;
  }

  private changed() {
    this.snapshot = null;
    this.notifier.notify();
  }
}

function entry(p: PresentEntry, now: number): Presence {
  return { id: p.id, email: p.email, color: p.color, seen: now, ...(p.editing ? { editing: p.editing } : {}), ...(p.idle ? { idle: true } : {}) };
}

const round = (n: number) => Math.round(n * 10) / 10;
