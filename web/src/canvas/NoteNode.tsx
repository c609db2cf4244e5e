import { createContext, memo, useContext, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import { Handle, Position, type NodeProps, type Node } from '@xyflow/react';
import type { Note } from '../api/types';
import type { Mark } from '../sync/marks';
import type { PresenceStore } from '../sync/presence';
import { background, COLORS, renderMarkdown } from './notes';
import { EditorContext } from '../editor/context';
import { MAX_H } from '../editor/geometry';
import { InPlaceEditor } from '../editor/InPlaceEditor';
import { ResizeCorner } from './ResizeCorner';
import { LockIcon } from './LockIcon';
import { DetailContext } from './detail';
import { aiMarkOf } from './aiMark';
import { editingLabel, OVERLAP_NAME, REVIVED_NAME, type NoteMarks } from './peopleView';

export type NoteNodeData = {
  note: Note;
  /** marks: what merges did to my changes of this note (buttons to its History). */
  marks?: NoteMarks;
  onMark: (m: Mark) => void;
  /** w and h are the size the note is drawn at (its own, or the one its handle is being dragged to). */
  w: number;
  h: number;
  /** editing: edited in place now. */
  editing: boolean;
  /** tabStop: the canvas's one tab stop (roving tabindex). */
  tabStop: boolean;
  /** highlight: a search just jumped here. */
  highlight: boolean;
  /** canEdit: the person may change this note (the board's edit right, and no lock or role against it). */
  canEdit: boolean;
  /** reason: why the person may not change it though they edit the board (docs/api.md, "Locks and roles"); null when they may. */
  reason?: string | null;
  /** shownReason: the reason, shown on the note (selected, or a change of it was just refused). */
  shownReason?: string | null;
};
export type NoteFlowNode = Node<NoteNodeData, 'note'>;

/**
 * PresenceContext hands the board's presence store to the notes: each
 * note's "is editing" label subscribes to it on its own, so someone
 * opening an editor re-renders that label, and a moving pointer nothing.
 */
export const PresenceContext = createContext<PresenceStore | null>(null);

const noSubscribe = () => () => {};
const nobody = () => undefined;

/** EditingTag shows, in a note's header, who else has its editor open, in their presence colour. */
function EditingTag({ noteId }: { noteId: string }) {
  const presence = useContext(PresenceContext);
  // The editors map is the same object until someone opens or closes an editor.
  const peers = useSyncExternalStore(presence ? presence.onChange : noSubscribe, presence ? () => presence.getSnapshot().editors.get(noteId) : nobody);
  const label = peers ? editingLabel(peers) : null;
  if (!label) return null;
  return (
    <span className="editing-tag" role="status" aria-label={label.full} title={label.full} style={{ borderColor: label.color }}>
      <span className="dot" aria-hidden="true" style={{ background: label.color }} />
      <span className="editing-text">{label.text}</span>
    </span>
  );
}

/**
 * NoteNode draws one sticky note: colour, type, title and rendered Markdown
 * (fading out at the bottom when long; scrollable while selected), at its
 * size, with a resize handle and a button to the full editor; or, while
 * edited in place, the in-place editor over it. Every intent goes to the
 * Editor.
 */
export const NoteNode = memo(function NoteNode({ data, selected }: NodeProps<NoteFlowNode>) {
  const n = data.note;
  const editor = useContext(EditorContext);
  // Far out only the colour shows (text would be unreadable and slow to paint).
  const detail = useContext(DetailContext);
  const pressed = useRef(false);
  // downAt: where a pointer went down on a note the person may not change, to tell why when they drag it.
  const downAt = useRef<{ x: number; y: number } | null>(null);
  // touched: the last pointer down on the note was a finger (its double taps are the editor's release()).
  const touched = useRef(false);
  const body = useRef<HTMLDivElement>(null);
  // cut: the content is longer than the note (it fades out). Measured only for the note pointed at or
  // selected: measuring every drawn note on each render costs a forced layout and a second render of
  // every cut note, which a 2,000-note board's open cannot afford (docs/benchmarks.md).
  const [cut, setCut] = useState(false);
  const [pointed, setPointed] = useState(false);
  const active = selected || pointed;
  useLayoutEffect(() => {
    if (!active) return;
    const el = body.current;
    setCut(!!el && el.scrollHeight > el.clientHeight + 1);
  }, [active, n.content, n.title, data.w, data.h, detail, data.editing]);
  const ai = aiMarkOf(n);
  const label = `${n.type || 'note'}: ${n.title || 'untitled'}${n.locked ? ' (locked)' : ''}${ai ? (ai === 'created' ? ' (made by AI)' : ' (changed by AI)') : ''}${selected ? ' (selected)' : ''}`;
  const { overlap, revived } = data.marks ?? {};
  const cls = `note${selected ? ' selected' : ''}${data.highlight ? ' highlight' : ''}${data.editing ? ' editing' : ''}`;
  const resizable = active && data.canEdit && !data.editing && detail !== 'far';
  const canExpand = cut && active && detail === 'near' && data.canEdit && data.h < MAX_H;
  const expandButton = (
    <button
      type="button"
      className="note-expand nodrag nopan"
      aria-label={`Expand: show all of ${n.title || 'this note'}`}
      title="Grow the note to fit its content"
      onClick={(e) => {
        e.stopPropagation();
        const el = body.current;
        if (el) editor?.expand(n.id, { w: data.w, h: data.h + el.scrollHeight - el.clientHeight });
      }}
      onDoubleClick={(e) => e.stopPropagation()}
    >
      Expand
    </button>
  );
  return (
      <article
        className={cls}
        style={{ background: background(n.color), width: data.w, height: data.h }}
        tabIndex={data.tabStop ? 0 : -1}
        aria-label={label}
        aria-keyshortcuts="Enter Shift+Enter Delete Shift+F10 ContextMenu L"
        data-note-id={n.id}
        onFocus={(e) => {
          // Keyboard focus selects; a click is xyflow's (Shift adds to the selection).
          if (e.target === e.currentTarget && !selected && e.currentTarget.matches(':focus-visible')) editor?.select(n.id);
          e.stopPropagation();
        }}
        onDoubleClick={() => {
          // A browser makes a dblclick of two quick taps too, even when the first ended the connect tool's
          // arrow: a finger's double tap is decided by editor.release (Editor.ts), not here.
          if (!touched.current) editor?.startEdit(n.id);
        }}
        onContextMenu={(e) => {
          // The note's menu instead of the browser's; in the in-place editor's fields the browser's stays.
          if (data.editing || !editor) return;
          if (editor.openMenu(n.id, e.clientX || e.clientY ? { x: e.clientX, y: e.clientY } : null)) e.preventDefault();
        }}
        onPointerEnter={(e) => e.pointerType === 'mouse' && setPointed(true)}
        onPointerLeave={() => setPointed(false)}
        onPointerDown={(e) => {
          touched.current = e.pointerType === 'touch';
          downAt.current = data.reason && !data.editing ? { x: e.clientX, y: e.clientY } : null;
          // A long press opens the menu (touch browsers do not all send contextmenu for one).
          if (e.pointerType === 'touch' && !data.editing) editor?.pressStart(n.id, { x: e.clientX, y: e.clientY });
        }}
        onPointerMove={(e) => {
          if (e.pointerType === 'touch') editor?.pressMove({ x: e.clientX, y: e.clientY });
          // A drag of a note that does not move here (a lock, someone else's): say why, once per press.
          const d = downAt.current;
          if (d && Math.hypot(e.clientX - d.x, e.clientY - d.y) > 4) {
            downAt.current = null;
            editor?.refuse(n.id);
          }
        }}
        onPointerCancel={() => editor?.pressEnd()}
        onTouchEnd={(e) => {
          // The finger lifted after a long press: no click, which would land on the menu now under it.
          if (pressed.current) e.preventDefault();
          pressed.current = false;
        }}
        onPointerUp={(e) => {
          // A double tap edits (touch browsers do not all send dblclick); the end of a long press is no tap.
          if (e.pointerType !== 'touch' || data.editing) return;
          if (editor?.release(n.id, e.timeStamp) === 'menu') pressed.current = true;
        }}
      >
        {data.editing ? (
          <InPlaceEditor />
        ) : (
          <>
            {detail !== 'far' && (
              <header className="note-head">
                <span className="note-type">{n.type}</span>
                <EditingTag noteId={n.id} />
                {/* A colour from another client that this one does not draw: name it. */}
                {n.color && !Object.hasOwn(COLORS, n.color) && <span className="note-color">{n.color}</span>}
                {n.locked && <LockIcon />}
                {ai && (
                  <span className="note-ai" title={ai === 'created' ? 'Made by the AI assistant' : 'Changed by the AI assistant'}>
                    AI
                  </span>
                )}
                {selected && detail === 'near' && (
                  <button
                    type="button"
                    className="note-open nodrag nopan"
                    aria-label="Open in the full editor"
                    title="Open in the full editor (Shift+Enter)"
                    onClick={(e) => {
                      e.stopPropagation();
                      editor?.openFull(n.id);
                    }}
                    onDoubleClick={(e) => e.stopPropagation()}
                  >
                    ⤢
                  </button>
                )}
              </header>
            )}
            {detail !== 'far' && n.title && <h3 className="note-title">{n.title}</h3>}
            {/* Long content fades out at the bottom; selected, it scrolls (the wheel scrolls it, not the board). */}
            {/* A selected cut note's content is a tab stop of its own (Tab from the note), so the keyboard scrolls it:
                the arrows, Page Up/Down, Home and End stay in it instead of going to the next note; Escape goes back. */}
            {detail === 'near' && (
              <div
                ref={body}
                className={selected ? 'note-body md nowheel' : 'note-body md'}
                {...(selected && cut ? { tabIndex: 0, role: 'region', 'aria-label': `Content of ${n.title || 'this note'}`, onKeyDown: scrollKeys } : {})}
                dangerouslySetInnerHTML={{ __html: renderMarkdown(n.content) }}
              />
            )}
            {data.shownReason && detail !== 'far' && (
              <p className="note-reason nodrag" role="status">
                {data.shownReason}
              </p>
            )}
            {/* Expand sits in the row of marks when there are some (absolute, it would cover them). */}
            {(overlap || revived) ? (
              <div className="note-marks">
                {overlap && <MarkButton mark={overlap} name={OVERLAP_NAME} text="Changed by someone else" onMark={data.onMark} />}
                {revived && <MarkButton mark={revived} name={REVIVED_NAME} text="Brought back" onMark={data.onMark} />}
                {canExpand && expandButton}
              </div>
            ) : (
              canExpand && expandButton
            )}
          </>
        )}
        {/* The connect dots stay in the DOM (xyflow reads them when it measures the note: without them it
            draws none of the note's connectors) but are display: none until the note is pointed at or
            selected (editor.css), and the resize corner is drawn only then: on every drawn note they
            doubled its boxes, which every pointer move and pan hit-tests (docs/benchmarks-log.md). */}
        {data.canEdit && !data.editing && detail !== 'far' && <ConnectHandles />}
        {resizable && (
          <ResizeCorner
            className="note-resize"
            title="Drag to resize (keyboard: Shift+arrows)"
            w={data.w}
            h={data.h}
            onSize={(w, h) => editor?.previewSize(n.id, w, h)}
            onEnd={() => editor?.endResize(n.id)}
            onCancel={() => editor?.endResize(n.id)}
          />
        )}
      </article>
  );
});

/** SCROLL_KEYS are the keys a focused scrolling note body keeps for itself (the browser scrolls it). */
const SCROLL_KEYS = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'PageUp', 'PageDown', 'Home', 'End', ' ']);

