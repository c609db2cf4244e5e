// PresenceStore: who is on the board, where their pointers are and which
// note each is editing. Presence is not the document: it has its own
// snapshot and subscription, so a moving pointer re-renders the cursors and
// nothing else. Plain TypeScript; the sync client feeds it live messages
// and the connection's status.
import type { LiveMessage, Peer } from '../api/types';
import { Notifier, type FrameScheduler } from './notify';

/** A connection on the board, with its last pointer position and the note it is editing. */
export interface Presence extends Peer {
  x?: number;
  y?: number;
  /** seen is when its last message arrived (clock ms). */
  seen: number;
  /** editing is the id of the note whose editor it has open. */
  editing?: string;
}

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

  constructor(private readonly o: PresenceOptions) {
    this.notifier = new Notifier(o.frame);
  }

  /** onChange tells cb about changes, at most once per animation frame; returns the unsubscribe. */
  onChange = (cb: () => void): (() => void) => this.notifier.subscribe(cb);

  /** getSnapshot is the current presence (a new object after each change). */
  getSnapshot = (): PresenceState => {
    this.snapshot ??= { me: this.me, peers: new Map(this.peers), editors: this.editors };
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
      case 'hello':
        this.me = { id: m.you.id, email: m.you.email, color: m.you.color };
        this.peers = new Map(m.present.map((p) => [p.id, { id: p.id, email: p.email, color: p.color, seen: now, ...(p.editing ? { editing: p.editing } : {}) }]));
        this.editorsChanged();
        // A new connection: the server knows nothing of my editor yet.
        if (this.myEditing) this.o.send({ type: 'editing', noteId: this.myEditing });
        break;
      case 'join':
        this.peers.set(m.id, { ...this.peers.get(m.id), id: m.id, email: m.email, color: m.color, seen: now });
        break;
      case 'leave': {
        const was = this.peers.get(m.id);
        this.peers.delete(m.id);
        if (was?.editing) this.editorsChanged();
        break;
      }
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

  /** close stops the pointer timer and drops subscribers; safe twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.pointerTimer !== null) this.o.clock.clearTimeout(this.pointerTimer);
    this.notifier.close();
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
