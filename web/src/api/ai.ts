// The AI endpoints (docs/ai.md), apart from the chat's UI message stream,
// which useChat reads through its own transport. Like api.ts this is a
// module that calls fetch; it is imported only by the lazily loaded AI code,
// so the board opens without it.
import { ApiError } from './api';

/** The body of the quota 429 (spec: AI quota error body). */
export interface Quota {
  used: number;
  limit: number;
  plan: string;
}

/** What went wrong, in the terms a person is told about it. */
export type AiErrorKind =
  | 'quota' // the monthly credits are spent (429 with used/limit/plan)
  | 'rate' // too many requests this minute (429 with Retry-After)
  | 'unavailable' // 503: Ollama or its model is not there
  | 'invalid' // 400 / 413: the request was refused, field names what
  | 'upstream' // 502: the model answered badly
  | 'cut' // the answer stopped midway; partial holds what arrived
  | 'offline' // no answer at all
  | 'session' // 401
  | 'access' // 403 / 404 on the board
  | 'other';

/** AiError is a failed AI request, classified for the message shown. */
export class AiError extends ApiError {
  constructor(
    status: number,
    message: string,
    readonly kind: AiErrorKind,
    opts: { field?: string; retryAfter?: number; quota?: Quota; partial?: string; commands?: string[] } = {},
  ) {
    super(status, message, opts.field, opts.retryAfter);
    this.name = 'AiError';
    this.quota = opts.quota;
    this.partial = opts.partial;
    this.commands = opts.commands;
  }
  /** The quota body, for kind 'quota'. */
  readonly quota?: Quota;
  /** Text that arrived before the answer was cut, for kind 'cut'. */
  readonly partial?: string;
  /** The server's list of commands, for an unknown note-ai command. */
  readonly commands?: string[];
}

function kindOf(status: number, quota: Quota | undefined): AiErrorKind {
  if (status === 429) return quota ? 'quota' : 'rate';
  if (status === 503) return 'unavailable';
  if (status === 400 || status === 413 || status === 422) return 'invalid';
  if (status === 502) return 'upstream';
  if (status === 401) return 'session';
  if (status === 403 || status === 404) return 'access';
  return 'other';
}

function isQuota(v: unknown): v is Quota {
  const q = v as Quota | null;
  return !!q && typeof q.used === 'number' && typeof q.limit === 'number' && typeof q.plan === 'string';
}

/** aiErrorFrom turns a non-2xx answer into an AiError. */
async function aiErrorFrom(res: Response): Promise<AiError> {
  const text = await res.text().catch(() => '');
  let body: { error?: unknown; field?: unknown; commands?: unknown } & Partial<Quota> = {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object') body = v;
  } catch {
    // Not JSON (a proxy's page): the status alone decides.
  }
  const quota = res.status === 429 && isQuota(body) ? { used: body.used!, limit: body.limit!, plan: body.plan! } : undefined;
  const ra = Number(res.headers.get('Retry-After'));
  const message = typeof body.error === 'string' && body.error ? body.error : `The server answered ${res.status}.`;
  return new AiError(res.status, message, kindOf(res.status, quota), {
    field: typeof body.field === 'string' ? body.field : undefined,
    retryAfter: Number.isFinite(ra) && ra > 0 ? ra : undefined,
    quota,
    commands: Array.isArray(body.commands) ? body.commands.filter((c): c is string => typeof c === 'string') : undefined,
  });
}

const offline = () => new AiError(0, 'The server cannot be reached. Check your connection.', 'offline');

type Fetch = typeof fetch;
let fetchImpl: Fetch = (...a) => fetch(...a);

/** setAiFetch replaces fetch for tests; it returns the previous one. */
export function setAiFetch(f: Fetch): Fetch {
  const prev = fetchImpl;
  fetchImpl = f;
  return prev;
}

/** aiFetch is fetch with the session cookie; it throws AiError for any failure. */
export async function aiFetch(url: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetchImpl(url, { credentials: 'same-origin', ...init });
  } catch (e) {
    if (isAbort(e, init.signal)) throw e;
    throw offline();
  }
  if (!res.ok) throw await aiErrorFrom(res);
  return res;
}

function isAbort(e: unknown, signal?: AbortSignal | null): boolean {
  return !!signal?.aborted || (e instanceof DOMException && e.name === 'AbortError');
}

