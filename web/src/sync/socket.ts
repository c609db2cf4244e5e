// LiveSocket: the live channel's WebSocket, kept open. It reconnects with
// backoff and jitter (longer in hidden tabs), follows the window's
// online/offline and visibility events, ignores events of sockets it has
// given up on, and never throws at its users: they see a status and messages.
// It pings the server with a message (browsers hide WebSocket pings from
// pages) and treats a socket that stays silent after a ping as dead.
import type { LiveMessage } from '../api/types';
import { backoffDelay } from './backoff';

/** What LiveSocket needs from a WebSocket (tests pass a fake). */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** The environment LiveSocket reacts to; `window`/`document` in a browser. */
export interface Environment {
  isOnline(): boolean;
  isHidden(): boolean;
  /** on subscribes to 'online' | 'offline' | 'visibilitychange'. */
  on(event: 'online' | 'offline' | 'visibilitychange', cb: () => void): () => void;
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  random(): number;
}

/** connecting → online; offline when the network is gone or the socket is down. */
export type SocketStatus = 'connecting' | 'online' | 'offline' | 'forbidden';

/** Close codes of docs/live-protocol.md. */
export const CLOSE_ACCESS_WITHDRAWN = 4003;
export const CLOSE_RESYNC = 4008;

export interface LiveSocketOptions {
  /** url is asked again at every connection (it carries ?since=). */
  url: () => string;
  open: (url: string) => SocketLike;
  env: Environment;
  /** hiddenFactor multiplies the backoff of a hidden tab. */
  hiddenFactor?: number;
  /** pingEvery is the time between application pings (ms, default 25 s). */
  pingEvery?: number;
  /** pongTimeout is how long a ping waits for any message (ms, default 10 s). */
  pongTimeout?: number;
}

/** The close code reported when a socket is given up for not answering a ping. */
export const CLOSE_NO_PONG = 4900;

const OPEN = 1;

export class LiveSocket {
  private ws: SocketLike | null = null;
  private status: SocketStatus = 'offline';
  private attempt = 0;
  private timer: unknown = null;
  private closed = false;
  private readonly statusCbs = new Set<(s: SocketStatus) => void>();
  private readonly messageCbs = new Set<(m: LiveMessage) => void>();
  private readonly closeCbs = new Set<(code: number) => void>();
  private readonly unsubs: (() => void)[] = [];
  private pingTimer: unknown = null;
  private pongTimer: unknown = null;

  constructor(private readonly o: LiveSocketOptions) {
    const env = o.env;
    this.unsubs.push(
      env.on('offline', () => {
        // The browser knows before the socket does: drop it now.
        this.drop();
        this.setStatus('offline');
      }),
      env.on('online', () => this.reconnectNow()),
      env.on('visibilitychange', () => {
        if (!env.isHidden() && this.status === 'offline' && this.timer !== null) this.reconnectNow();
      }),
    );
  }

