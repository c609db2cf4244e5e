// The board canvas: @xyflow/react draws pan/zoom, selection and dragging;
// notes are custom nodes. The canvas renders the sync client's state and
// sends it intents (create, move, edit, delete); it never talks to the server.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { ReactFlow, ReactFlowProvider, Background, MiniMap, useReactFlow, useStore, getViewportForBounds, type NodeChange, type Viewport, type XYPosition } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { Note } from '../api/types';
import type { SyncClient } from '../sync/client';
import type { Mark } from '../sync/marks';
import { randomId } from '../boards/ids';
import { NoteNode, PresenceContext, type NoteFlowNode, type NoteNodeData } from './NoteNode';
import { DetailContext, detailOf } from './detail';
import { NoteEditor, type EditorSave } from './NoteEditor';
import { Dialog } from '../app/Dialog';
import { Cursors } from './Cursors';
import { NOTE_HEIGHT, NOTE_WIDTH, newNote, background } from './notes';
import { UndoHistory, type UndoResult } from './undo';
import { marksByNote, type NoteMarks } from './peopleView';
import { ZoomControls } from '../layout/ZoomControls';
import { fitOptions } from '../layout/zoom';

const nodeTypes = { note: NoteNode };
// Props given to ReactFlow must keep their identity between renders: a new
// array or function makes it update its store, and every note re-renders.
const MULTI_SELECT_KEYS = ['Shift', 'Meta', 'Control'];
const NO_EDGES: never[] = [];
const MIN_ZOOM = 0.05;
const OPEN_MIN_ZOOM = 0.3;
const MINIMAP_MAX_NOTES = 500;
const minimapColor = (n: { data: unknown }) => background((n.data as NoteNodeData).note.color);

interface Props {
  /** onNoteHistory opens a note's history (the editor's History button). */
  onNoteHistory?: (id: string) => void;
  client: SyncClient;
  notes: ReadonlyMap<string, Note>;
  canEdit: boolean;
  ready: boolean;
  onAnnounce: (msg: string) => void;
  /** undo is the board's undo history, shared with panels that change notes (the AI chat); the canvas makes its own without it. */
  undo?: UndoHistory;
  /** marks: what merges did to my changes (SyncState.marks), shown on the notes. */
  marks?: readonly Mark[];
  /** onMark opens a note's History at a mark's changelog entry (the note's button for it). */
  onMark?: (m: Mark) => void;
  /** railExtra: the board screen's own buttons at the end of the tool rail (its panel toggles). */
  railExtra?: React.ReactNode;
}

const NO_MARKS: readonly Mark[] = [];

/**
 * Canvas waits for the board's first state, then mounts the flow already
 * fitted to the notes: one render at the right zoom instead of a render at
 * zoom 1 followed by a fit (which draws a large board twice).
 */
export function Canvas(props: Props) {
  const host = useRef<HTMLDivElement>(null);
  const [start, setStart] = useState<Viewport | null>(null);
  const { ready, notes } = props;
  useLayoutEffect(() => {
    if (start || !ready || !host.current) return;
    const { width, height } = host.current.getBoundingClientRect();
    if (!notes.size) return setStart({ x: width / 2, y: height / 2, zoom: 1 });
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const n of notes.values()) {
      minX = Math.min(minX, n.x);
      minY = Math.min(minY, n.y);
      maxX = Math.max(maxX, n.x + NOTE_WIDTH);
      maxY = Math.max(maxY, n.y + NOTE_HEIGHT);
    }
    // Fitted, but not below 30 % (50 % on a phone, layout/zoom.ts): a far view of thousands of notes shows
    // nothing readable and costs the most to draw. "Zoom to fit" (0) shows all.
    setStart(getViewportForBounds({ x: minX, y: minY, width: maxX - minX, height: maxY - minY }, width, height, Math.max(OPEN_MIN_ZOOM, fitOptions(window.innerWidth).minZoom ?? 0), 1, 0.1));
  }, [ready, notes, start]);
  const { client } = props;
  useEffect(() => {
    if (start)
      requestAnimationFrame(() =>
        requestAnimationFrame(() => {
          performance.mark('corkboard:interactive');
          client.drawn();
        }),
      );
  }, [start, client]);
  return (
    <div className="canvas-host" ref={host}>
      {start ? (
        <ReactFlowProvider>
          <CanvasInner {...props} start={start} />
        </ReactFlowProvider>
      ) : (
        <p className="canvas-loading" aria-busy="true">
          Loading the board…
        </p>
      )}
    </div>
  );
}

function isTyping(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) || !!el.closest('dialog'));
}

