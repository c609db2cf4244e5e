import { describe, expect, it } from 'vitest';
import type { LiveMessage } from '../api/types';
import { PresenceStore } from '../sync/presence';
import { FakeClock } from '../sync/testing';
import { FollowStore, type View } from './follow';

function setup({ viewport = true } = {}) {
  const clock = new FakeClock();
  const sent: Record<string, unknown>[] = [];
  const presence = new PresenceStore({ send: (m) => (sent.push(m as Record<string, unknown>), true), clock, frame: () => {} });
  const f = new FollowStore(presence);
  f.attach();
  const shown: [View, string][] = [];
  let mine: View = { x: 0, y: 0, zoom: 1 };
  const vp = { show: (v: View, how: string) => void shown.push([v, how]), current: () => mine };
  if (viewport) f.setViewport(vp);
  const ana = { id: 'c1', email: 'ana@x.io', color: '#e6194b' };
  const ben = { id: 'c2', email: 'ben@x.io', color: '#4363d8' };
  presence.handle({ type: 'hello', serverVersion: 1, you: { id: 'me', email: 'me@x.io', color: '#000', canEdit: true }, present: [ana, ben], presentCount: 2 } as LiveMessage);
  const follows = () => sent.filter((m) => m.type === 'follow');
  return { clock, sent, presence, f, shown, ana, ben, vp, follows, setMine: (v: View) => (mine = v) };
}

