// The one module that talks HTTP to the server. Every endpoint the client
// uses is a typed function here; failures are ApiError with the server's
// {error, field} and Retry-After.
import type { LinkInfo, NewReadOnlyLink, ReadOnlyLink } from './types';
import type { Access, BoardState, BoardSummary, Changes, ClientConfig, InviteeAccess, Invites, LogAction, LogEntry, LogInfo, Note, MyVotes, Phases, PushBody, SnapshotInfo, TimerAction, TimerAnswer, Vote, VoteAction, Role } from './types';
import type { VoteLogAction } from './types';

/** ApiError is a non-2xx answer, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    /** Seconds from Retry-After, when the server sent it. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** offline: the request never got an answer. */
  get offline(): boolean {
    return this.status === 0;
  }
}

type Fetch = typeof fetch;

async function request<T>(f: Fetch, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, asText = false, onAnswer?: (res: Response) => void): Promise<T> {
  let res: Response;
  try {
    res = await f(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'The server cannot be reached. Check your connection.');
  }
  onAnswer?.(res);
  let data: unknown = undefined;
  const text = await res.text().catch(() => '');
  if (asText && res.ok) return text as T;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }
  if (!res.ok) {
    const err = (data ?? {}) as { error?: string; field?: string };
    const ra = Number(res.headers.get('Retry-After'));
    throw new ApiError(res.status, err.error || `The server answered ${res.status}.`, err.field, Number.isFinite(ra) && ra > 0 ? ra : undefined);
  }
  return data as T;
}

const b = (id: string) => `/api/boards/${encodeURIComponent(id)}`;

/** createApi binds every endpoint to a fetch (tests pass their own). */
export function createApi(f: Fetch = (...a) => fetch(...a)) {
  return {
    config: () => request<ClientConfig>(f, 'GET', '/api/config'),
    sendOtp: (email: string) => request<{ ok: true }>(f, 'POST', '/api/auth/send-otp', { email }),
    verifyOtp: (email: string, code: string) => request<{ ok: true }>(f, 'POST', '/api/auth/verify-otp', { email, code }),
    me: () => request<{ email: string }>(f, 'GET', '/api/auth/me'),
    logout: () => request<{ ok: true }>(f, 'GET', '/api/auth/logout'),

    listBoards: () => request<{ boards: BoardSummary[] }>(f, 'GET', '/api/boards'),
    access: (id: string) => request<Access>(f, 'GET', `${b(id)}/access`),
    claim: (id: string) => request<{ ok: true }>(f, 'POST', `${b(id)}/access`),
    setPhases: (id: string, phases: Phases) => request<{ ok: true; phases: Phases }>(f, 'PATCH', `${b(id)}/access`, { phases }),
    listInvites: (id: string) => request<Invites>(f, 'GET', `${b(id)}/invite`),
    /** invite answers the new invitee's access; mailed tells whether an invitation e-mail went out. */
    invite: (id: string, email: string) =>
      request<Invites & { ok: true; added: boolean; invitee?: InviteeAccess; mailed?: boolean }>(f, 'POST', `${b(id)}/invite`, { email }),
    /** setRole gives an invitee a role (docs/api.md, "Locks and roles"); the answer is the invite lists with the invitee's access. */
    setRole: (id: string, email: string, role: Role) =>
      request<Invites & { ok: true; changed: boolean; invitee?: InviteeAccess }>(f, 'PATCH', `${b(id)}/invite`, { email, role }),
    uninvite: (id: string, email: string) => request<Invites & { ok: true; removed: boolean }>(f, 'DELETE', `${b(id)}/invite`, { email }),

    pull: (id: string, since: number) => request<Changes>(f, 'GET', `${b(id)}/sync?since=${since}`),
    /** push answers replayed: true when the key had been applied before (Idempotent-Replayed). */
    push: async (id: string, body: PushBody, idempotencyKey: string): Promise<{ serverVersion: number; replayed?: boolean }> => {
      let replayed = false;
      const answer = await request<{ serverVersion: number }>(f, 'POST', `${b(id)}/sync`, body, { 'Idempotency-Key': idempotencyKey }, false, (res) => {
        replayed = res.ok && res.headers.get('Idempotent-Replayed') === 'true';
      });
      return replayed ? { ...answer, replayed } : answer;
    },

    // Changelog and snapshots (docs/changelog.md).
    postLog: (id: string, entries: LogEntry[]) => request<{ ok: true; keys: string[] }>(f, 'POST', `${b(id)}/log`, { entries }),
    listLog: (id: string, q: { noteId?: string; action?: LogAction | VoteLogAction; before?: string; limit?: number } = {}) => {
      const p = new URLSearchParams();
      if (q.noteId) p.set('noteId', q.noteId);
      if (q.action) p.set('action', q.action);
      if (q.before) p.set('before', q.before);
      if (q.limit) p.set('limit', String(q.limit));
      const qs = p.toString();
      return request<{ entries: LogInfo[] }>(f, 'GET', `${b(id)}/log${qs ? '?' + qs : ''}`);
    },
    logEntry: (id: string, key: string) => request<string>(f, 'GET', `${b(id)}/log/${encodeURIComponent(key)}`, undefined, {}, true),
    restoreNote: (id: string, logKey: string) => request<Note>(f, 'POST', `${b(id)}/log/restore`, { logKey, type: 'note' }),
    restoreBoard: (id: string, logKey: string) => request<BoardState>(f, 'POST', `${b(id)}/log/restore`, { logKey, type: 'board' }),
    snapshot: (id: string, key?: string) => request<string>(f, 'GET', `${b(id)}/snapshot${key ? '?key=' + encodeURIComponent(key) : ''}`, undefined, {}, true),
    listSnapshots: (id: string) => request<{ snapshots: SnapshotInfo[] }>(f, 'GET', `${b(id)}/snapshot?list=true`),
    createSnapshot: (id: string) => request<{ ok: true; key: string }>(f, 'POST', `${b(id)}/snapshot`),

    // The board's timer (docs/api.md, "The board's timer").
    /** serverTime is the server's clock in unix ms (GET /api/time, no session needed). */
    serverTime: () => request<{ serverTime: number }>(f, 'GET', '/api/time'),
    /** timer acts on the board's timer (its owner only) and answers the timer after it. */
    timer: (id: string, action: TimerAction) => request<TimerAnswer>(f, 'POST', `${b(id)}/timer`, action),

    // Dot voting (docs/api.md, "Dot voting").
    /** vote acts on the board's vote (its owner only) and answers the vote after it (null after a clear: 204). */
    vote: async (id: string, action: VoteAction) => (await request<Vote | undefined>(f, 'POST', `${b(id)}/vote`, action)) ?? null,
    /** castVote puts a dot on a note (delta 1) or takes one back (-1), and answers my dots after it. */
    castVote: (id: string, noteId: string, delta: 1 | -1) => request<MyVotes>(f, 'POST', `${b(id)}/votes`, { noteId, delta }),
    /** myVotes answers my dots in the board's vote. */
    myVotes: (id: string) => request<MyVotes>(f, 'GET', `${b(id)}/votes/mine`),

    /** importCanvas writes a JSON Canvas document into a board, as one push (docs/api.md, "JSON Canvas export and import"). */
    importCanvas: (id: string, doc: unknown) => request<{ serverVersion: number; notes: number; frames: number; connectors: number }>(f, 'POST', `${b(id)}/canvas`, doc),

    // Read-only links (docs/api.md, "Read-only links").
    /** listLinks lists the board's working links (its owner only). */
    listLinks: (id: string) => request<{ links: ReadOnlyLink[] }>(f, 'GET', `${b(id)}/links`),
    /** createLink makes a link that works expiresInHours (1 to 8760); its token comes this once. */
    createLink: (id: string, expiresInHours: number) => request<NewReadOnlyLink>(f, 'POST', `${b(id)}/links`, { expiresInHours }),
    revokeLink: (id: string, linkId: string) => request<void>(f, 'DELETE', `${b(id)}/links/${encodeURIComponent(linkId)}`),
    /** link answers the board a link opens; only an API made by linkFetch can ask. */
    link: () => request<LinkInfo>(f, 'GET', '/api/link'),
  };
}

