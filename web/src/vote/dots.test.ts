import { describe, expect, it } from 'vitest';
import type { MyVotes, Vote } from '../api/types';
import { ApiError } from '../api/api';
import { MyDots, type DotsApi } from './dots';

const vote = (id = 'v1'): Vote => ({ id, state: 'open', scope: { kind: 'all' }, perPerson: 3, perNote: 1, anonymous: true, endsWithTimer: false, startedBy: 'a', startedAt: 0, voters: 0, dots: 0 });

/** FakeServer answers by hand: each call waits until the test resolves it. */
class FakeServer implements DotsApi {
  calls: { kind: 'cast' | 'mine'; noteId?: string; delta?: number; resolve: (m: MyVotes) => void; reject: (e: Error) => void }[] = [];
  castVote(_b: string, noteId: string, delta: 1 | -1) {
    return new Promise<MyVotes>((resolve, reject) => this.calls.push({ kind: 'cast', noteId, delta, resolve, reject }));
  }
  myVotes() {
    return new Promise<MyVotes>((resolve, reject) => this.calls.push({ kind: 'mine', resolve, reject }));
  }
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('MyDots', () => {
  it('asks for my dots when a vote appears, and forgets them when it goes', async () => {
    const srv = new FakeServer();
    const d = new MyDots(srv, 'b1');
    d.follow(vote());
    expect(srv.calls.map((c) => c.kind)).toEqual(['mine']);
    srv.calls[0].resolve({ voteId: 'v1', mine: { a: 1 }, left: 2 });
    await tick();
    expect(d.getSnapshot().mine).toEqual({ voteId: 'v1', mine: { a: 1 }, left: 2 });
    d.follow(vote()); // the same vote again (a header with new totals): not asked again
    expect(srv.calls).toHaveLength(1);
    d.follow(null);
    expect(d.getSnapshot().mine).toBeNull();
  });

  it('shows a dot at once, sends dots one at a time in order, and takes the server word', async () => {
    const srv = new FakeServer();
    const d = new MyDots(srv, 'b1');
    d.follow(vote());
    srv.calls[0].resolve({ voteId: 'v1', mine: {}, left: 3 });
    await tick();
    d.cast('a', 1);
    d.cast('b', 1);
    expect(d.getSnapshot().mine).toEqual({ voteId: 'v1', mine: { a: 1, b: 1 }, left: 1 });
    expect(d.getSnapshot().sending).toBe(2);
    expect(srv.calls.filter((c) => c.kind === 'cast')).toHaveLength(1); // the second waits for the first
    srv.calls[1].resolve({ voteId: 'v1', mine: { a: 1, x: 1 }, left: 1 }); // another tab's dot on x
    await tick();
    expect(d.getSnapshot().mine).toEqual({ voteId: 'v1', mine: { a: 1, x: 1, b: 1 }, left: 0 });
    expect(srv.calls[2]).toMatchObject({ kind: 'cast', noteId: 'b', delta: 1 });
    srv.calls[2].resolve({ voteId: 'v1', mine: { a: 1, x: 1, b: 1 }, left: 0 });
    await tick();
    expect(d.getSnapshot()).toMatchObject({ mine: { mine: { a: 1, x: 1, b: 1 }, left: 0 }, sending: 0, error: '' });
  });

  it("puts back the server's count and says why when a dot is refused", async () => {
    const srv = new FakeServer();
    const d = new MyDots(srv, 'b1');
    d.follow(vote());
    srv.calls[0].resolve({ voteId: 'v1', mine: { a: 1 }, left: 2 });
    await tick();
    d.cast('b', 1);
    d.cast('c', 1);
    srv.calls[1].reject(new ApiError(409, 'Voting is closed.', 'noteId'));
    await tick();
    expect(d.getSnapshot()).toMatchObject({ mine: { mine: { a: 1 }, left: 2 }, error: 'Voting is closed.', sending: 0 });
    // The queued dot was dropped, and my dots are asked for again.
    expect(srv.calls.slice(2).map((c) => c.kind)).toEqual(['mine']);
    d.dismiss();
    expect(d.getSnapshot().error).toBe('');
  });

  it('drops an answer about a vote that is no longer the board’s', async () => {
    const srv = new FakeServer();
    const d = new MyDots(srv, 'b1');
    d.follow(vote('v1'));
    d.follow(vote('v2'));
    srv.calls[0].resolve({ voteId: 'v1', mine: { a: 1 }, left: 2 });
    await tick();
    expect(d.getSnapshot().mine).toBeNull();
    srv.calls[1].resolve({ voteId: 'v2', mine: {}, left: 3 });
    await tick();
    expect(d.getSnapshot().mine).toEqual({ voteId: 'v2', mine: {}, left: 3 });
  });

  it('takes an answer with no map of dots as none', async () => {
    const srv = new FakeServer();
    const d = new MyDots(srv, 'b1');
    d.follow(vote());
    srv.calls[0].resolve({ voteId: 'v1', mine: null, left: 3 } as unknown as MyVotes);
    await tick();
    expect(d.getSnapshot().mine).toEqual({ voteId: 'v1', mine: {}, left: 3 });
  });

  it('casts nothing before it knows my dots', () => {
    const srv = new FakeServer();
    const d = new MyDots(srv, 'b1');
    d.follow(vote());
    d.cast('a', 1);
    expect(srv.calls.map((c) => c.kind)).toEqual(['mine']);
  });
});
