// MyDots: my dots in the board's vote. The board header says a vote is on
// (and its totals); only the server knows which notes carry my dots, so
// they are asked for (GET .../votes/mine) when a vote appears, and again
// each time the live channel comes back. A click shows at once and is sent
// in order, one at a time; the server's answer is then the truth.
import type { MyVotes, Vote } from '../api/types';
import { applyDelta } from './vote';

/** clean is an answer with its map always there (a server with no dots of mine may send null). */
const clean = (m: MyVotes): MyVotes => ({ voteId: m.voteId ?? '', mine: m.mine ?? {}, left: m.left ?? 0 });

/** DotsApi is what MyDots needs of the server (api.ts's castVote and myVotes). */
export interface DotsApi {
  castVote(boardId: string, noteId: string, delta: 1 | -1): Promise<MyVotes>;
  myVotes(boardId: string): Promise<MyVotes>;
}

/** DotsState is what the UI draws: my dots (null before the server's first answer) and the last refusal. */
export interface DotsState {
  mine: MyVotes | null;
  /** error is the server's words for the last refused dot ('' when none). */
  error: string;
  /** sending counts the dots not answered yet. */
  sending: number;
}

type Op = { noteId: string; delta: 1 | -1 };

export class MyDots {
  private state: DotsState = { mine: null, error: '', sending: 0 };
  private readonly listeners = new Set<() => void>();
  private voteId: string | null = null;
  private queue: Op[] = [];
  private running = false;
  /** server is the last answer the server gave (what the shown state falls back to when a dot is refused). */
  private server: MyVotes | null = null;
  /** asked counts fetches, so an old answer does not overwrite a newer one. */
  private asked = 0;

  constructor(
    private readonly api: DotsApi,
    private readonly boardId: string,
  ) {}

  onChange = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };

  getSnapshot = (): DotsState => this.state;

  private set(next: Partial<DotsState>): void {
    this.state = { ...this.state, ...next };
    for (const cb of this.listeners) cb();
  }

  /**
   * follow is told the board's vote each time the header changes: a new
   * vote (or the first) fetches my dots; no vote forgets them.
   */
  follow(v: Vote | null): void {
    const id = v?.id ?? null;
    if (id === this.voteId) return;
    this.voteId = id;
    this.queue = [];
    this.server = null;
    this.set({ mine: null, error: '', sending: 0 });
    if (id) void this.refresh();
  }

  /** refresh asks the server for my dots again (a reconnect may have missed nothing, but a dot sent meanwhile from another tab counts). */
  async refresh(): Promise<void> {
    const voteId = this.voteId;
    if (!voteId) return;
    const n = ++this.asked;
    try {
      const m = clean(await this.api.myVotes(this.boardId));
      if (n !== this.asked || voteId !== this.voteId || this.running) return;
      if (m.voteId !== voteId) return; // a newer vote: its header is on its way
      this.server = m;
      this.set({ mine: m });
    } catch {
      // Offline or the vote just ended: the next header or reconnect asks again.
    }
  }

  /** cast puts a dot on noteId (1) or takes one back (-1): shown now, sent in order. */
  cast(noteId: string, delta: 1 | -1): void {
    const mine = this.state.mine;
    if (!mine || !this.voteId) return;
    this.queue.push({ noteId, delta });
    this.set({ mine: applyDelta(mine, noteId, delta), error: '', sending: this.state.sending + 1 });
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const voteId = this.voteId;
    try {
      while (this.queue.length && voteId === this.voteId) {
        const op = this.queue[0];
        try {
          const m = clean(await this.api.castVote(this.boardId, op.noteId, op.delta));
          if (voteId !== this.voteId) return;
          this.queue.shift();
          this.server = m;
          // The ops still queued are shown on top of the server's count.
          const shown = this.queue.reduce((acc, o) => applyDelta(acc, o.noteId, o.delta), m);
          this.set({ mine: shown, sending: this.queue.length });
        } catch (e) {
          if (voteId !== this.voteId) return;
          // Refused (no dots left, the vote closed…) or lost: drop what is
          // queued, say why, and show what the server has.
          this.queue = [];
          this.set({ mine: this.server, error: e instanceof Error ? e.message : String(e), sending: 0 });
          this.running = false;
          await this.refresh();
          return;
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** dismiss forgets the last error. */
  dismiss(): void {
    if (this.state.error) this.set({ error: '' });
  }
}