  /** connect opens the socket (once; later calls do nothing while open). */
  connect(): void {
    if (this.closed || this.ws) return;
    if (!this.o.env.isOnline()) {
      this.setStatus('offline');
      return;
    }
    this.setStatus('connecting');
    let ws: SocketLike;
    try {
      ws = this.o.open(this.o.url());
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.setStatus('online');
      this.schedulePing(ws);
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws || typeof ev.data !== 'string') return;
      this.heard();
      let msg: LiveMessage;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === 'pong') return;
      this.messageCbs.forEach((cb) => cb(msg));
    };
    ws.onerror = () => {
      /* a close event follows */
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return; // an orphan: we already moved on
      this.ws = null;
      this.stopPinging();
      this.closeCbs.forEach((cb) => cb(ev.code));
      if (ev.code === CLOSE_ACCESS_WITHDRAWN) {
        this.setStatus('forbidden');
        return;
      }
      this.setStatus('offline');
      if (ev.code === CLOSE_RESYNC) this.reconnectNow();
      else this.scheduleReconnect();
    };
  }

  /** send writes a message when the socket is open; false when it is not. */
  send(msg: object): boolean {
    if (!this.ws || this.ws.readyState !== OPEN) return false;
    try {
      this.ws.send(JSON.stringify(msg));
      return true;
    } catch {
      return false;
    }
  }

  getStatus(): SocketStatus {
    return this.status;
  }

  onStatus(cb: (s: SocketStatus) => void): () => void {
    this.statusCbs.add(cb);
    return () => this.statusCbs.delete(cb);
  }

  onMessage(cb: (m: LiveMessage) => void): () => void {
    this.messageCbs.add(cb);
    return () => this.messageCbs.delete(cb);
  }

  /** onClose reports each close code the server (or network) gave. */
  onClose(cb: (code: number) => void): () => void {
    this.closeCbs.add(cb);
    return () => this.closeCbs.delete(cb);
  }

  /** reconnectNow drops any backoff and connects again at once. */
  reconnectNow(): void {
    if (this.closed) return;
    this.clearTimer();
    this.drop();
    this.attempt = 0;
    this.connect();
  }

  /** close ends the socket for good; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer();
    this.drop(1000);
    this.unsubs.forEach((u) => u());
    this.setStatus('offline');
    this.statusCbs.clear();
    this.messageCbs.clear();
    this.closeCbs.clear();
  }

  // schedulePing sends a ping after pingEvery; any message from the server
  // within pongTimeout proves the socket alive (a pong, or anything queued
  // before it), else the socket is given up and a new one opened.
  private schedulePing(ws: SocketLike) {
    const env = this.o.env;
    this.pingTimer = env.setTimeout(() => {
      this.pingTimer = null;
      if (this.ws !== ws) return;
      this.send({ type: 'ping' });
      this.pongTimer = env.setTimeout(() => {
        this.pongTimer = null;
        if (this.ws === ws) this.giveUp();
      }, this.o.pongTimeout ?? 10_000);
    }, this.o.pingEvery ?? 25_000);
  }

  private heard() {
    if (this.pongTimer === null) return;
    this.o.env.clearTimeout(this.pongTimer);
    this.pongTimer = null;
    if (this.ws) this.schedulePing(this.ws);
  }

  // giveUp treats a socket that did not answer a ping as closed by the
  // network: its late events are ignored and we reconnect with backoff.
  private giveUp() {
    this.drop(CLOSE_NO_PONG);
    this.closeCbs.forEach((cb) => cb(CLOSE_NO_PONG));
    this.setStatus('offline');
    this.scheduleReconnect();
  }

  private stopPinging() {
    for (const t of [this.pingTimer, this.pongTimer]) if (t !== null) this.o.env.clearTimeout(t);
    this.pingTimer = this.pongTimer = null;
  }

  private drop(code = 4000) {
    this.stopPinging();
    const ws = this.ws;
    this.ws = null; // from now on its events are ignored
    if (ws) {
      try {
        ws.close(code);
      } catch {
        /* already closing */
      }
    }
  }

  private scheduleReconnect() {
    if (this.closed) return;
    this.clearTimer();
    const env = this.o.env;
    let delay = backoffDelay(this.attempt++, { random: env.random });
    if (env.isHidden()) delay *= this.o.hiddenFactor ?? 4;
    this.timer = env.setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  private clearTimer() {
    if (this.timer !== null) {
      this.o.env.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  private setStatus(s: SocketStatus) {
    if (this.status === s) return;
    this.status = s;
    this.statusCbs.forEach((cb) => cb(s));
  }
}

/** browserEnvironment is Environment on window and document. */
export function browserEnvironment(): Environment {
  return {
    isOnline: () => navigator.onLine,
    isHidden: () => document.visibilityState === 'hidden',
    on(event, cb) {
      const target: EventTarget = event === 'visibilitychange' ? document : window;
      target.addEventListener(event, cb);
      return () => target.removeEventListener(event, cb);
    },
    setTimeout: (cb, ms) => window.setTimeout(cb, ms),
    clearTimeout: (h) => window.clearTimeout(h as number),
    random: Math.random,
  };
}
