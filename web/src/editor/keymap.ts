// The editor's keymap: one table that the key handler matches and the
// shortcuts panel lists, so the panel cannot drift from what the keys do
// (docs/web-client.md, "Keyboard and touch").

/** KeyLike is the part of a KeyboardEvent the keymap reads. */
export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

/** Action names what a binding does; Editor.run carries it out. */
export type Action =
  | 'create'
  | 'edit'
  | 'openFull'
  | 'delete'
  | 'undo'
  | 'redo'
  | 'focus'
  | 'move'
  | 'resize'
  | 'clear'
  | 'zoomIn'
  | 'zoomOut'
  | 'fit'
  | 'search'
  | 'shortcuts'
  | 'toolSelect'
  | 'toolNote'
  | 'save'
  | 'cancel'
  | 'menu'
  | 'frame'
  | 'connect'
  | 'connectors'
  | 'outline';

/** Binding is one entry of the keymap. */
export interface Binding {
  action: Action;
  /** keys are the combinations as the shortcuts panel shows them. */
  keys: string[];
  /** aria is the aria-keyshortcuts value of the control doing the same. */
  aria: string;
  label: string;
  /** edits: only for people who may edit the board. */
  edits: boolean;
  /** context: 'board' on the canvas; 'editing' in a note's in-place editor. */
  context: 'board' | 'editing';
  /** global: also when a text field outside a dialog has the focus (Ctrl+F). */
  global?: boolean;
  match(e: KeyLike): boolean;
}

const mod = (e: KeyLike) => e.ctrlKey || e.metaKey;
const plain = (e: KeyLike) => !e.ctrlKey && !e.metaKey && !e.altKey;
const isArrow = (e: KeyLike) => e.key === 'ArrowLeft' || e.key === 'ArrowRight' || e.key === 'ArrowUp' || e.key === 'ArrowDown';
const key = (e: KeyLike, k: string) => e.key.toLowerCase() === k;