describe('FollowStore', () => {
  it('follows: each view of theirs moves mine, animated; others’ views do not', () => {
    const { presence, f, shown, ana, ben, follows } = setup();
    f.follow(ana);
    expect(follows()).toEqual([{ type: 'follow', id: 'c1' }]);
    expect(f.getSnapshot().following).toMatchObject({ id: 'c1', name: 'ana', once: false });
    presence.handle({ type: 'view', ...ana, x: 10, y: 20, zoom: 2 });
    presence.handle({ type: 'view', ...ben, x: 99, y: 99, zoom: 1 });
    presence.handle({ type: 'view', ...ana, x: 11, y: 21, zoom: 2 });
    expect(shown).toEqual([
      [{ x: 10, y: 20, zoom: 2 }, 'follow'],
      [{ x: 11, y: 21, zoom: 2 }, 'follow'],
    ]);
    expect(f.getSnapshot().following).not.toBeNull();
  });

  it('Go to: asks for their view once, jumps to it, and ends a follow of someone else', () => {
    const { presence, f, shown, ana, ben, follows, sent } = setup();
    f.follow(ben);
    f.follow(ana, true);
    expect(sent.at(-1)).toEqual({ type: 'view?', id: 'c1' });
    expect(f.getSnapshot().following).toMatchObject({ id: 'c1', once: true });
    presence.handle({ type: 'view', ...ben, x: 1, y: 1, zoom: 1 });
    presence.handle({ type: 'view', ...ana, x: 5, y: 6, zoom: 0.5 });
    expect(shown).toEqual([[{ x: 5, y: 6, zoom: 0.5 }, 'jump']]);
    expect(f.getSnapshot().following).toBeNull();
    expect(follows()).toEqual([
      { type: 'follow', id: 'c2' },
      { type: 'follow', id: '' },
    ]);
    presence.handle({ type: 'view', ...ana, x: 7, y: 8, zoom: 0.5 });
    expect(shown).toHaveLength(1);
  });

  it('stops when I move my view myself, not when the follow moves it', () => {
    const { f, ana, follows } = setup();
    f.follow(ana);
    f.viewChanged({ x: 1, y: 1, zoom: 1 }, false);
    expect(f.getSnapshot().following).not.toBeNull();
    f.viewChanged({ x: 50, y: 1, zoom: 1 }, true);
    expect(f.getSnapshot()).toMatchObject({ following: null, notice: 'Stopped following ana' });
    expect(follows().at(-1)).toEqual({ type: 'follow', id: '' });
  });

  it('stops with Stop, when they leave, and when the server says following ended', () => {
    const { presence, f, ana, ben } = setup();
    f.follow(ana);
    f.stop();
    expect(f.getSnapshot().following).toBeNull();

    f.follow(ana);
    presence.handle({ type: 'presence', left: ['c1'], count: 2 });
    expect(f.getSnapshot()).toMatchObject({ following: null, notice: 'ana left: you are no longer following them' });

    f.follow(ben);
    presence.handle({ type: 'follow', id: '', ended: 'c2' });
    expect(f.getSnapshot()).toMatchObject({ following: null, notice: 'ben left: you are no longer following them' });
  });

  it('ends when the server refuses the follow (they had gone)', () => {
    const { presence, f, ana } = setup();
    f.follow(ana);
    presence.handle({ type: 'error', status: 404, error: 'No connection c1 on this board.', field: 'id' });
    expect(f.getSnapshot()).toMatchObject({ following: null, notice: 'ana left: you are no longer following them' });
  });

  it('follows again after a reconnect (the presence store sends it with the new hello)', () => {
    const { presence, f, ana, sent } = setup();
    f.follow(ana);
    sent.length = 0;
    presence.handle({ type: 'hello', serverVersion: 2, you: { id: 'me2', email: 'me@x.io', color: '#000', canEdit: true }, present: [ana] });
    expect(sent).toContainEqual({ type: 'follow', id: 'c1' });
  });

  it('a summon jumps to the owner’s view with a toast saying who, and ends a follow', () => {
    const { presence, f, shown, ana, ben } = setup();
    f.follow(ben);
    presence.handle({ type: 'summon', ...ana, x: 300, y: -40, zoom: 1.5 });
    expect(shown).toEqual([[{ x: 300, y: -40, zoom: 1.5 }, 'jump']]);
    const s = f.getSnapshot();
    expect(s.following).toBeNull();
    expect(s.toast?.text).toBe('ana brought everyone here');
    presence.handle({ type: 'summon', ...ana, x: 0, y: 0, zoom: 1 });
    expect(f.getSnapshot().toast?.key).not.toBe(s.toast?.key);
    f.dismissToast();
    expect(f.getSnapshot().toast).toBeNull();
  });

  it('keeps a view that comes before the canvas, and shows it when the canvas comes', () => {
    const { presence, f, shown, ana, vp } = setup({ viewport: false });
    presence.handle({ type: 'summon', ...ana, x: 1, y: 2, zoom: 1 });
    expect(shown).toHaveLength(0);
    f.setViewport(vp);
    expect(shown).toEqual([[{ x: 1, y: 2, zoom: 1 }, 'jump']]);
  });

  it('bring everyone sends my view as a summon', () => {
    const { f, sent, setMine } = setup();
    setMine({ x: 12.34, y: -5, zoom: 0.75 });
    expect(f.bringEveryone()).toBe(true);
    expect(sent.at(-1)).toEqual({ type: 'summon', x: 12.3, y: -5, zoom: 0.75 });
    expect(f.getSnapshot().notice).toBe('Everyone was brought to your view');
  });

  it('shares my view, at most 10 a second, the latest last', () => {
    const { f, clock, sent } = setup();
    sent.length = 0;
    f.viewChanged({ x: 1, y: 1, zoom: 1 }, true);
    f.viewChanged({ x: 2, y: 2, zoom: 1 }, true);
    clock.advance(0);
    f.viewChanged({ x: 3, y: 3, zoom: 1 }, true);
    f.viewChanged({ x: 4, y: 4, zoom: 2 }, true);
    clock.advance(99);
    expect(sent).toEqual([{ type: 'view', x: 2, y: 2, zoom: 1 }]);
    clock.advance(1);
    expect(sent.at(-1)).toEqual({ type: 'view', x: 4, y: 4, zoom: 2 });
    // The same view again sends nothing.
    f.viewChanged({ x: 4, y: 4, zoom: 2 }, true);
    clock.advance(500);
    expect(sent).toHaveLength(2);
  });
});
