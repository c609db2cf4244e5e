import { describe, expect, it } from 'vitest';
import type { LiveMessage, PresentEntry } from '../api/types';
import { PresenceStore } from './presence';
import { FakeClock } from './testing';

/** frames is a fake animation frame: tests run the frame by hand. */
function frames() {
  const due: (() => void)[] = [];
  return {
    frame: (cb: () => void) => void due.push(cb),
    run: () => due.splice(0).forEach((cb) => cb()),
    get waiting() {
      return due.length;
    },
  };
}

function setup() {
  const clock = new FakeClock();
  const sent: object[] = [];
  let open = true;
  const f = frames();
  const p = new PresenceStore({ send: (m) => (open ? (sent.push(m), true) : false), clock, frame: f.frame });
  const ana = { id: 'c1', email: 'ana@x', color: '#111' };
  const ben = { id: 'c2', email: 'ben@x', color: '#222' };
  const hello = (present: PresentEntry[] = []): LiveMessage => ({ type: 'hello', serverVersion: 0, you: { id: 'me', email: 'me@x', color: '#000', canEdit: true }, present });
  return { clock, sent, p, f, ana, ben, hello, setOpen: (o: boolean) => (open = o) };
}

describe('PresenceStore', () => {
  it('tracks who is here and their pointers', () => {
    const { p, ana, hello } = setup();
    p.handle(hello([ana]));
    expect(p.getSnapshot().me?.id).toBe('me');
    p.handle({ type: 'pointer', ...ana, x: 5, y: 6 });
    expect(p.getSnapshot().peers.get('c1')).toMatchObject({ email: 'ana@x', x: 5, y: 6 });
    p.handle({ type: 'leave', ...ana });
    expect(p.getSnapshot().peers.size).toBe(0);
  });

  it('ignores messages that are not presence', () => {
    const { p } = setup();
    expect(p.handle({ type: 'changes', serverVersion: 1 })).toBe(false);
    expect(p.handle({ type: 'pong' })).toBe(false);
  });

  it('sends pointers at most every 50 ms, the latest position last', () => {
    const { p, clock, sent } = setup();
    p.sendPointer(1, 1);
    p.sendPointer(2, 2);
    clock.advance(0);
    p.sendPointer(3, 3);
    p.sendPointer(4, 4);
    clock.advance(49);
    expect(sent).toEqual([{ type: 'pointer', x: 2, y: 2 }]);
    clock.advance(1);
    expect(sent.at(-1)).toEqual({ type: 'pointer', x: 4, y: 4 });
  });

  it('knows who is editing which note, from hello and editing messages', () => {
    const { p, ana, ben, hello } = setup();
    p.handle(hello([{ ...ana, editing: 'n1' }, ben]));
    expect(p.editorsOf('n1')).toEqual([ana]);
    expect(p.editorsOf('n2')).toEqual([]);
    p.handle({ type: 'editing', ...ben, noteId: 'n1' });
    expect(p.editorsOf('n1').map((x) => x.id)).toEqual(['c1', 'c2']);
    p.handle({ type: 'editing', ...ana, noteId: '' });
    expect(p.editorsOf('n1')).toEqual([ben]);
    expect(p.getSnapshot().peers.get('c1')?.editing).toBeUndefined();
  });

  it('ends a connection’s editing when it leaves, and everyone’s when the channel is down', () => {
    const { p, ana, ben, hello } = setup();
    p.handle(hello([{ ...ana, editing: 'n1' }, { ...ben, editing: 'n2' }]));
    p.handle({ type: 'leave', ...ana });
    expect(p.editorsOf('n1')).toEqual([]);
    p.connection('connecting');
    expect(p.editorsOf('n2')).toEqual([ben]);
    p.connection('offline');
    expect(p.editorsOf('n2')).toEqual([]);
    expect(p.getSnapshot().peers.size).toBe(0);
  });

  it('keeps the editors map while pointers move', () => {
    const { p, ana, hello } = setup();
    p.handle(hello([{ ...ana, editing: 'n1' }]));
    const before = p.getSnapshot();
    p.handle({ type: 'pointer', ...ana, x: 1, y: 2 });
    const after = p.getSnapshot();
    expect(after).not.toBe(before);
    expect(after.editors).toBe(before.editors);
    expect(after.peers.get('c1')?.editing).toBe('n1'); // a pointer does not end the editing
  });

  it('announces my editor, once per change, and again on a new connection', () => {
    const { p, sent, hello, setOpen } = setup();
    p.setEditing('n1');
    p.setEditing('n1');
    expect(sent).toEqual([{ type: 'editing', noteId: 'n1' }]);
    expect(p.editing()).toBe('n1');
    setOpen(false); // reconnecting: nothing goes out…
    p.handle(hello());
    setOpen(true);
    p.handle(hello()); // …until the next hello
    expect(sent.at(-1)).toEqual({ type: 'editing', noteId: 'n1' });
    p.setEditing(null);
    expect(sent.at(-1)).toEqual({ type: 'editing', noteId: '' });
    const n = sent.length;
    p.handle(hello());
    expect(sent).toHaveLength(n); // nothing open: nothing to say
  });

  it('notifies at most once per frame', () => {
    const { p, f, ana, hello } = setup();
    let calls = 0;
    const unsub = p.onChange(() => calls++);
    p.handle(hello([ana]));
    for (let i = 0; i < 100; i++) p.handle({ type: 'pointer', ...ana, x: i, y: i });
    expect(calls).toBe(0);
    expect(f.waiting).toBe(1);
    f.run();
    expect(calls).toBe(1);
    expect(p.getSnapshot().peers.get('c1')?.x).toBe(99);
    unsub();
    p.handle({ type: 'pointer', ...ana, x: 0, y: 0 });
    expect(f.waiting).toBe(0); // nobody listens: no frame asked for
  });

  it('close stops the pointer timer and notifications; twice is fine', () => {
    const { p, clock, sent, f } = setup();
    p.onChange(() => {
      throw new Error('notified after close');
    });
    p.sendPointer(1, 1);
    p.handle({ type: 'join', id: 'c9', email: 'z@x', color: '#999' });
    p.close();
    p.close();
    clock.advance(100);
    f.run();
    expect(sent).toEqual([]);
  });
});