/** Api is the client's view of the server. */
export type Api = ReturnType<typeof createApi>;

/** logUrl is where changelog entries are posted (the unload beacon uses it). */
export const logUrl = (boardId: string) => `${b(boardId)}/log`;

/** snapshotDownloadUrl is a link that saves the board (or one snapshot) as Markdown. */
export const snapshotDownloadUrl = (boardId: string, key?: string) => `${b(boardId)}/snapshot?download=1${key ? '&key=' + encodeURIComponent(key) : ''}`;

/** canvasDownloadUrl is a link that saves the board as a JSON Canvas file (<name>.canvas). */
export const canvasDownloadUrl = (boardId: string) => `${b(boardId)}/canvas?download=1`;

/** liveUrl is the WebSocket address of a board's live channel; link is a read-only link's token, for its page. */
export function liveUrl(boardId: string, since: number, loc: { protocol: string; host: string } = location, link?: string): string {
  const proto = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${loc.host}${b(boardId)}/live?since=${since}${link ? '&link=' + encodeURIComponent(link) : ''}`;
}

/** LINK_HEADER carries a read-only link's token on every request of its page. */
export const LINK_HEADER = 'X-Corkboard-Link';

/**
 * linkFetch is fetch for a read-only link's page: every request carries
 * the link's token, sends no cookie (the link decides, not a session the
 * browser may also hold) and no Referer.
 */
export function linkFetch(token: string, f: Fetch = (...a) => fetch(...a)): Fetch {
  return (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set(LINK_HEADER, token);
    return f(input, { ...init, headers, credentials: 'omit', referrerPolicy: 'no-referrer' });
  };
}
