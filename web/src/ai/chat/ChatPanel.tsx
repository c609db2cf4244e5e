// The AI chat on the board (issue 12, "Chat panel" and "The phase-aware
// assistant"): useChat over /api/canvas/chat or /api/canvas/subagent, the
// board tools applied as the model calls them, its suggestions as buttons,
// and the errors and credits a person needs. Loaded lazily by BoardScreen.
import './noEval';
import { useCallback, useEffect, useId, useMemo, useRef, useState, type FormEvent } from 'react';
import { useChat } from '@ai-sdk/react';
import { isToolUIPart, getToolName, type UIMessage } from 'ai';
import { parseNoteAnswer } from '../../api/ai';
import type { Note, Phases } from '../../api/types';
import type { SyncClient } from '../../sync/client';
import type { UndoHistory } from '../../canvas/undo';
import { renderMarkdown } from '../../canvas/notes';
import { AiErrorText } from '../AiErrorText';
import { useCredits } from '../credits';
import { expandNote } from '../noteDraft';
import type { AiChange } from './tools';
import { ChatSession, type Mode } from './session';
import { acceptLabel, proposalText, type Proposal } from './proposals';
import { currentPhase } from './context';
import { parseSuggestions, withoutSuggestionBlock, type Suggestion } from './suggestions';
import { chatError, cutReason } from './chatError';
import './chat.css';
import { noteReason, type Rights } from '../../editor/Editor';

interface Props {
  client: SyncClient;
  boardId: string;
  canEdit: boolean;
  /** rights: for locks and roles (the AI does not change a note the person may not). */
  rights?: Rights;
  phases?: Phases | null;
  undo: UndoHistory;
  onClose: () => void;
  /** hidden: the panel is closed but keeps its conversation. */
  hidden?: boolean;
}

/** textOf is a message's text parts, joined. */
function textOf(m: UIMessage | undefined): string {
  return m ? m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
}

function creditsLine(u: { used: number; limit: number; plan: string } | undefined): string {
  if (!u) return '';
  const left = Math.max(0, u.limit - u.used);
  return `${left} of ${u.limit} AI credit${u.limit === 1 ? '' : 's'} left this month`;
}