/** scrollKeys keeps the scrolling keys from the canvas's keymap (they would move to another note) and sends Escape back to the note. */
function scrollKeys(e: React.KeyboardEvent<HTMLDivElement>) {
  if (e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    e.currentTarget.closest<HTMLElement>('[data-note-id]')?.focus();
  } else if (SCROLL_KEYS.has(e.key) && !e.altKey && !e.ctrlKey && !e.metaKey) e.stopPropagation();
}

/**
 * ConnectHandles are the four dots on a note's (or frame's) edges that a
 * connector is dragged from (issue 24). The canvas connects in loose mode,
 * so any dot joins any other, and a drop on a body counts too. The keyboard
 * way is C with two notes selected.
 */
export function ConnectHandles() {
  return (
    <>
      <Handle type="source" position={Position.Top} id="t" className="conn-handle" title="Drag to another note to connect" />
      <Handle type="source" position={Position.Right} id="r" className="conn-handle" title="Drag to another note to connect" />
      <Handle type="source" position={Position.Bottom} id="b" className="conn-handle" title="Drag to another note to connect" />
      <Handle type="source" position={Position.Left} id="l" className="conn-handle" title="Drag to another note to connect" />
    </>
  );
}

/** MarkButton opens the note's History at the changelog entry of a mark (and the mark goes). */
function MarkButton({ mark, name, text, onMark }: { mark: Mark; name: string; text: string; onMark: (m: Mark) => void }) {
  return (
    <button
      type="button"
      // Not a drag, a pan or a click on the note: a button on it.
      className={`note-mark ${mark.kind} nodrag nopan`}
      aria-label={name}
      title={name}
      onClick={(e) => {
        e.stopPropagation();
        onMark(mark);
      }}
      onDoubleClick={(e) => e.stopPropagation()}
    >
      <span aria-hidden="true">{mark.kind === 'overlap' ? '⚠' : '↺'}</span> {text}
    </button>
  );
}
