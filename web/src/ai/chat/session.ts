// ChatSession is the chat's logic without React: the transport useChat
// posts through, what happens when the model calls a tool, when the
// conversation goes on by itself, and the AI turn whose changes are one
// undo step. ChatPanel hands its methods to useChat; the tests hand them to
// the AI SDK's Chat class directly.
import { DefaultChatTransport, isToolUIPart, type UIMessage, type UIMessageChunk } from 'ai';
import { aiFetch } from '../../api/ai';
import type { Note, Phases } from '../../api/types';
import type { UndoHistory } from '../../canvas/undo';
import { randomId } from '../../boards/ids';
import { creditsChanged } from '../credits';
import { AiTurn, applyToolCall, type ExpandNote, type NoteStore, type ToolResult } from './tools';
import type { Proposal } from './proposals';
import { buildBoardState, currentPhase } from './context';
import type { SyncState } from '../../sync/client';

export type Mode = 'chat' | 'subagent';

/** MAX_CONTINUATIONS bounds the automatic follow-ups of one turn (each is a request and its credits). */
export const MAX_CONTINUATIONS = 8;
/** MAX_SENT_MESSAGES: the server reads only the last 40 messages, so only those are sent. */
export const MAX_SENT_MESSAGES = 40;

export const ROUTES: Record<Mode, string> = { chat: '/api/canvas/chat', subagent: '/api/canvas/subagent' };

/**
 * ChatTransport is the AI SDK's transport with Corkboard's fetch (aiFetch:
 * the session cookie, and every refused request an AiError carrying the
 * server's quota, Retry-After and reason) and without the server's
 * messageId on `start`: the server makes up a new id for every answer,
 * which would make useChat add the continuation after a tool call as a
 * second copy of the message instead of continuing the same one.
 */
export class ChatTransport extends DefaultChatTransport<UIMessage> {
  protected processResponseStream(stream: ReadableStream<Uint8Array<ArrayBufferLike>>): ReadableStream<UIMessageChunk> {
    return super.processResponseStream(stream).pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        transform(chunk, c) {
          if (chunk.type === 'start' && chunk.messageId !== undefined) {
            const rest: UIMessageChunk = { ...chunk };
            delete (rest as { messageId?: string }).messageId;
            c.enqueue(rest);
          } else c.enqueue(chunk);
        },
      }),
    );
  }
}

/** The store the session works on: the board's SyncClient. */
export interface BoardClient extends NoteStore {
  getSnapshot(): Pick<SyncState, 'notes' | 'items' | 'name'>;
}

export interface SessionOptions {
  client: BoardClient;
  boardId: string;
  undo: UndoHistory;
  expand: ExpandNote;
  canEdit: () => boolean;
  /** whyNot: why the person may not change a note (locks and roles), null when they may; absent: they may. */
  whyNot?: (n: Note) => string | null;
  phases: () => Phases | null | undefined;
  /** changed is called when the turn's changes change (the panel re-renders its list). */
  changed?: () => void;
  newId?: () => string;
}

interface Turn {
  t: AiTurn;
  mode: Mode;
  continuations: number;
  /** applied: tool calls this client carried out (or refused itself). */
  applied: Set<string>;
  abort: AbortController;
  /** pending are the proposals waiting for the person's answer, with how to answer each. */
  pending: { p: Proposal; answer: (ok: boolean) => void; tool: string }[];
}

/** The part of useChat's helpers the session calls back. */
export interface ChatLike {
  addToolOutput(o: { tool: string; toolCallId: string; output?: unknown; state?: 'output-available' | 'output-error'; errorText?: string }): unknown;
}

/** lastStepTools are the tool parts of a message's last step. */
function lastStepTools(m: UIMessage) {
  const start = m.parts.reduce((at, p, i) => (p.type === 'step-start' ? i : at), -1);
  return m.parts.slice(start + 1).filter(isToolUIPart);
}

export class ChatSession {
  mode: Mode = 'chat';
  private turn: Turn | null = null;
  private chat: ChatLike | null = null;
  readonly transport: ChatTransport;

  constructor(private readonly o: SessionOptions) {
    this.transport = new ChatTransport({
      api: ROUTES.chat,
      fetch: (url, init) => aiFetch(String(url), init ?? {}),
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => {
        const mode = this.turn?.mode ?? this.mode;
        return {
          api: ROUTES[mode],
          body: {
            ...body,
            id,
            messages: messages.slice(-MAX_SENT_MESSAGES),
            trigger,
            messageId,
            boardId: o.boardId,
            boardState: buildBoardState(o.client.getSnapshot()),
            ...(mode === 'subagent' ? { currentPhase: currentPhase(o.phases()) } : {}),
          },
        };
      },
    });
  }

  /** bind gives the session the chat it answers tool calls to. */
  bind(chat: ChatLike): void {
    this.chat = chat;
  }