/** ChatPanel is the board's AI assistant: a conversation whose answers may change the board. */
export default function ChatPanel({ client, boardId, canEdit, rights, phases, undo, onClose, hidden }: Props) {
  const [mode, setMode] = useState<Mode>('chat');
  const [input, setInput] = useState('');
  const [expanding, setExpanding] = useState<ReadonlyMap<string, string>>(new Map());
  const [turns, setTurns] = useState<ReadonlyMap<string, AiChange[]>>(new Map());
  const [status, setStatusText] = useState('');
  const credits = useCredits();
  const ids = { input: useId(), log: useId(), mode: useId() };

  // The session reads the props through this ref when it runs (it is made once).
  const live = useRef({ canEdit, phases, rights });
  live.current = { canEdit, phases, rights };
  const [, rerender] = useState(0);

  const expand = useCallback(
    async (note: Note, instruction: string, signal?: AbortSignal) => {
      const key = note.id;
      const show = (t: string) => setExpanding((m) => new Map(m).set(key, t));
      show('');
      try {
        return await expandNote(boardId, note, instruction || 'Develop this note further.', [...client.getSnapshot().notes.values()], show, signal);
      } finally {
        setExpanding((m) => {
          const n = new Map(m);
          n.delete(key);
          return n;
        });
      }
    },
    [boardId, client],
  );

  const session = useMemo(
    () =>
      new ChatSession({
        client,
        boardId,
        undo,
        expand,
        canEdit: () => live.current.canEdit,
        whyNot: (n) => (live.current.rights ? noteReason(n, live.current.rights) : null),
        phases: () => live.current.phases,
        changed: () => rerender((n) => n + 1),
      }),
    [client, boardId, undo, expand],
  );

  const chat = useChat({
    transport: session.transport,
    onToolCall: session.onToolCall,
    sendAutomaticallyWhen: session.sendAutomaticallyWhen,
    onFinish: ({ message, isError }) => {
      session.onFinish();
      const changes = session.changes;
      if (message.role !== 'assistant') return;
      setTurns((m) => new Map(m).set(message.id, changes));
      // The conversation is not a live region (every streamed word would be
      // read out): this status says when an answer is complete.
      if (isError) setStatusText('');
      else if (session.proposals.length) setStatusText('The assistant is waiting for your answer.');
      else if (changes.length) setStatusText(`The AI made ${changes.length} change${changes.length === 1 ? '' : 's'} to the board. Undo reverts them in one step.`);
      else setStatusText('The assistant has answered.');
    },
  });
  const { messages, sendMessage, regenerate, status: chatStatus, error, stop, clearError } = chat;
  session.bind(chat);

  const busy = chatStatus === 'submitted' || chatStatus === 'streaming' || expanding.size > 0;

  const send = useCallback(
    (text: string) => {
      const t = text.trim();
      if (!t || busy) return;
      clearError();
      setStatusText('');
      void session.startTurn().then(() => sendMessage({ text: t }));
    },
    [busy, clearError, session, sendMessage],
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!input.trim() || busy) return;
    send(input);
    setInput('');
  }

  function stopAll() {
    session.stop();
    void stop();
  }

  useEffect(() => () => session.stop(), [session]);

  // Opening the panel puts the cursor in the question field.
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (!hidden) field.current?.focus();
  }, [hidden]);

  const last = messages[messages.length - 1];
  const lastAssistant = last?.role === 'assistant' ? last : undefined;
  const shownError = error ? chatError(error, textOf(lastAssistant)) : null;
  const suggestions: Suggestion[] | null = lastAssistant && !busy ? parseSuggestions(textOf(lastAssistant)) : null;
  const phase = currentPhase(phases);
  const proposals = session.proposals;
  const waiting = new Set(proposals.map((p) => p.toolCallId));

  return (
    <aside className="ai-chat" aria-label="AI assistant" hidden={hidden}>
      <header className="ai-chat-head">
        <h2>AI assistant</h2>
        <button type="button" onClick={onClose} aria-label="Close the AI assistant">
          ✕
        </button>
      </header>
      <p className="ai-credits muted" role="status" aria-live="polite" data-credits={credits ? credits.limit - credits.used : ''}>
        {creditsLine(credits)}
      </p>
      <fieldset className="ai-mode">
        <legend className="sr-only">Assistant mode</legend>
        <label>
          <input
            type="radio"
            name={ids.mode}
            checked={mode === 'chat'}
            onChange={() => {
              setMode('chat');
              session.mode = 'chat';
            }}
          />{' '}
          Board chat
        </label>
        <label>
          <input
            type="radio"
            name={ids.mode}
            checked={mode === 'subagent'}
            onChange={() => {
              setMode('subagent');
              session.mode = 'subagent';
            }}
          />{' '}
          Phase coach{phase ? ` (${phase.name})` : ''}
        </label>
      </fieldset>
      {mode === 'subagent' && <p className="muted ai-hint">{phase ? `Suggests what to do next in the "${phase.name}" phase.` : 'This board has no current phase: the coach gives general advice.'}</p>}

      <ol className="ai-log" id={ids.log} aria-label="Conversation" aria-busy={busy}>
        {messages.map((m) => (
          <li key={m.id} className={`ai-msg ai-${m.role}`} data-role={m.role}>
            <span className="sr-only">{m.role === 'user' ? 'You:' : 'Assistant:'}</span>
            <MessageParts message={m} streaming={busy && m === last} expanding={expanding} waiting={waiting} />
            {m === last && proposals.length > 0 && <ProposalCard proposals={proposals} onDecide={(ok) => session.decide(ok)} />}
            {m.role === 'assistant' && <Changes changes={turns.get(m.id) ?? (m === last ? session.changes : undefined)} />}
          </li>
        ))}
      </ol>
      {chatStatus === 'submitted' && (
        <p className="muted" role="status">
          Thinking…
        </p>
      )}
      {shownError && (
        <div className="ai-chat-error">
          <AiErrorText error={shownError} />
          {cutReason(shownError) && <p className="muted">{cutReason(shownError)}</p>}
          {/* Worth another go: a busy minute, a model that was down, an answer cut short. Not a spent quota or a lost session. */}
          {['rate', 'unavailable', 'upstream', 'cut', 'offline'].includes(shownError.kind) && last?.role !== undefined && (
            <button
              type="button"
              onClick={() => {
                clearError();
                setStatusText('');
                void session.startTurn().then(() => regenerate());
              }}
            >
              Try again
            </button>
          )}
        </div>
      )}
      {suggestions && (
        <div className="ai-suggestions" role="group" aria-label="Suggested next steps">
          <span className="muted">Next steps:</span>
          {suggestions.map((s, i) => (
            <button key={i} type="button" title={s.prompt} onClick={() => send(s.prompt)} disabled={busy}>
              {s.label}
            </button>
          ))}
        </div>
      )}
      <p className="sr-only" role="status" aria-live="polite">
        {status}
      </p>
      {status && status !== 'The assistant has answered.' && <p className="muted ai-turn-status">{status}</p>}
      <form className="ai-form" onSubmit={submit}>
        <label htmlFor={ids.input}>{mode === 'subagent' ? 'Ask the phase coach' : 'Ask about this board'}</label>
        <textarea
          ref={field}
          id={ids.input}
          value={input}
          rows={3}
          maxLength={20000}
          onChange={(e) => setInput(e.target.value)}
          onKeyDown={(e) => {
            // The canvas's shortcuts (N, Delete…) are not for this field; Escape goes on to the dock, which closes.
            if (e.key !== 'Escape') e.stopPropagation();
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
          }}
          placeholder={canEdit ? 'e.g. Add a note about the launch checklist' : 'You can ask, but this board is view only: the AI cannot change it for you.'}
        />
        <div className="row">
          {busy ? (
            <button type="button" onClick={stopAll}>
              Stop
            </button>
          ) : (
            <button type="submit" className="primary" disabled={!input.trim()}>
              Send
            </button>
          )}
        </div>
      </form>
    </aside>
  );
}

