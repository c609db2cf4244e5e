// The board canvas: @xyflow/react draws pan/zoom, selection and dragging;
// notes are custom nodes. Every intent (create, move, resize, edit, delete,
// focus, keys, paste, search) goes to the Editor (src/editor/Editor.ts); the
// canvas renders the sync client's notes and the editor's snapshot, and
// implements the EditorView the editor asks of the screen. It never talks to
// the server.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { ReactFlow, ReactFlowProvider, MiniMap, useReactFlow, useStore, useStoreApi, getViewportForBounds, ConnectionMode, MarkerType, Position, type NodeHandle, type EdgeChange, type FinalConnectionState, type NodeChange, type Viewport, type XYPosition } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import '../editor/editor.css';
import type { Connector, Frame, Note, TrackerItem } from '../api/types';
import type { SyncClient } from '../sync/client';
import type { Mark } from '../sync/marks';
import { NoteNode, PresenceContext, type NoteFlowNode, type NoteNodeData } from './NoteNode';
import { DetailContext, detailOf } from './detail';
import { NoteEditor } from './NoteEditor';
import { Dialog } from '../app/Dialog';
import { Cursors } from './Cursors';
import { minimapClass, minimapColor, minimapStroke } from './minimap';
import type { UndoHistory } from './undo';
import { marksByNote, type NoteMarks } from './peopleView';
import { ZoomControls } from '../layout/ZoomControls';
import { fitOptions } from '../layout/zoom';
import { Editor, type EditorView } from '../editor/Editor';
import { EditorContext } from '../editor/context';
import { bounds, rectOf, sizeOf, type Rect } from '../editor/geometry';
import { ariaOf } from '../editor/keymap';
import { SearchPanel } from '../editor/SearchPanel';
import { ShortcutsPanel } from '../editor/ShortcutsPanel';
import { NoteMenu } from '../editor/NoteMenu';
import { ToolBar } from '../layout/ToolBar';
import type { Tool } from '../layout/tools';
import { FrameNode, type FrameFlowNode, type FrameNodeData } from './FrameNode';
import { ConnectorEdge, type ConnectorFlowEdge } from './ConnectorEdge';
import { StructureBar } from '../editor/StructureBar';
import { OutlinePanel } from '../editor/OutlinePanel';
import { connectorColor, drawOrder, drawable, frameRect, isLine } from '../editor/structure';
import { CanvasLayer, useLayerDrag, useStableRows, useWindow } from './CanvasLayer';
import { domEdge, domIds, hitRow, inBox, pinnedOf, sameSet, windowIds } from './cull';
import { sceneOf } from './layer';
import { ViewSync } from '../people/ViewSync';

/** BoardNode is a node of the canvas: a note or a frame. */
type BoardNode = NoteFlowNode | FrameFlowNode;

const nodeTypes = { note: NoteNode, frame: FrameNode };
const edgeTypes = { connector: ConnectorEdge };
/** FRAME_Z keeps frames under every note, selected or not (xyflow raises a selected node by 1000). */
const FRAME_Z = -2000;
// Props given to ReactFlow must keep their identity between renders: a new
// array or function makes it update its store, and every note re-renders.
const MULTI_SELECT_KEYS = ['Shift', 'Meta', 'Control'];
/**
 * handlesOf tells xyflow where a note's or frame's four connect handles are
 * (ConnectHandles, one in the middle of each edge) instead of leaving it to
 * measure them in the DOM. Unmeasured, xyflow draws every node once at open
 * to find them (2,000 notes where 221 are in view: most of the open's time),
 * and finds none on a node it never drew, so a connector to a note out of
 * view would not be drawn. ConnectorEdge draws from the boxes, not from here.
 */