function CanvasInner({ client, notes, canEdit, onAnnounce, onNoteHistory, start, undo: sharedUndo, marks = NO_MARKS, onMark, railExtra }: Props & { start: Viewport }) {
  const rf = useReactFlow<NoteFlowNode>();
  const detail = useStore(detailOf);
  const wrapper = useRef<HTMLDivElement>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [dragging, setDragging] = useState<ReadonlyMap<string, XYPosition>>(new Map());
  const [editing, setEditing] = useState<string | null>(null);
  const ownUndo = useRef<UndoHistory | null>(null);
  const undoHistory = sharedUndo ?? (ownUndo.current ??= new UndoHistory(client));
  /** asking: an undo or redo that waits for the person's answer (it would delete notes others changed). */
  const [asking, setAsking] = useState<(Extract<UndoResult, { kind: 'confirm' }> & { dir: 'undo' | 'redo' }) | null>(null);
  const onMarkRef = useRef(onMark);
  onMarkRef.current = onMark;
  const openMark = useCallback((m: Mark) => onMarkRef.current?.(m), []);
  const byNote = marksByNote(marks);

  const select = useCallback((id: string, additive: boolean) => {
    setSelected((s) => (additive ? new Set([...s, id]) : new Set([id])));
  }, []);

  // One node object per unchanged note: xyflow keeps its internal node (and
  // does not re-render the note) when it gets the same object back, so a
  // drag or a remote edit re-renders only the notes it touches.
  type Cached = { note: Note; marks: NoteMarks | undefined; selected: boolean; pos: XYPosition | undefined; canEdit: boolean; node: NoteFlowNode };
  const nodeCache = useRef(new Map<string, Cached>());
  const nodes: NoteFlowNode[] = useMemo(() => {
    const cache = nodeCache.current;
    const next = new Map<string, Cached>();
    const out: NoteFlowNode[] = [];
    for (const n of notes.values()) {
      const isSelected = selected.has(n.id);
      const pos = dragging.get(n.id);
      const m = byNote.get(n.id);
      let hit = cache.get(n.id);
      if (!hit || hit.note !== n || hit.marks !== m || hit.selected !== isSelected || hit.pos !== pos || hit.canEdit !== canEdit) {
        const x = Number.isFinite(n.x) ? n.x : 0;
        const y = Number.isFinite(n.y) ? n.y : 0;
        const data: NoteNodeData = hit && hit.note === n && hit.marks === m ? hit.node.data : { note: n, marks: m, onOpen: setEditing, onFocusNote: select, onMark: openMark };
        hit = {
          note: n,
          marks: m,
          selected: isSelected,
          pos,
          canEdit,
          node: {
            id: n.id,
            type: 'note',
            position: pos ?? { x, y },
            data,
            selected: isSelected,
            width: NOTE_WIDTH,
            height: NOTE_HEIGHT,
            // Notes have a fixed size: telling xyflow saves it measuring 2,000 of them.
            measured: { width: NOTE_WIDTH, height: NOTE_HEIGHT },
            draggable: canEdit,
          },
        };
      }
      next.set(n.id, hit);
      out.push(hit.node);
    }
    nodeCache.current = next;
    return out;
  }, [notes, byNote, dragging, selected, canEdit, select, openMark]);


  const onNodesChange = useCallback((changes: NodeChange<NoteFlowNode>[]) => {
    // Only real changes become state: xyflow reports unchanged selections
    // too, and a needless render of 2,000 notes costs a frame.
    let sel: Set<string> | null = null;
    let drag: Map<string, XYPosition> | null = null;
    for (const c of changes) {
      if (c.type === 'select') {
        if (selectedRef.current.has(c.id) === c.selected && !sel) continue;
        sel ??= new Set(selectedRef.current);
        if (c.selected) sel.add(c.id);
        else sel.delete(c.id);
      } else if (c.type === 'position' && c.position && c.dragging) {
        drag ??= new Map(draggingRef.current);
        drag.set(c.id, c.position);
      }
    }
    if (sel && (sel.size !== selectedRef.current.size || [...sel].some((id) => !selectedRef.current.has(id)))) setSelected(sel);
    if (drag) setDragging(drag);
  }, []);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;
  const draggingRef = useRef(dragging);
  draggingRef.current = dragging;
  const notesRef = useRef(notes);
  notesRef.current = notes;

  /** moveNotes commits new positions: one push and one undo step for the whole drop. */
  const moveNotes = useCallback(
    (moves: { id: string; x: number; y: number }[]) => {
      // The notes as they are now (the render may be a frame behind: two quick arrow presses move twice).
      const now = client.getSnapshot().notes;
      const moved = moves.flatMap((m) => {
        const n = now.get(m.id);
        return n && (n.x !== m.x || n.y !== m.y) ? [{ ...n, x: Math.round(m.x), y: Math.round(m.y) }] : [];
      });
      if (!moved.length) return;
      undoHistory.transact(`move of ${moved.length} note${moved.length > 1 ? 's' : ''}`, (r) => moved.forEach((n) => r.upsertNote(n)));
    },
    [undoHistory, client],
  );

  const onNodeDragStop = useCallback(
    (_e: unknown, _node: NoteFlowNode, dragged: NoteFlowNode[]) => {
      moveNotes(dragged.map((d) => ({ id: d.id, x: d.position.x, y: d.position.y })));
      setDragging(new Map());
    },
    [moveNotes],
  );

  const createNote = useCallback(() => {
    const rect = wrapper.current!.getBoundingClientRect();
    const c = rf.screenToFlowPosition({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 });
    let x = c.x - NOTE_WIDTH / 2;
    let y = c.y - NOTE_HEIGHT / 2;
    // Do not hide a note under a new one: step down and right past any at the spot.
    const taken = (px: number, py: number) => [...notesRef.current.values()].some((o) => Math.abs(o.x - px) < 16 && Math.abs(o.y - py) < 16);
    for (let i = 0; i < 50 && taken(x, y); i++) {
      x += 24;
      y += 24;
    }
    const id = randomId();
    undoHistory.transact('new note', (r) => r.upsertNote(newNote(id, x, y)));
    setSelected(new Set([id]));
    onAnnounce('Note created. Press Enter to edit it.');
    setEditing(id);
  }, [undoHistory, rf, onAnnounce]);

  const deleteSelected = useCallback(() => {
    const gone = [...selectedRef.current].filter((id) => notesRef.current.has(id));
    if (!gone.length) return;
    undoHistory.transact(`deletion of ${gone.length} note${gone.length > 1 ? 's' : ''}`, (r) => gone.forEach((id) => r.deleteNote(id)));
    setSelected(new Set());
    onAnnounce(`${gone.length} note${gone.length > 1 ? 's' : ''} deleted. Press Ctrl+Z to undo.`);
  }, [undoHistory, onAnnounce]);

  /** said tells the person what an undo or redo did (the board's live region), or asks them first. */
  const said = useCallback(
    (r: UndoResult, dir: 'undo' | 'redo') => {
      if (r.kind === 'empty') onAnnounce(dir === 'undo' ? 'Nothing to undo.' : 'Nothing to redo.');
      else if (r.kind === 'done') onAnnounce(`${dir === 'undo' ? 'Undid' : 'Redid'} the ${r.label}.`);
      else setAsking({ ...r, dir });
    },
    [onAnnounce],
  );
  const undo = useCallback(() => said(undoHistory.undo(), 'undo'), [undoHistory, said]);
  const redo = useCallback(() => said(undoHistory.redo(), 'redo'), [undoHistory, said]);

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (isTyping(e.target) || document.querySelector('dialog[open]')) return;
      const mod = e.ctrlKey || e.metaKey;
      if (mod && (e.key === 'z' || e.key === 'Z') && !e.shiftKey) {
        if (!canEdit) return;
        e.preventDefault();
        undo();
      } else if (mod && (((e.key === 'z' || e.key === 'Z') && e.shiftKey) || ((e.key === 'y' || e.key === 'Y') && !e.shiftKey))) {
        if (!canEdit) return;
        e.preventDefault();
        redo();
      } else if (!mod && (e.key === 'n' || e.key === 'N')) {
        if (!canEdit) return;
        e.preventDefault();
        createNote();
      } else if (e.key === 'Delete' || e.key === 'Backspace') {
        if (!canEdit) return;
        e.preventDefault();
        deleteSelected();
      } else if (e.key === 'Enter') {
        const first = [...selectedRef.current][0];
        if (first) {
          e.preventDefault();
          setEditing(first);
        }
      } else if (e.key === 'Escape') {
        setSelected(new Set());
      } else if (!mod && (e.key === '+' || e.key === '=')) {
        void rf.zoomIn();
      } else if (!mod && e.key === '-') {
        void rf.zoomOut();
      } else if (!mod && (e.key === '0' || (e.shiftKey && e.key === '!'))) {
        void rf.fitView(fitOptions(window.innerWidth));
      } else if (e.key.startsWith('Arrow')) {
        e.preventDefault();
        const step = e.shiftKey ? 50 : 10;
        const dx = e.key === 'ArrowLeft' ? -step : e.key === 'ArrowRight' ? step : 0;
        const dy = e.key === 'ArrowUp' ? -step : e.key === 'ArrowDown' ? step : 0;
        if (selectedRef.current.size && canEdit) {
          const now = client.getSnapshot().notes;
          moveNotes([...selectedRef.current].flatMap((id) => {
            const n = now.get(id);
            return n ? [{ id, x: n.x + dx, y: n.y + dy }] : [];
          }));
        } else {
          const v = rf.getViewport();
          void rf.setViewport({ ...v, x: v.x - dx * 4, y: v.y - dy * 4 });
        }
      }
    }
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [canEdit, createNote, deleteSelected, undo, redo, moveNotes, rf, client]);

  const onPointerMove = useCallback(
    (e: React.PointerEvent) => {
      const p = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY }, { snapToGrid: false });
      client.presence.sendPointer(Math.round(p.x * 10) / 10, Math.round(p.y * 10) / 10);
    },
    [client, rf],
  );

  const onNodeDoubleClick = useCallback((_: unknown, n: NoteFlowNode) => setEditing(n.id), []);
  const clearSelection = useCallback(() => setSelected(new Set()), []);
  // A note deleted (by someone else) while its editor is open stays in the
  // editor, as last seen: what was typed is not lost, and Save brings it back.
  const lastEdited = useRef<Note | null>(null);
  const current = editing ? notes.get(editing) : undefined;
  if (current) lastEdited.current = current;
  const editingNote = current ?? (editing && lastEdited.current?.id === editing ? lastEdited.current : undefined);
  const save = useCallback(
    (e: EditorSave): Note | undefined => {
      undoHistory.transact('edit', (r) => r.upsertNote(e.row, e.base));
      return client.getSnapshot().notes.get(e.row.id);
    },
    [undoHistory, client],
  );
  // The editor's AI parts read the board's notes when they ask (as context for the model).
  const aiContext = useMemo(() => ({ boardId: client.boardId, allNotes: () => [...notesRef.current.values()] }), [client]);

  return (
    <div className={`canvas detail-${detail}`} ref={wrapper} onPointerMove={onPointerMove}>
      <div className="canvas-tools" role="toolbar" aria-label="Board tools">
        {canEdit && (
          <button type="button" className="primary" onClick={createNote} aria-keyshortcuts="N">
            + Note
          </button>
        )}
        {canEdit && (
          <button type="button" onClick={deleteSelected} disabled={!selected.size} aria-keyshortcuts="Delete">
            Delete{selected.size > 1 ? ` (${selected.size})` : ''}
          </button>
        )}
        {canEdit && (
          <button type="button" onClick={undo} aria-keyshortcuts="Control+Z">
            Undo
          </button>
        )}
        {canEdit && (
          <button type="button" onClick={redo} aria-keyshortcuts="Control+Shift+Z Control+Y">
            Redo
          </button>
        )}
        <span className="muted rail-count">
          {notes.size} note{notes.size === 1 ? '' : 's'}
          {selected.size ? ` · ${selected.size} selected` : ''}
        </span>
        {railExtra}
      </div>
      <DetailContext.Provider value={detail}>
        <PresenceContext.Provider value={client.presence}>
        <ReactFlow<NoteFlowNode>
          nodes={nodes}
          edges={NO_EDGES}
          nodeTypes={nodeTypes}
          onNodesChange={onNodesChange}
          onNodeDragStop={onNodeDragStop}
          onNodeDoubleClick={onNodeDoubleClick}
          onPaneClick={clearSelection}
          nodesDraggable={canEdit}
          nodesConnectable={false}
          elementsSelectable
          deleteKeyCode={null}
          selectionKeyCode="Shift"
          multiSelectionKeyCode={MULTI_SELECT_KEYS}
          disableKeyboardA11y
          onlyRenderVisibleElements
          minZoom={MIN_ZOOM}
          defaultViewport={start}
          maxZoom={4}
          zoomOnDoubleClick={false}
          aria-label="Board canvas"
        >
          <Background gap={24} />
          <ZoomControls />
          {/* The minimap draws every note again (an SVG rect each): past a few
              hundred notes it costs more than it shows. */}
          {notes.size <= MINIMAP_MAX_NOTES && <MiniMap pannable zoomable nodeColor={minimapColor} ariaLabel="Mini map" />}
          <Cursors presence={client.presence} />
        </ReactFlow>
        </PresenceContext.Provider>
      </DetailContext.Provider>
      {editingNote && (
        <NoteEditor
          key={editingNote.id}
          note={editingNote}
          gone={!current}
          presence={client.presence}
          readOnly={!canEdit}
          ai={aiContext}
          onClose={() => setEditing(null)}
          onHistory={
            onNoteHistory
              ? () => {
                  setEditing(null);
                  onNoteHistory(editingNote.id);
                }
              : undefined
          }
          onSave={save}
        />
      )}
      {asking && (
        <Dialog title={asking.title} onClose={() => setAsking(null)}>
          <p>{asking.text}</p>
          <div className="row dialog-actions">
            <button
              type="button"
              className="primary danger"
              onClick={() => {
                setAsking(null);
                said(asking.proceed(), asking.dir);
              }}
            >
              Delete
            </button>
            <button
              type="button"
              data-autofocus
              onClick={() => {
                asking.keep();
                setAsking(null);
                onAnnounce(`Nothing was ${asking.dir === 'undo' ? 'undone' : 'redone'}: the note stays.`);
              }}
            >
              Keep it
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}
