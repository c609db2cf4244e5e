import { describe, expect, it, vi } from 'vitest';
import { ApiError, createApi, linkFetch, liveUrl, LINK_HEADER } from '../api/api';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, linkPath, linkState, linkTokenOf, viewerAccess, when } from './links';

const TOKEN = 'abcdefghijABCDEFGHIJ0123456789_-abcdefghij'.slice(0, 43).padEnd(43, 'x');

describe('read-only link pages', () => {
  it('knows a link page by its token, and nothing else', () => {
    expect(TOKEN).toHaveLength(43);
    expect(linkTokenOf(linkPath(TOKEN))).toBe(TOKEN);
    expect(linkTokenOf(`/l/${TOKEN}/`)).toBe(TOKEN);
    expect(linkTokenOf(`/l/${TOKEN}x`)).toBeNull();
    expect(linkTokenOf(`/l/${TOKEN.slice(1)}`)).toBeNull();
    expect(linkTokenOf(`/l/${TOKEN.slice(1)}=`)).toBeNull();
    expect(linkTokenOf(`/b/${TOKEN}`)).toBeNull();
    expect(linkTokenOf('/')).toBeNull();
  });

  it('sends the token on every request, without cookies or Referer', async () => {
    const f = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => new Response(JSON.stringify({ boardId: 'b1', boardName: 'B', expiresAt: '2026-12-01T00:00:00Z', canEdit: false })));
    const api = createApi(linkFetch(TOKEN, f as unknown as typeof fetch));
    expect((await api.link()).boardId).toBe('b1');
    await api.pull('b1', 0);
    for (const [, init] of f.mock.calls) {
      expect(new Headers(init?.headers).get(LINK_HEADER)).toBe(TOKEN);
      expect(init?.credentials).toBe('omit');
      expect(init?.referrerPolicy).toBe('no-referrer');
    }
    expect(f.mock.calls.map(([u]) => String(u))).toEqual(['/api/link', '/api/boards/b1/sync?since=0']);
  });

  it('keeps the headers a request brings (an idempotency key) beside the token', async () => {
    const f = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => new Response('{"serverVersion":1}'));
    await createApi(linkFetch(TOKEN, f as unknown as typeof fetch)).push('b1', { clientVersion: 0, notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [], deleted: [] } } as unknown as Parameters<ReturnType<typeof createApi>['push']>[1], 'k1');
    const h = new Headers(f.mock.calls[0][1]?.headers);
    expect(h.get('Idempotency-Key')).toBe('k1');
    expect(h.get(LINK_HEADER)).toBe(TOKEN);
  });

  it('opens the live socket with the link', () => {
    const loc = { protocol: 'https:', host: 'board.example.com' };
    expect(liveUrl('b1', 7, loc, TOKEN)).toBe(`wss://board.example.com/api/boards/b1/live?since=7&link=${TOKEN}`);
    expect(liveUrl('b1', 7, loc)).toBe('wss://board.example.com/api/boards/b1/live?since=7');
  });

  it('says a link no longer works when the server refuses it', () => {
    const info = { boardId: 'b1', boardName: 'B', expiresAt: '2026-12-01T00:00:00Z', canEdit: false as const };
    expect(linkState({ info })).toEqual({ s: 'open', info });
    expect(linkState({ error: new ApiError(401, 'This link no longer works.') })).toEqual({ s: 'gone' });
    expect(linkState({ error: new ApiError(403, 'A read-only link can only view the board.') })).toEqual({ s: 'gone' });
    expect(linkState({ error: new ApiError(0, 'offline') })).toEqual({ s: 'error', message: 'offline', offline: true });
    expect(linkState({ error: new ApiError(503, 'down') })).toEqual({ s: 'error', message: 'down', offline: false });
  });

  it('views and never edits', () => {
    expect(viewerAccess()).toEqual({ hasAccess: true, isOwner: false, isUnclaimed: false, canEdit: false });
  });
});

describe('the share dialog’s links', () => {
  it('offers lives the server takes, starting on one of them', () => {
    for (const c of EXPIRY_CHOICES) {
      expect(c.hours).toBeGreaterThanOrEqual(1);
      expect(c.hours).toBeLessThanOrEqual(8760);
    }
    expect(EXPIRY_CHOICES.map((c) => c.hours)).toContain(DEFAULT_EXPIRY);
  });

  it('says when a link was made and ends as people read dates', () => {
    expect(when('2026-12-04T08:00:00Z', 'en-GB')).toMatch(/^4 Dec 2026, \d\d:00$/);
  });
});
