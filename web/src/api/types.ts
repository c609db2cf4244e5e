// Wire types of the public API (docs/api.md, docs/sync.md,
// docs/live-protocol.md). Rows keep every field they arrive with: fields this
// client does not know (written by other clients) travel back unchanged.

/** A sticky note as the server keeps it. */
export interface Note {
  id: string;
  title: string;
  content: string;
  x: number;
  y: number;
  /**
   * w and h are the note's size in board units (Corkboard's extension,
   * docs/sync.md "Note size"): both or neither, absent when never set (the
   * client then draws 220×160).
   */
  w?: number;
  h?: number;
  color: string;
  type: string;
  updatedAt: string;
  version?: number;
  deletedAt?: string | null;
  /**
   * baseVersion is sent in pushes only: the version of the server copy the
   * edit started from, so the server merges the row instead of replacing it.
   */
  baseVersion?: number;
  /** locked: only the board's owner may change or delete the note (docs/api.md, "Locks and roles"); absent when not. */
  locked?: boolean;
  /** createdBy: who first created the note, set by the server (absent on older notes: the owner's). */
  createdBy?: string;
  [extra: string]: unknown;
}

/** Role is what the owner lets an invitee do (docs/api.md, "Locks and roles"): view, add notes (and edit their own), or edit. */
export type Role = 'view' | 'add' | 'edit';

/** A tracker work item as the server keeps it. */
export interface TrackerItem {
  id: string;
  key: string;
  type: string;
  summary: string;
  description?: string;
  status?: string;
  parentId?: string;
  updatedAt: string;
  version?: number;
  deletedAt?: string | null;
  /** baseVersion is sent in pushes only, as Note's. */
  baseVersion?: number;
  [extra: string]: unknown;
}

/**
 * A connector: an arrow (or a line) from one note or frame to another
 * (Corkboard's extension, issue 24; docs/sync.md "Connectors and frames").
 * from and to are note or frame ids, which must exist once the push
 * applies; style is "arrow" (a head at `to`) or "line", "" an arrow; dash
 * is "solid" or "dashed", "" solid.
 */
export interface Connector {
  id: string;
  from: string;
  to: string;
  label: string;
  style: string;
  dash?: string;
  color: string;
  updatedAt: string;
  version?: number;
  deletedAt?: string | null;
  /** baseVersion is sent in pushes only, as Note's. */
  baseVersion?: number;
  [extra: string]: unknown;
}

/**
 * A frame: a named rectangle on the board (issue 24). What it holds is
 * geometric: the notes whose centre is inside it (docs/web-client.md,
 * "Frames"); the row has no list of members.
 */
export interface Frame {
  id: string;
  title: string;
  x: number;
  y: number;
  w: number;
  h: number;
  color: string;
  /** locked: the frame does not move or resize on the canvas until unlocked (the server stores it, the canvas enforces it). */
  locked: boolean;
  updatedAt: string;
  version?: number;
  deletedAt?: string | null;
  /** baseVersion is sent in pushes only, as Note's. */
  baseVersion?: number;
  [extra: string]: unknown;
}

/** Board metadata carried by pulls. */
export interface BoardMeta {
  id: string;
  name: string;
  version: number;
  updatedAt: string;
  /** timer is the board's countdown (absent when it has none; docs/live-protocol.md, "The timer"). */
  timer?: Timer;
  /** vote is the board's dot vote (absent when it has none; docs/api.md, "Dot voting"). */
  vote?: Vote;
}

/**
 * Timer is a board's countdown, in the server's clock (unix ms): a running
 * timer has endsAt, a paused one remainingMs. Turn endsAt into time left
 * with the offset session/clock.ts estimates, never with Date.now() alone.
 */
export interface Timer {
  state: 'running' | 'paused';
  durationMs: number;
  endsAt?: number;
  remainingMs?: number;
  phaseId?: string;
  startedBy: string;
  updatedAt: number;
}

/** TimerAction is what the board's owner asks of its timer (POST /api/boards/{id}/timer). */
export type TimerAction = { action: 'start'; durationMs: number; phaseId?: string } | { action: 'add'; durationMs: number } | { action: 'pause' | 'resume' | 'stop' };

/** TimerAnswer is the answer to a timer action: the board's timer after it (null: none). */
export interface TimerAnswer {
  timer: Timer | null;
  serverVersion: number;
  serverTime: number;
}