describe('PresenceStore: who is here (issue 25)', () => {
  it('takes idle flags, counts and coalesced presence changes', () => {
    const { p, ana, ben, hello } = setup();
    p.handle({ ...hello([{ ...ana, idle: true }]), presentCount: 150, presentMore: true } as unknown as LiveMessage);
    expect(p.getSnapshot()).toMatchObject({ count: 150, more: true });
    expect(p.getSnapshot().peers.get('c1')?.idle).toBe(true);
    p.handle({ type: 'presence', joined: [ben, { id: 'me', email: 'me@x', color: '#000' }], active: ['c1'], count: 152 }); // me included, in joined too
    expect(p.getSnapshot().peers.get('c1')?.idle).toBeUndefined();
    expect(p.getSnapshot().peers.get('c2')).toMatchObject({ email: 'ben@x' });
    expect(p.getSnapshot().count).toBe(151);
    p.handle({ type: 'presence', idle: ['c2'], left: ['c1'], count: 151 });
    expect([...p.getSnapshot().peers.keys()]).toEqual(['c2']);
    expect(p.getSnapshot().peers.get('c2')?.idle).toBe(true);
  });

  it('counts from the list when an older server sends no count, and from join/leave', () => {
    const { p, ana, ben, hello } = setup();
    p.handle(hello([ana]));
    expect(p.getSnapshot()).toMatchObject({ count: 1, more: false });
    p.handle({ type: 'join', ...ben });
    expect(p.getSnapshot().count).toBe(2);
    p.handle({ type: 'leave', ...ana });
    expect(p.getSnapshot().count).toBe(1);
    p.handle({ type: 'presence', left: ['c2'] });
    expect(p.getSnapshot().count).toBe(0);
  });

  it('a leaver that was editing stops editing', () => {
    const { p, ana, hello } = setup();
    p.handle(hello([{ ...ana, editing: 'n1' }]));
    expect(p.editorsOf('n1')).toHaveLength(1);
    p.handle({ type: 'presence', left: ['c1'], count: 1 });
    expect(p.editorsOf('n1')).toHaveLength(0);
    expect(p.getSnapshot().count).toBe(0);
  });

  it('asks who for the next page only when the server has more, one request at a time', () => {
    const { p, ana, ben, hello, sent } = setup();
    p.handle({ ...hello([ana]), presentCount: 2, presentMore: true } as unknown as LiveMessage);
    expect(p.who()).toBe(true);
    expect(p.who()).toBe(false);
    expect(sent).toEqual([{ type: 'who', after: '', limit: 100 }]);
    p.handle({ type: 'who', present: [ana, ben], next: '' });
    expect(p.getSnapshot()).toMatchObject({ count: 2, more: false });
    expect(p.who()).toBe(false);
  });

  it('sends active at most every 30 s', () => {
    const { p, clock, sent } = setup();
    p.sendActive();
    clock.advance(29_999);
    p.sendActive();
    clock.advance(1);
    p.sendActive();
    expect(sent).toEqual([{ type: 'active' }, { type: 'active' }]);
  });

  it('sends my view again on a new connection', () => {
    const { p, clock, sent, hello } = setup();
    p.sendView(1, 2, 1);
    clock.advance(100);
    sent.length = 0;
    p.handle(hello());
    expect(sent).toEqual([{ type: 'view', x: 1, y: 2, zoom: 1 }]);
  });
});