function handlesOf(w: number, h: number): NodeHandle[] {
  return [
    { id: 't', type: 'source', position: Position.Top, x: w / 2, y: 0 },
    { id: 'r', type: 'source', position: Position.Right, x: w, y: h / 2 },
    { id: 'b', type: 'source', position: Position.Bottom, x: w / 2, y: h },
    { id: 'l', type: 'source', position: Position.Left, x: 0, y: h / 2 },
  ];
}
const MIN_ZOOM = 0.05;
const MAX_ZOOM = 4;
const OPEN_MIN_ZOOM = 0.3;
/** JUMP_ZOOM is the zoom a search jump or a reveal goes to when the view is further out (text readable). */
const JUMP_ZOOM = 0.8;
/** READABLE_ZOOM is the zoom under which notes show no text (detail.ts): editing there zooms in first. */
const READABLE_ZOOM = 0.6;
const MINIMAP_MAX_NOTES = 500;
const NO_ITEMS: ReadonlyMap<string, TrackerItem> = new Map();

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
  /** items are the board's work items (searched with the notes). */
  items?: ReadonlyMap<string, TrackerItem>;
  /** onItem shows a work item a search found (the work items panel). */
  onItem?: (id: string) => void;
  /** onEditor hands the board's Editor to the screen around the canvas (a tool rail, menus), and null when it goes. */
  onEditor?: (e: Editor | null) => void;
  /** railTools: the board screen's own tools at the end of the tool rail (its panel toggles). */
  railTools?: readonly Tool[];
  /** overlay is drawn inside the flow, over the notes (the vote's dots: vote/VoteDots.tsx). */
  overlay?: ReactNode;
}

const NO_MARKS: readonly Mark[] = [];
const NO_MOVES: ReadonlyMap<string, XYPosition> = new Map();
const NO_SIZES: ReadonlyMap<string, { w: number; h: number }> = new Map();

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
    const b = bounds([...notes.values()].map(rectOf))!;
    // Fitted, but not below 30 % (50 % on a phone, layout/zoom.ts): a far view of thousands of notes shows
    // nothing readable and costs the most to draw. "Zoom to fit" (0) shows all.
    setStart(getViewportForBounds({ x: b.x, y: b.y, width: b.w, height: b.h }, width, height, Math.max(OPEN_MIN_ZOOM, fitOptions(window.innerWidth).minZoom ?? 0), 1, 0.1));
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

/**
 * canvasTools are the editor's tools in the rail. Their ranks say which keep
 * a place in a phone's bottom bar (layout/tools.ts): new notes, undo and
 * search first; the note tool, redo and the shortcuts panel (keys a phone
 * has not) go to More first. Delete is in the note menu too.
 */
function canvasTools(editor: Editor, tool: string, selectedCount: number, canEdit: boolean): Tool[] {
  const edit: Tool[] = [
    { id: 'create', label: '+ Note', primary: true, onSelect: () => editor.createNote(), keys: ariaOf('create'), rank: 0 },
    { id: 'noteTool', label: 'Note tool', pressed: tool === 'note', onSelect: () => editor.setTool(tool === 'note' ? 'select' : 'note'), keys: ariaOf('toolNote'), title: 'Click on the canvas to put a note there', rank: 7 },
    { id: 'delete', label: `Delete${selectedCount > 1 ? ` (${selectedCount})` : ''}`, disabled: !selectedCount, onSelect: () => editor.deleteSelected(), keys: ariaOf('delete'), rank: 5 },
    { id: 'undo', label: 'Undo', onSelect: () => editor.undo(), keys: ariaOf('undo'), rank: 1 },
    { id: 'redo', label: 'Redo', onSelect: () => editor.redo(), keys: ariaOf('redo'), rank: 6 },
    { id: 'frame', label: 'Frame', onSelect: () => editor.createFrame(), keys: ariaOf('frame'), title: 'A frame around the selected notes, or in the middle of the view', rank: 9 },
    { id: 'connect', label: 'Connect', pressed: tool === 'connect', onSelect: () => (tool === 'connect' ? editor.setTool('select') : editor.connectSelected()), keys: ariaOf('connect'), title: 'An arrow from the selected note to the next one you tap (or between two selected notes; or drag from a note’s edge)', rank: 10 },
  ];
  return [
    ...(canEdit ? edit : []),
    { id: 'outline', label: 'Outline', onSelect: () => editor.openPanel('outline'), keys: ariaOf('outline'), rank: 11 },
    { id: 'search', label: 'Search', onSelect: () => editor.openPanel('search'), keys: ariaOf('search'), rank: 2 },
    { id: 'shortcuts', label: '?', name: 'Keyboard shortcuts', onSelect: () => editor.openPanel('shortcuts'), keys: ariaOf('shortcuts'), rank: 8 },
  ];
}