  /**
   * startTurn begins a new AI turn: await it just before sending the
   * user's message (it first answers what the last turn still proposed).
   */
  startTurn(): Promise<void> {
    const kept = this.keepPending();
    this.turn?.abort.abort();
    this.turn = { t: new AiTurn(this.o.client, this.o.undo), mode: this.mode, continuations: 0, applied: new Set(), abort: new AbortController(), pending: [] };
    return kept;
  }

  /** proposals are the destructive changes waiting for the person's answer (Keep is the default). */
  get proposals(): readonly Proposal[] {
    return this.turn?.pending.map((x) => x.p) ?? [];
  }

  /**
   * decide answers every waiting proposal at once: accept applies them
   * (one undo step with the rest of the turn), else the notes are kept.
   * Either way the model is told, and the conversation goes on.
   */
  decide(accept: boolean): void {
    const cur = this.turn;
    if (!cur) return;
    const pending = cur.pending.splice(0);
    for (const x of pending) x.answer(accept);
    this.o.changed?.();
  }

  /**
   * keepPending answers the waiting proposals "kept" before a new turn or a
   * stop: the model's calls each get their result now (a conversation with
   * a call left unanswered cannot go on), and nothing is deleted unasked.
   */
  private async keepPending(): Promise<void> {
    const cur = this.turn;
    if (!cur?.pending.length) return;
    const pending = cur.pending.splice(0);
    const answered: unknown[] = [];
    for (const x of pending) {
      cur.applied.add(x.p.toolCallId); // answered here, not by the promise
      const kept = `The user kept the note "${x.p.title || 'Untitled'}" (id ${x.p.noteId}): it was not ${x.p.kind === 'delete' ? 'deleted' : 'changed'}.`;
      answered.push(this.chat?.addToolOutput({ tool: x.tool, toolCallId: x.p.toolCallId, output: { ok: true, kept: true, id: x.p.noteId, title: x.p.title, message: kept } }));
      x.answer(false);
    }
    this.o.changed?.();
    await Promise.all(answered);
  }

  /** stop cancels what the turn still runs on its own (an expandNote's note-ai request) and keeps what it proposed. */
  stop(): void {
    void this.keepPending();
    this.turn?.abort.abort();
  }

  /** changes lists what the current turn changed. */
  get changes() {
    return this.turn?.t.changes ?? [];
  }

  get turnMode(): Mode | undefined {
    return this.turn?.mode;
  }

  onToolCall = ({ toolCall }: { toolCall: { toolCallId: string; toolName: string; input: unknown; dynamic?: boolean } }): void => {
    const cur = this.turn;
    if (!cur || toolCall.dynamic) return;
    const r = applyToolCall(toolCall, {
      turn: cur.t,
      store: this.o.client,
      canEdit: this.o.canEdit(),
      whyNot: this.o.whyNot,
      newId: this.o.newId ?? (() => randomId()),
      expand: this.o.expand,
      signal: cur.abort.signal,
      propose: (p) =>
        new Promise<boolean>((answer) => {
          if (cur !== this.turn) return answer(false);
          cur.pending.push({ p, answer, tool: toolCall.toolName });
          this.o.changed?.();
        }),
    });
    const done = (result: ToolResult) => {
      if (cur !== this.turn || !this.chat) return; // a new turn began meanwhile
      if (cur.applied.has(toolCall.toolCallId)) return; // answered already (keepPending)
      cur.applied.add(toolCall.toolCallId);
      const tool = toolCall.toolName;
      const toolCallId = toolCall.toolCallId;
      // Not awaited: useChat runs onToolCall inside its update queue, and
      // addToolOutput waits for that queue (awaiting it here would deadlock).
      if ('output' in result) void this.chat.addToolOutput({ tool, toolCallId, output: result.output });
      else void this.chat.addToolOutput({ tool, toolCallId, state: 'output-error', errorText: result.errorText });
      this.o.changed?.();
    };
    if (r instanceof Promise) void r.then(done);
    else done(r);
  };

  /**
   * sendAutomaticallyWhen: a turn goes on by itself once every tool call of
   * the model's last step has its result, if this client carried out at
   * least one of them (a step of calls the server already rejected waits
   * for the user, docs/ai.md), at most MAX_CONTINUATIONS times a turn.
   */
  sendAutomaticallyWhen = ({ messages }: { messages: UIMessage[] }): boolean => {
    const cur = this.turn;
    const last = messages[messages.length - 1];
    if (!cur || !last || last.role !== 'assistant') return false;
    const tools = lastStepTools(last);
    if (!tools.length || !tools.every((p) => p.state === 'output-available' || p.state === 'output-error')) return false;
    if (!tools.some((p) => cur.applied.has(p.toolCallId))) return false;
    if (cur.continuations >= MAX_CONTINUATIONS) return false;
    cur.continuations++;
    return true;
  };

  /** onFinish: every request spent (or refunded) credits. */
  onFinish = (): void => {
    creditsChanged();
    this.o.changed?.();
  };
}
