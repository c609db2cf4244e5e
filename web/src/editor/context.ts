// EditorContext hands the board's Editor to the notes (their in-place
// editor, resize handle and buttons call it): a context, not node data, so
// that it never changes a node's data and re-renders no note.
import { createContext } from 'react';
import type { Editor } from './Editor';

/** EditorContext is the board's Editor (null outside a canvas). */
export const EditorContext = createContext<Editor | null>(null);