function isTyping(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) || !!el.closest('dialog'));
}

function CanvasInner({ client, notes: notesNow, canEdit, onAnnounce, onNoteHistory, start, undo: sharedUndo, marks = NO_MARKS, onMark, items = NO_ITEMS, onItem, onEditor, railTools, overlay }: Props & { start: Viewport }) {
  const rf = useReactFlow<BoardNode, ConnectorFlowEdge>();
  // Connectors and frames come from the sync client's snapshot (the notes come as a prop, as before).
  // onChange is a method of the client (not bound): subscribe through a closure.
  const subscribe = useCallback((cb: () => void) => client.onChange(cb), [client]);
  const snap = useSyncExternalStore(subscribe, client.getSnapshot);
  // The same maps while the rows are: what is built from them (nodes, the layer's scene) is kept.
  const notes = useStableRows(notesNow);
  const connectors = useStableRows(snap.connectors);
  const frames = useStableRows(snap.frames);
  const detail = useStore(detailOf);
  const wrapper = useRef<HTMLDivElement>(null);
  const announceRef = useRef(onAnnounce);
  announceRef.current = onAnnounce;
  const historyRef = useRef(onNoteHistory);
  historyRef.current = onNoteHistory;
  const [editor] = useState(() => new Editor({ store: client, undo: sharedUndo, announce: (m) => announceRef.current(m), openHistory: (id) => historyRef.current?.(id) }));
  const s = useSyncExternalStore(editor.onChange, editor.getSnapshot);
  const onMarkRef = useRef(onMark);
  onMarkRef.current = onMark;
  const openMark = useCallback((m: Mark) => onMarkRef.current?.(m), []);
  const byNote = marksByNote(marks);

  useEffect(() => editor.setCanEdit(canEdit), [editor, canEdit]);
  useEffect(() => editor.notesChanged(), [editor, notes, connectors, frames]);
  useEffect(() => {
    onEditor?.(editor);
    return () => onEditor?.(null);
  }, [editor, onEditor]);
  useEffect(() => () => editor.dispose(), [editor]);

  // Zoom to fit shows every row, not xyflow's nodes (it is given only those near the view: cull.ts).
  const fitAll = useRef(() => {});
  fitAll.current = () => {
    const b = bounds([...notes.values(), ...(draft ? [draft] : [])].map(rectOf).concat([...frames.values()].map(frameRect)));
    if (!b) return void rf.fitView(fitOptions(window.innerWidth));
    const { width, height } = storeApi.getState();
    const o = fitOptions(window.innerWidth);
    void rf.setViewport(getViewportForBounds({ x: b.x, y: b.y, width: b.w, height: b.h }, width, height, o.minZoom ?? MIN_ZOOM, MAX_ZOOM, o.padding));
  };
  const onFit = useCallback(() => fitAll.current(), []);
  const storeApi = useStoreApi();

  // The view the editor asks of the screen, over xyflow.
  useEffect(() => {
    const pane = () => wrapper.current?.querySelector('.react-flow') ?? wrapper.current;
    const view: EditorView = {
      visible: () => {
        const r = pane()!.getBoundingClientRect();
        const a = rf.screenToFlowPosition({ x: r.left, y: r.top }, { snapToGrid: false });
        const b = rf.screenToFlowPosition({ x: r.right, y: r.bottom }, { snapToGrid: false });
        return { x: a.x, y: a.y, w: b.x - a.x, h: b.y - a.y };
      },
      reveal: (r: Rect) => void rf.setCenter(r.x + r.w / 2, r.y + r.h / 2, { zoom: Math.max(rf.getZoom(), JUMP_ZOOM) }),
      show: (r: Rect) => {
        const v = view.visible();
        const inside = r.x >= v.x && r.y >= v.y && r.x + r.w <= v.x + v.w && r.y + r.h <= v.y + v.h;
        if (!inside || rf.getZoom() < READABLE_ZOOM) view.reveal(r);
      },
      focusNote: (id: string) =>
        // After React has drawn the note (a reveal may bring it into the rendered set).
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            // Another note edited since (a stop that started a new edit) keeps the focus in its fields.
            const ed = editor.getSnapshot().editing;
            if (ed && ed.id !== id) return;
            const el = wrapper.current?.querySelector<HTMLElement>(`[data-note-id="${CSS.escape(id)}"], [data-frame-id="${CSS.escape(id)}"]`);
            if (el && !el.contains(document.activeElement)) el.focus({ preventScroll: true });
          }),
        ),
      pan: (dx: number, dy: number) => {
        const v = rf.getViewport();
        void rf.setViewport({ ...v, x: v.x + dx * 4, y: v.y + dy * 4 });
      },
      zoomIn: () => void rf.zoomIn(),
      zoomOut: () => void rf.zoomOut(),
      fit: () => fitAll.current(),
      fitRect: (r: Rect) => void rf.fitBounds({ x: r.x, y: r.y, width: r.w, height: r.h }, { padding: 0.08 }),
    };
    editor.setView(view);
    return () => editor.setView(null);
  }, [editor, rf]);

  const { selected, moving, sizing, editing, draft, highlight, naming } = s;
  // "Is editing" while a note is edited in place or in the full editor: here, not in
  // the in-place editor, whose unmount may come after the full editor's mount.
  const editingId = canEdit && editing && !editing.draft ? editing.id : null;
  useEffect(() => {
    if (!editingId) return;
    client.presence.setEditing(editingId);
    return () => client.presence.setEditing(null);
  }, [client, editingId]);
  // The one tab stop: the focused note, else the first.
  const tabStop = s.focused && (notes.has(s.focused) || draft?.id === s.focused) ? s.focused : (notes.keys().next().value ?? null);

  // xyflow gets the rows near the view and the ones acted on (cull.ts); the
  // canvas layer (CanvasLayer.tsx) draws the rest, and everything far out.
  const win = useWindow();
  // A board the minimap still draws (≤ MINIMAP_MAX_NOTES) is handed whole to xyflow, as before: the minimap draws xyflow's nodes.
  const culling = notes.size > MINIMAP_MAX_NOTES;
  const inWindow = useMemo(() => (culling ? windowIds({ notes: notes.values(), frames: frames.values(), connectors: [] }, win) : new Set([...notes.keys(), ...frames.keys()])), [culling, notes, frames, win]);
  const pinnedNow = pinnedOf({ selected, moving, sizing, others: [editing?.id, draft?.id, tabStop, highlight, s.focused, naming?.id, s.menu?.id] });
  // The same set while its ids are (a drag changes the positions every frame, not who is pinned).
  const pinnedRef = useRef(pinnedNow);
  if (!sameSet(pinnedRef.current, pinnedNow)) pinnedRef.current = pinnedNow;
  const pinned = pinnedRef.current;
  const dom = useMemo(() => domIds(inWindow, pinned, connectors.values()), [inWindow, pinned, connectors]);
  const scene = useMemo(
    () => sceneOf({ notes: draft ? [...notes.values(), draft] : notes.values(), frames: frames.values(), connectors: [...connectors.values()].filter((c) => drawable(c, notes, frames)) }, dom, { selected, moving: NO_MOVES, sizing: NO_SIZES }),
    [notes, draft, frames, connectors, dom, selected],
  );

  // One node object per unchanged note: xyflow keeps its internal node (and
  // does not re-render the note) when it gets the same object back, so a
  // drag or a remote edit re-renders only the notes it touches.
  type Cached = { note: Note; marks: NoteMarks | undefined; selected: boolean; pos: XYPosition | undefined; w: number; h: number; flags: number; canEdit: boolean; node: NoteFlowNode };
  const nodeCache = useRef(new Map<string, Cached>());
  const frameCache = useRef(new Map<string, { frame: Frame; selected: boolean; pos: XYPosition | undefined; naming: boolean; canEdit: boolean; node: FrameFlowNode }>());
  const frameNodes: FrameFlowNode[] = useMemo(() => {
    const cache = frameCache.current;
    const next = new Map<string, typeof cache extends Map<string, infer V> ? V : never>();
    const out: FrameFlowNode[] = [];
    for (const f of drawOrder(frames.values())) {
      if (!dom.has(f.id)) continue;
      const isSelected = selected.has(f.id);
      const pos = moving.get(f.id);
      const isNaming = naming?.kind === 'frame' && naming.id === f.id;
      let hit = cache.get(f.id);
      if (!hit || hit.frame !== f || hit.selected !== isSelected || hit.pos !== pos || hit.naming !== isNaming || hit.canEdit !== canEdit) {
        const r = frameRect(f);
        const data: FrameNodeData = { frame: f, w: r.w, h: r.h, naming: isNaming, canEdit };
        hit = {
          frame: f,
          selected: isSelected,
          pos,
          naming: isNaming,
          canEdit,
          node: { id: f.id, type: 'frame', position: pos ?? { x: r.x, y: r.y }, data, selected: isSelected, width: r.w, height: r.h, measured: { width: r.w, height: r.h }, handles: handlesOf(r.w, r.h), zIndex: FRAME_Z, dragHandle: '.frame-head', draggable: canEdit && !f.locked && !isNaming },
        };
      }
      next.set(f.id, hit);
      out.push(hit.node);
    }
    frameCache.current = next;
    return out;
  }, [frames, dom, selected, moving, naming, canEdit]);
  const noteNodes: NoteFlowNode[] = useMemo(() => {
    const cache = nodeCache.current;
    const next = new Map<string, Cached>();
    const out: NoteFlowNode[] = [];
    const all = draft ? [...notes.values(), draft] : notes.values();
    for (const n of all) {
      if (!dom.has(n.id)) continue;
      const isSelected = selected.has(n.id);
      const pos = moving.get(n.id);
      const m = byNote.get(n.id);
      const { w, h } = sizing.get(n.id) ?? sizeOf(n);
      const isEditing = editing?.id === n.id && editing.mode === 'inplace';
      const flags = (isEditing ? 1 : 0) | (tabStop === n.id ? 2 : 0) | (highlight === n.id ? 4 : 0);
      let hit = cache.get(n.id);
      if (!hit || hit.note !== n || hit.marks !== m || hit.selected !== isSelected || hit.pos !== pos || hit.canEdit !== canEdit || hit.w !== w || hit.h !== h || hit.flags !== flags) {
        const x = Number.isFinite(n.x) ? n.x : 0;
        const y = Number.isFinite(n.y) ? n.y : 0;
        const data: NoteNodeData = { note: n, marks: m, onMark: openMark, w, h, editing: isEditing, tabStop: tabStop === n.id, highlight: highlight === n.id, canEdit };
        hit = {
          note: n,
          marks: m,
          selected: isSelected,
          pos,
          w,
          h,
          flags,
          canEdit,
          node: {
            id: n.id,
            type: 'note',
            position: pos ?? { x, y },
            data,
            selected: isSelected,
            width: w,
            height: h,
            // Notes have a known size: telling xyflow saves it measuring 2,000 of them.
            measured: { width: w, height: h },
            handles: handlesOf(w, h),
            draggable: canEdit && !isEditing,
          },
        };
      }
      next.set(n.id, hit);
      out.push(hit.node);
    }
    nodeCache.current = next;
    return out;
  }, [notes, draft, dom, byNote, moving, sizing, selected, editing, tabStop, highlight, canEdit, openMark]);
  const nodes: BoardNode[] = useMemo(() => (frameNodes.length ? [...frameNodes, ...noteNodes] : noteNodes), [frameNodes, noteNodes]);

  // One edge object per unchanged connector, as for the notes; a connector
  // whose end is gone (deleted by someone, not yet cleaned up) is not drawn.
  const edgeCache = useRef(new Map<string, { c: Connector; selected: boolean; naming: boolean; edge: ConnectorFlowEdge }>());
  const edges: ConnectorFlowEdge[] = useMemo(() => {
    const cache = edgeCache.current;
    const next = new Map<string, { c: Connector; selected: boolean; naming: boolean; edge: ConnectorFlowEdge }>();
    const out: ConnectorFlowEdge[] = [];
    for (const c of connectors.values()) {
      if (!drawable(c, notes, frames) || !domEdge(c, dom)) continue;
      const isSelected = selected.has(c.id);
      const isNaming = naming?.kind === 'connector' && naming.id === c.id;
      let hit = cache.get(c.id);
      if (!hit || hit.c !== c || hit.selected !== isSelected || hit.naming !== isNaming) {
        const edge: ConnectorFlowEdge = { id: c.id, source: c.from, target: c.to, type: 'connector', data: { connector: c, naming: isNaming }, selected: isSelected, ariaLabel: `Connector${c.label ? ` “${c.label}”` : ''}` };
        if (!isLine(c)) edge.markerEnd = { type: MarkerType.ArrowClosed, color: connectorColor(c.color), width: 18, height: 18 };
        hit = { c, selected: isSelected, naming: isNaming, edge };
      }
      next.set(c.id, hit);
      out.push(hit.edge);
    }
    edgeCache.current = next;
    return out;
  }, [connectors, notes, frames, dom, selected, naming]);

  const onNodesChange = useCallback(
    (changes: NodeChange<BoardNode>[]) => {
      // Only real changes become state: xyflow reports unchanged selections
      // too, and a needless render of 2,000 notes costs a frame.
      let sel: Set<string> | null = null;
      let drag: Map<string, XYPosition> | null = null;
      const snap = editor.getSnapshot();
      for (const c of changes) {
        if (c.type === 'select') {
          if (snap.selected.has(c.id) === c.selected && !sel) continue;
          sel ??= new Set(snap.selected);
          if (c.selected) sel.add(c.id);
          else sel.delete(c.id);
        } else if (c.type === 'position' && c.position && c.dragging) {
          drag ??= new Map(snap.moving);
          drag.set(c.id, c.position);
        }
      }
      if (sel) editor.setSelection(sel);
      if (drag) editor.previewMove(drag);
    },
    [editor],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange<ConnectorFlowEdge>[]) => {
      let sel: Set<string> | null = null;
      const snap = editor.getSnapshot();
      for (const c of changes) {
        if (c.type !== 'select' || (snap.selected.has(c.id) === c.selected && !sel)) continue;
        sel ??= new Set(editor.getSnapshot().selected);
        if (c.selected) sel.add(c.id);
        else sel.delete(c.id);
      }
      if (sel) editor.setSelection(sel);
    },
    [editor],
  );

  // A connection dropped on a note's (or frame's) body rather than on a
  // handle still joins them: the element under the pointer says which.
  const onConnectEnd = useCallback(
    (e: MouseEvent | TouchEvent, st: FinalConnectionState) => {
      if (st.isValid || !st.fromNode) return;
      const p = 'changedTouches' in e ? e.changedTouches[0] : e;
      if (!p) return;
      const el = document.elementFromPoint(p.clientX, p.clientY)?.closest<HTMLElement>('[data-note-id], [data-frame-id]');
      const to = el?.dataset.noteId ?? el?.dataset.frameId;
      if (to && to !== st.fromNode.id) editor.connect(st.fromNode.id, to);
    },
    [editor],
  );

  const onNodeDragStop = useCallback(
    (_e: unknown, _node: BoardNode, dragged: BoardNode[]) => editor.moveNotes(dragged.map((d) => ({ id: d.id, x: d.position.x, y: d.position.y }))),
    [editor],
  );

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (document.querySelector('dialog[open]')) return;
      if (editor.handleKey(e, isTyping(e.target))) e.preventDefault();
    }
    // Paste onto the canvas (no text field focused) makes notes.
    function onPaste(e: ClipboardEvent) {
      if (isTyping(e.target) || document.querySelector('dialog[open]')) return;
      const text = e.clipboardData?.getData('text/plain');
      if (text && editor.paste(text) > 0) e.preventDefault();
    }
    document.addEventListener('keydown', onKey);
    document.addEventListener('paste', onPaste);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('paste', onPaste);
    };
  }, [editor]);

  const onPointerMove = useCallback(
    (e: React.PointerEvent) => {
      const p = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY }, { snapToGrid: false });
      client.presence.sendPointer(Math.round(p.x * 10) / 10, Math.round(p.y * 10) / 10);
    },
    [client, rf],
  );

  const onConnect = useCallback((c: { source: string; target: string }) => void editor.connect(c.source, c.target), [editor]);
  const onEdgeDoubleClick = useCallback((_e: React.MouseEvent, edge: ConnectorFlowEdge) => editor.startNaming('connector', edge.id), [editor]);

  // A click or double-click on a row the layer draws acts on that row (xyflow only knows its DOM rows).
  const layerRows = useRef({ notes, frames, dom });
  layerRows.current = { notes, frames, dom };
  const layerHit = useCallback(
    (e: { clientX: number; clientY: number }) => {
      const r = layerRows.current;
      const at = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      return { at, id: hitRow({ notes: r.notes.values(), frames: r.frames.values(), connectors: [] }, at, r.dom) };
    },
    [rf],
  );
  useLayerDrag(
    wrapper,
    editor,
    (clientX, clientY) => layerHit({ clientX, clientY }).id,
    (id) => {
      const n = layerRows.current.notes.get(id);
      const f = layerRows.current.frames.get(id);
      return n ? { x: n.x, y: n.y } : f && !f.locked ? { x: f.x, y: f.y } : null;
    },
    canEdit && culling,
  );
  const onPaneClick = useCallback(
    (e: React.MouseEvent) => {
      const { at, id } = layerHit(e);
      if (id && editor.getSnapshot().tool !== 'note') editor.select(id, e.shiftKey || e.metaKey || e.ctrlKey);
      else editor.paneClick(at);
    },
    [editor, layerHit],
  );
  const onDoubleClick = useCallback(
    (e: React.MouseEvent) => {
      if (!(e.target as HTMLElement).classList?.contains('react-flow__pane')) return;
      const { id } = layerHit(e);
      if (id && layerRows.current.notes.has(id)) editor.startEdit(id);
    },
    [editor, layerHit],
  );
  // A selection box also takes the rows the layer draws inside it (xyflow has selected its own by then).
  const store = storeApi;
  const box = useRef<{ x: number; y: number; width: number; height: number } | null>(null);
  useEffect(() => store.subscribe((st) => void (st.userSelectionRect && (box.current = st.userSelectionRect))), [store]);
  const onSelectionEnd = useCallback(() => {
    const b = box.current;
    box.current = null;
    if (!b) return;
    const [tx, ty, zoom] = store.getState().transform;
    const r = layerRows.current;
    const culled = inBox({ notes: [...r.notes.values()].filter((n) => !r.dom.has(n.id)), frames: [...r.frames.values()].filter((f) => !r.dom.has(f.id)), connectors: client.getSnapshot().connectors.values() }, { x: (b.x - tx) / zoom, y: (b.y - ty) / zoom, w: b.width / zoom, h: b.height / zoom });
    if (culled.length) editor.setSelection([...editor.getSnapshot().selected, ...culled]);
  }, [store, editor, client]);
  // The full editor: a note deleted (by someone else) while it is open stays
  // in the editor, as last seen: what was typed is not lost, and Save brings it back.
  const full = editing?.mode === 'full' ? editing : null;
  const lastEdited = useRef<Note | null>(null);
  const current = full ? (notes.get(full.id) ?? (draft?.id === full.id ? draft : undefined)) : undefined;
  if (current) lastEdited.current = current;
  const editingNote = current ?? (full && lastEdited.current?.id === full.id ? lastEdited.current : undefined);
  // The editor's AI parts read the board's notes when they ask (as context for the model).
  const notesRef = useRef(notes);
  notesRef.current = notes;
  const aiContext = useMemo(() => ({ boardId: client.boardId, allNotes: () => [...notesRef.current.values()] }), [client]);
  const asking = s.asking;
  const tools = useMemo(() => [...canvasTools(editor, s.tool, selected.size, canEdit), ...(railTools ?? [])], [editor, s.tool, selected.size, canEdit, railTools]);
  const one = selected.size === 1 ? [...selected][0] : undefined;
  const connectorAlone = one ? connectors.get(one) : undefined;
  const frameAlone = one ? frames.get(one) : undefined;

  return (
    <EditorContext.Provider value={editor}>
    <div className={`canvas detail-${detail}${s.tool === 'note' ? ' tool-note' : ''}`} ref={wrapper} onPointerMove={onPointerMove} onDoubleClick={onDoubleClick}>
      <ToolBar
        tools={tools}
        status={
          <span className="muted rail-count">
            {notes.size} note{notes.size === 1 ? '' : 's'}
            {selected.size ? ` · ${selected.size} selected` : ''}
          </span>
        }
      />
      <DetailContext.Provider value={detail}>
        <PresenceContext.Provider value={client.presence}>
        <ReactFlow<BoardNode, ConnectorFlowEdge>
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          edgeTypes={edgeTypes}
          onNodesChange={onNodesChange}
          onEdgesChange={onEdgesChange}
          onConnect={onConnect}
          onConnectEnd={onConnectEnd}
          onEdgeDoubleClick={onEdgeDoubleClick}
          connectionMode={ConnectionMode.Loose}
          onNodeDragStop={onNodeDragStop}
          onPaneClick={onPaneClick}
          onSelectionEnd={onSelectionEnd}
          nodesDraggable={canEdit}
          nodesConnectable={canEdit}
          elementsSelectable
          deleteKeyCode={null}
          selectionKeyCode="Shift"
          multiSelectionKeyCode={MULTI_SELECT_KEYS}
          disableKeyboardA11y
          onlyRenderVisibleElements
          minZoom={MIN_ZOOM}
          defaultViewport={start}
          maxZoom={MAX_ZOOM}
          zoomOnDoubleClick={false}
          aria-label="Board canvas"
        >
          {/* The layer draws the dots too (xyflow's Background re-rastered the screen on every frame of a pan). */}
          <CanvasLayer scene={scene} />
          <ZoomControls onFit={onFit} />
          {/* The minimap draws every note again (an SVG rect each): past a few
              hundred notes it costs more than it shows. */}
          {notes.size <= MINIMAP_MAX_NOTES && <MiniMap pannable zoomable nodeColor={minimapColor} nodeStrokeColor={minimapStroke} nodeClassName={minimapClass} ariaLabel="Mini map" />}
          {overlay}
          <Cursors presence={client.presence} />
          <ViewSync presence={client.presence} />
        </ReactFlow>
        </PresenceContext.Provider>
      </DetailContext.Provider>
      {editingNote && full && (
        <NoteEditor
          key={editingNote.id}
          note={editingNote}
          initial={editor.getEdit() ?? undefined}
          gone={!current}
          presence={client.presence}
          readOnly={!canEdit}
          ai={aiContext}
          onClose={() => editor.closeEdit()}
          onHistory={
            onNoteHistory && !full.draft
              ? () => {
                  editor.closeEdit();
                  onNoteHistory(editingNote.id);
                }
              : undefined
          }
          onSave={(e) => editor.saveFull(e)}
        />
      )}
      {s.menu && <NoteMenu key={s.menu.id} menu={s.menu} />}
      <StructureBar connector={connectorAlone} frame={frameAlone} canEdit={canEdit} />
      {s.panel === 'search' && <SearchPanel notes={notes} items={items} frames={frames} onNote={(id) => editor.jumpTo(id)} onFrame={(id) => editor.zoomToFrame(id)} onItem={onItem} onClose={() => editor.openPanel(null)} />}
      {s.panel === 'outline' && <OutlinePanel frames={frames} notes={notes} onFrame={(id) => editor.zoomToFrame(id)} onNote={(id) => editor.jumpTo(id)} onClose={() => editor.openPanel(null)} />}
      {s.panel === 'shortcuts' && <ShortcutsPanel canEdit={canEdit} onClose={() => editor.openPanel(null)} />}
      {asking?.kind === 'discard' && (
        <Dialog title="Discard your changes?" onClose={() => editor.keepEditing()}>
          <p>What you typed in this note has not been saved.</p>
          <div className="row dialog-actions">
            <button type="button" className="primary danger" onClick={() => editor.discardEdit()}>
              Discard
            </button>
            <button type="button" data-autofocus onClick={() => editor.keepEditing()}>
              Keep editing
            </button>
          </div>
        </Dialog>
      )}
      {asking?.kind === 'undo' && (
        <Dialog title={asking.result.title} onClose={() => editor.answerUndo(false)}>
          <p>{asking.result.text}</p>
          <div className="row dialog-actions">
            <button type="button" className="primary danger" onClick={() => editor.answerUndo(true)}>
              Delete
            </button>
            <button type="button" data-autofocus onClick={() => editor.answerUndo(false)}>
              Keep it
            </button>
          </div>
        </Dialog>
      )}
    </div>
    </EditorContext.Provider>
  );
}