function MessageParts({ message, streaming, expanding, waiting }: { message: UIMessage; streaming: boolean; expanding: ReadonlyMap<string, string>; waiting: ReadonlySet<string> }) {
  if (message.role === 'user') return <p className="ai-user-text">{textOf(message)}</p>;
  const texts = message.parts.filter((p) => p.type === 'text');
  const lastText = texts[texts.length - 1];
  return (
    <>
      {message.parts.map((p, i) => {
        if (p.type === 'text') {
          // The suggestion block is shown as buttons, not as JSON: hide it from the last text part.
          const text = p === lastText ? withoutSuggestionBlock(p.text, streaming) : p.text;
          return text.trim() ? <div key={i} className="md ai-text" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} /> : null;
        }
        if (isToolUIPart(p)) return <ToolPart key={p.toolCallId} part={p} expanding={expanding} waiting={waiting.has(p.toolCallId)} />;
        return null;
      })}
    </>
  );
}

const TOOL_LABELS: Record<string, string> = {
  createNote: 'Creating a note',
  createPlaceholderNote: 'Creating a placeholder note',
  updateNote: 'Updating a note',
  deleteNote: 'Deleting a note',
  expandNote: 'Expanding a note',
  summarizeBoard: 'Summary of the board',
};

function ToolPart({ part, expanding, waiting }: { part: Extract<UIMessage['parts'][number], { toolCallId: string }>; expanding: ReadonlyMap<string, string>; waiting: boolean }) {
  const name = getToolName(part as Parameters<typeof getToolName>[0]);
  const label = TOOL_LABELS[name] ?? `Tool ${name}`;
  const input = (part.input ?? {}) as Record<string, unknown>;
  if (name === 'summarizeBoard' && part.state !== 'output-error' && typeof input.summary === 'string') {
    return (
      <section className="ai-tool ai-summary" aria-label="Summary of the board">
        <h3>Summary of the board</h3>
        <div className="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(input.summary) }} />
      </section>
    );
  }
  if (part.state === 'output-available') {
    const out = part.output as { message?: string; kept?: boolean } | undefined;
    if (out?.kept) {
      return (
        <p className="ai-tool ai-tool-kept" data-tool={name}>
          ✗ Not done: {out.message}
        </p>
      );
    }
    return (
      <p className="ai-tool ai-tool-done" data-tool={name}>
        ✓ {out?.message ?? label}
      </p>
    );
  }
  if (part.state === 'output-error') {
    return (
      <p className="ai-tool ai-tool-error" data-tool={name}>
        ⚠ {label} did not work: {part.errorText}
      </p>
    );
  }
  // A proposal's call shows nothing of its own: the card below says it all.
  if (waiting) return null;
  const progress = name === 'expandNote' && typeof input.id === 'string' ? expanding.get(input.id) : undefined;
  return (
    <div className="ai-tool ai-tool-running" data-tool={name} aria-busy="true">
      <p>{label}…</p>
      {progress && <pre className="ai-expand-preview">{parseNoteAnswer(progress).body || progress}</pre>}
    </div>
  );
}

/**
 * ProposalCard asks before a destructive change (issue 21): the assistant
 * wants to delete notes or replace most of their text. Nothing happens
 * until a button is pressed; Keep has the focus, so Enter keeps, and a new
 * message keeps too.
 */
function ProposalCard({ proposals, onDecide }: { proposals: readonly Proposal[]; onDecide: (accept: boolean) => void }) {
  const id = useId();
  return (
    <section className="ai-proposal" role="group" aria-labelledby={id}>
      <p id={id}>{proposalText(proposals)}</p>
      <div className="row">
        <button type="button" className="danger" onClick={() => onDecide(true)}>
          {acceptLabel(proposals)}
        </button>
        <button type="button" className="primary" autoFocus onClick={() => onDecide(false)}>
          Keep
        </button>
      </div>
    </section>
  );
}

function Changes({ changes }: { changes?: AiChange[] }) {
  if (!changes?.length) return null;
  const verb = { created: 'Added', updated: 'Changed', deleted: 'Deleted' } as const;
  return (
    <details className="ai-changes" open>
      <summary>
        This answer changed {changes.length} note{changes.length === 1 ? '' : 's'} (Undo on the board reverts them all)
      </summary>
      <ul>
        {changes.map((c, i) => (
          <li key={i}>
            {verb[c.kind]} “{c.title || 'Untitled'}”
          </li>
        ))}
      </ul>
    </details>
  );
}