/** VoteScope is which notes a vote is on: all, the notes a frame holds, or the notes of one type. */
export type VoteScope = { kind: 'all' } | { kind: 'frame'; frameId: string } | { kind: 'type'; type: string };

/**
 * Vote is a board's dot vote as its header carries it: the totals
 * (voters, dots) while it is open or closed, the ranked results once
 * revealed (voters' emails in them unless anonymous). Nobody's own dots
 * are in it: they come from GET .../votes/mine.
 */
export interface Vote {
  id: string;
  state: 'open' | 'closed' | 'revealed';
  scope: VoteScope;
  perPerson: number;
  perNote: number;
  anonymous: boolean;
  endsWithTimer: boolean;
  startedBy: string;
  startedAt: number | string;
  voters: number;
  dots: number;
  results?: VoteResult[];
}

/** VoteResult is one note's count in a revealed vote (ranked: most dots first). */
export interface VoteResult {
  noteId: string;
  count: number;
  voters?: string[];
}

/** VoteAction is what the board's owner asks of its vote (POST /api/boards/{id}/vote). */
export type VoteAction = { action: 'start'; perPerson: number; perNote: number; anonymous: boolean; scope: VoteScope; endsWithTimer: boolean } | { action: 'close' | 'reveal' | 'clear' };

/** MyVotes is my dots in the board's vote (POST .../votes and GET .../votes/mine): per note, and how many I have left (0 unless open; voteId '' when the board has no vote). */
export interface MyVotes {
  voteId: string;
  mine: Record<string, number>;
  left: number;
}

/** A pull answer, or the body of a live `changes` message. */
export interface Changes {
  board?: BoardMeta;
  notes?: Note[];
  deletedNoteIds?: string[];
  trackerItems?: TrackerItem[];
  deletedTrackerItemIds?: string[];
  connectors?: Connector[];
  deletedConnectorIds?: string[];
  frames?: Frame[];
  deletedFrameIds?: string[];
  serverVersion: number;
  reset?: boolean;
  since?: number;
}

/** The body of POST /sync. */
export interface PushBody {
  clientVersion: number;
  board?: { name: string; updatedAt: string };
  notes: { upserted: Note[]; deleted: string[] };
  trackerItems: { upserted: TrackerItem[]; deleted: string[] };
  /** connectors and frames are sent only when a push has some (a server without them sees the spec's body). */
  connectors?: { upserted: Connector[]; deleted: string[] };
  frames?: { upserted: Frame[]; deleted: string[] };
}

/** One phase of a board; keys other than id are the client's. */
export interface Phase {
  id: string;
  name?: string;
  [extra: string]: unknown;
}

export interface Phases {
  phases: Phase[];
  currentPhaseId: string;
}

/** GET /access. */
export interface Access {
  hasAccess: boolean;
  isOwner: boolean;
  isUnclaimed: boolean;
  canEdit: boolean;
  /** role: the member's effective role (the owner's is edit); absent from older servers. */
  role?: Role;
  phases?: Phases;
}

/** What an invitee may do on a board, and the plan that decides it (GET/POST /invite). */
export interface InviteeAccess {
  email: string;
  canEdit: boolean;
  plan: string;
  /** role: what they may do (the lesser of the owner's choice and their plan's); chosenRole: the owner's choice. */
  role?: Role;
  chosenRole?: Role;
}

/** GET /invite; POST and DELETE answer the same lists. */
export interface Invites {
  invitedEmails: string[];
  /** Corkboard's extension: each invitee's access, in invitedEmails' order. */
  invitees?: InviteeAccess[];
  /** The plans whose invitees edit (the rest view only). */
  editPlans?: string[];
}

/** One entry of GET /api/boards. */
export interface BoardSummary {
  id: string;
  name: string;
  createdAt: string;
  ownerEmail: string;
}

/** A connection on the board (live hello/join/leave/pointer). */
export interface Peer {
  id: string;
  email: string;
  color: string;
}

/** PresentEntry is another connection on the board as hello, presence and who list it. */
export interface PresentEntry extends Peer {
  /** editing is the note whose editor it has open. */
  editing?: string;
  /** idle: no activity for 2 minutes (the server's flag). */
  idle?: boolean;
}

/**
 * HelloPresence is what `hello` says of who is here beside its `present`
 * page (docs/live-protocol.md): its entries are PresentEntry, presentCount
 * counts the others (absent from an older server, which lists everyone),
 * presentMore says the page was cut.
 */