const url = (path: string) => `/api/canvas/${path}`;

function post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return aiFetch(url(path), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal });
}

/** aiJson posts body to /api/canvas/<path> and returns the JSON answer. */
export async function aiJson<T>(path: string, body: unknown, opts: { signal?: AbortSignal } = {}): Promise<T> {
  const res = await post(path, body, opts.signal);
  try {
    return (await res.json()) as T;
  } catch (e) {
    if (isAbort(e, opts.signal)) throw e;
    throw new AiError(res.status, 'The answer from the server was not complete.', 'cut');
  }
}

/**
 * aiText posts body to /api/canvas/<path> and reads the plain-text stream,
 * calling onText with the whole text so far after each chunk. A stream
 * that breaks after its first byte (the server aborts a text answer that
 * fails midway) throws AiError 'cut' with the text that arrived. An abort
 * through opts.signal rejects with the AbortError as fetch does.
 */
export async function aiText(path: string, body: unknown, onText: (soFar: string) => void, opts: { signal?: AbortSignal } = {}): Promise<string> {
  const res = await post(path, body, opts.signal);
  if (!res.body) {
    const t = await res.text();
    onText(t);
    return t;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = dec.decode(value, { stream: true });
      if (chunk) {
        text += chunk;
        onText(text);
      }
    }
  } catch (e) {
    if (isAbort(e, opts.signal)) throw e;
    throw new AiError(res.status, 'The answer was cut off.', 'cut', { partial: text });
  }
  const rest = dec.decode();
  if (rest) {
    text += rest;
    onText(text);
  }
  return text;
}

/** A note-ai answer split into its parts. */
export interface NoteAnswer {
  title: string;
  body: string;
  /** complete: the `---` line after the title has arrived. */
  complete: boolean;
}

/**
 * parseNoteAnswer splits `TITLE: <title>\n---\n<body>` (docs/ai.md, plain
 * text stream). It is tolerant while the answer streams: before the `---`
 * line the title is what arrived of it and the body is empty; text without
 * a TITLE line is all body.
 */
export function parseNoteAnswer(text: string): NoteAnswer {
  const t = text.replace(/\r\n/g, '\n');
  const m = /^\s*TITLE:[ \t]*([^\n]*)(\n?)/i.exec(t);
  if (!m) return { title: '', body: t, complete: false };
  const title = m[1].trim();
  const rest = t.slice(m[0].length);
  if (!m[2]) return { title, body: '', complete: false };
  const sep = /^[ \t]*---[ \t]*(\n|$)/.exec(rest);
  if (!sep) {
    // The separator is still arriving ("-", "--") or the model skipped it.
    if (/^[ \t]*-{0,3}[ \t]*$/.test(rest)) return { title, body: '', complete: false };
    return { title, body: rest, complete: true };
  }
  return { title, body: rest.slice(sep[0].length), complete: true };
}

/** Usage is GET /api/me/usage (docs/billing.md). */
export interface Usage {
  plan: string;
  used: number;
  limit: number;
  resetsAt: string;
}

/** getUsage reads the caller's plan and this month's credits. */
export async function getUsage(opts: { signal?: AbortSignal } = {}): Promise<Usage> {
  const res = await aiFetch('/api/me/usage', { method: 'GET', signal: opts.signal });
  return (await res.json()) as Usage;
}

/** The note-ai commands (spec: AI endpoints), as the editor offers them. */
export const NOTE_COMMANDS = [
  { command: 'generate-prd', label: 'PRD', description: 'A product requirements document from this note' },
  { command: 'generate-epic', label: 'Epic', description: 'An epic with its goal, scope and stories' },
  { command: 'generate-story', label: 'User story', description: 'A user story with acceptance criteria' },
  { command: 'generate-decision', label: 'Decision record', description: 'The decision, the options weighed and why' },
  { command: 'generate-feedback', label: 'Feedback summary', description: 'Feedback grouped into themes and actions' },
  { command: 'generate-dev-task', label: 'Dev task', description: 'A task a developer can pick up' },
  { command: 'generate-qa-test', label: 'QA test plan', description: 'Test cases with steps and expected results' },
] as const;

export type NoteCommand = (typeof NOTE_COMMANDS)[number]['command'];