/** KEYMAP is every key the editor knows, in the order the shortcuts panel lists them. */
export const KEYMAP: readonly Binding[] = [
  { action: 'create', keys: ['N'], aria: 'N', label: 'New note at a free spot near the centre of the view', edits: true, context: 'board', match: (e) => plain(e) && !e.shiftKey && key(e, 'n') },
  { action: 'edit', keys: ['Enter', 'double-click', 'double-tap'], aria: 'Enter', label: 'Edit the selected note in place (a frame or connector: its name)', edits: false, context: 'board', match: (e) => plain(e) && !e.shiftKey && e.key === 'Enter' },
  { action: 'openFull', keys: ['Shift+Enter'], aria: 'Shift+Enter', label: 'Open the selected note in the full editor (Markdown preview, AI, history)', edits: false, context: 'board', match: (e) => plain(e) && e.shiftKey && e.key === 'Enter' },
  { action: 'menu', keys: ['Shift+F10', 'Menu key', 'right-click', 'long-press'], aria: 'Shift+F10 ContextMenu', label: 'Open the note menu: edit, full editor, colour, duplicate, history, delete', edits: false, context: 'board', match: (e) => !mod(e) && !e.altKey && (e.key === 'ContextMenu' || (e.shiftKey && e.key === 'F10')) },
  { action: 'delete', keys: ['Delete', 'Backspace'], aria: 'Delete', label: 'Delete the selected notes (Ctrl+Z brings them back)', edits: true, context: 'board', match: (e) => !mod(e) && (e.key === 'Delete' || e.key === 'Backspace') },
  { action: 'undo', keys: ['Ctrl+Z', '⌘Z'], aria: 'Control+Z Meta+Z', label: 'Undo my last change', edits: true, context: 'board', match: (e) => mod(e) && !e.shiftKey && key(e, 'z') },
  { action: 'redo', keys: ['Ctrl+Shift+Z', '⌘⇧Z', 'Ctrl+Y'], aria: 'Control+Shift+Z Meta+Shift+Z Control+Y', label: 'Redo', edits: true, context: 'board', match: (e) => mod(e) && ((e.shiftKey && key(e, 'z')) || (!e.shiftKey && key(e, 'y'))) },
  { action: 'focus', keys: ['←', '→', '↑', '↓'], aria: 'ArrowLeft ArrowRight ArrowUp ArrowDown', label: 'Go to the nearest note or frame in that direction (nothing selected: pan the view)', edits: false, context: 'board', match: (e) => plain(e) && !e.shiftKey && isArrow(e) },
  { action: 'move', keys: ['Alt+arrows', 'Alt+Shift+arrows'], aria: 'Alt+ArrowLeft Alt+ArrowRight Alt+ArrowUp Alt+ArrowDown', label: 'Move the selected notes 10 px (with Shift: 50 px)', edits: true, context: 'board', match: (e) => e.altKey && !mod(e) && isArrow(e) },
  { action: 'resize', keys: ['Shift+arrows'], aria: 'Shift+ArrowLeft Shift+ArrowRight Shift+ArrowUp Shift+ArrowDown', label: 'Resize the selected notes 10 px (→ ↓ wider and taller, ← ↑ narrower and shorter)', edits: true, context: 'board', match: (e) => plain(e) && e.shiftKey && isArrow(e) },
  { action: 'clear', keys: ['Escape'], aria: 'Escape', label: 'Clear the selection', edits: false, context: 'board', match: (e) => e.key === 'Escape' },
  { action: 'zoomIn', keys: ['+'], aria: '+', label: 'Zoom in', edits: false, context: 'board', match: (e) => !mod(e) && (e.key === '+' || e.key === '=') },
  { action: 'zoomOut', keys: ['−'], aria: '-', label: 'Zoom out', edits: false, context: 'board', match: (e) => !mod(e) && e.key === '-' },
  { action: 'fit', keys: ['0', 'Shift+1'], aria: '0', label: 'Zoom to fit every note', edits: false, context: 'board', match: (e) => !mod(e) && (e.key === '0' || (e.shiftKey && e.key === '!')) },
  { action: 'search', keys: ['Ctrl+F', '⌘F'], aria: 'Control+F Meta+F', label: 'Search notes and work items', edits: false, context: 'board', global: true, match: (e) => mod(e) && !e.shiftKey && !e.altKey && key(e, 'f') },
  { action: 'shortcuts', keys: ['?'], aria: '?', label: 'Show these shortcuts', edits: false, context: 'board', match: (e) => !mod(e) && e.key === '?' },
  { action: 'toolSelect', keys: ['V'], aria: 'V', label: 'Select tool: click selects, drag moves', edits: false, context: 'board', match: (e) => plain(e) && !e.shiftKey && key(e, 'v') },
  { action: 'toolNote', keys: ['Shift+N'], aria: 'Shift+N', label: 'Note tool: the next click on the canvas puts a note there', edits: true, context: 'board', match: (e) => plain(e) && e.shiftKey && key(e, 'n') },
  { action: 'frame', keys: ['F'], aria: 'F', label: 'New frame: around the selected notes, or in the middle of the view', edits: true, context: 'board', match: (e) => plain(e) && !e.shiftKey && key(e, 'f') },
  { action: 'connect', keys: ['C', 'drag from a note’s edge'], aria: 'C', label: 'Connect: an arrow between the two selected notes or frames (from the one selected first); with one selected, to the next one you select', edits: true, context: 'board', match: (e) => plain(e) && !e.shiftKey && key(e, 'c') },
  { action: 'connectors', keys: ['L', 'Shift+L'], aria: 'L Shift+L', label: 'Select the connectors of the selected note or frame, one after another (Shift: backwards); then Enter relabels, Delete removes, Escape goes back to the note', edits: false, context: 'board', match: (e) => plain(e) && key(e, 'l') },
  { action: 'outline', keys: ['O'], aria: 'O', label: 'Outline: the frames and the notes in each; zoom to a frame', edits: false, context: 'board', match: (e) => plain(e) && !e.shiftKey && key(e, 'o') },
  { action: 'save', keys: ['Ctrl+Enter', '⌘Enter', 'Enter in the title', 'click outside'], aria: 'Control+Enter Meta+Enter', label: 'Save the note being edited in place', edits: true, context: 'editing', match: (e) => mod(e) && e.key === 'Enter' },
  { action: 'cancel', keys: ['Escape'], aria: 'Escape', label: 'Stop editing in place (asks first when there is unsaved text)', edits: false, context: 'editing', match: (e) => e.key === 'Escape' },
];

/** bindingFor is the first binding of the context matching the key, or undefined. */
export function bindingFor(e: KeyLike, context: Binding['context']): Binding | undefined {
  return KEYMAP.find((b) => b.context === context && b.match(e));
}

/** ariaOf is the aria-keyshortcuts of an action (for the button doing the same). */
export function ariaOf(action: Action): string {
  return KEYMAP.find((b) => b.action === action)?.aria ?? '';
}