export interface HelloPresence {
  present: PresentEntry[];
  presentCount?: number;
  presentMore?: boolean;
}

/**
 * LiveEvent is something a merge did to an earlier change, carried by a
 * live `changes` message (`events`). version is the version of that earlier
 * change: `overlap`, its lines were overwritten by the change in this
 * message (the lost text is in the changelog entry logKey); `revived`, the
 * note it deleted was brought back (by someone's offline edit).
 */
export interface LiveEvent {
  kind: 'overlap' | 'revived';
  table: 'note' | 'item' | 'connector' | 'frame';
  id: string;
  version: number;
  logKey?: string;
}

/** Server → client live messages. */
export type LiveMessage =
  | { type: 'hello'; serverVersion: number; you: Peer & { canEdit: boolean; role?: Role }; present: (Peer & { editing?: string })[] }
  | ({ type: 'changes'; from?: string; events?: LiveEvent[] } & Changes)
  /** Events of a push applied on another node (its rows come as changes). */
  | { type: 'events'; events: LiveEvent[] }
  | { type: 'ack'; id: string; serverVersion: number; replayed?: boolean }
  | { type: 'error'; id?: string; status: number; error: string; field?: string }
  | ({ type: 'join' } & Peer)
  | ({ type: 'leave' } & Peer)
  /** Who is here, coalesced (docs/live-protocol.md): replaces join/leave. count is every connection shown, this one included; more: the lists were cut (ask who). */
  | { type: 'presence'; joined?: PresentEntry[]; left?: string[]; idle?: string[]; active?: string[]; more?: boolean; count?: number }
  /** A page of who is here, the answer to a `who` request; next is "" on the last page. */
  | { type: 'who'; present: PresentEntry[]; next?: string }
  /** The view (centre in board coordinates, zoom) of the connection I follow. */
  | ({ type: 'view'; x: number; y: number; zoom: number } & Peer)
  /** The connection I followed left: following ended. */
  | { type: 'follow'; id: string; ended?: string }
  /** The owner brought everyone to their view. */
  | ({ type: 'summon'; x: number; y: number; zoom: number } & Peer)
  | ({ type: 'pointer'; x: number; y: number } & Peer)
  /** Another connection opened (noteId) or closed ("") a note's editor. */
  | ({ type: 'editing'; noteId: string } & Peer)
  | { type: 'pong'; id?: string }
  /** The person's access changed while the board is open (a plan change): what the server now answers. */
  | { type: 'access'; canEdit: boolean; role?: Role };

/** GET /api/config. */
export interface ClientConfig {
  loginCodesInLog: boolean;
}

/** The four changelog actions (spec: Changelog and snapshots). */
export type LogAction = 'create_note' | 'update_note' | 'delete_note' | 'rename_board';

/**
 * The changelog actions the server writes itself for a dot vote
 * (docs/changelog.md, "Entries the server writes itself"): listed and
 * read like the others, never posted, never restored.
 */
export type VoteLogAction = 'start_vote' | 'reveal_vote';

/** One entry of POST /log: content is a note snapshot or a rename record. */
export interface LogEntry {
  noteId: string;
  action: LogAction;
  content: string;
}

/** One row of GET /log. */
export interface LogInfo {
  key: string;
  noteId: string;
  action: LogAction | VoteLogAction;
  timestamp: string;
}

/** One row of GET /snapshot?list=true. */
export interface SnapshotInfo {
  key: string;
  timestamp: string;
}

/** A board as a restore of type "board" answers it. */
export interface BoardState {
  board: BoardMeta;
  phases?: Phases;
  notes: Note[];
  trackerItems: TrackerItem[];
  connectors?: Connector[];
  frames?: Frame[];
}

// Read-only links (docs/api.md, "Read-only links").

/** A board's read-only link as the owner's list shows it (never its token). */
export interface ReadOnlyLink {
  id: string;
  createdAt: string;
  expiresAt: string;
  createdBy: string;
}

/** POST /links: the new link, with its token and URL this once. */
export interface NewReadOnlyLink {
  id: string;
  url: string;
  token: string;
  createdAt: string;
  expiresAt: string;
}

/** GET /api/link, made with a link: the board it opens. */
export interface LinkInfo {
  boardId: string;
  boardName: string;
  expiresAt: string;
  canEdit: false;
}
