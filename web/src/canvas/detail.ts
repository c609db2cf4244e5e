import { createContext } from 'react';

/**
 * detail is how much of a note is drawn at a zoom level: far out, text is
 * unreadable and costly to paint, so notes become coloured boxes (then boxes
 * with titles). Only crossing a level re-renders anything.
 */
export const detailOf = (s: { transform: [number, number, number] }) => (s.transform[2] < 0.3 ? 'far' : s.transform[2] < 0.6 ? 'mid' : 'near');

/** Detail is a note's level of detail. */
export type Detail = ReturnType<typeof detailOf>;

/**
 * DetailContext hands the canvas's level of detail to the notes: one store
 * subscription for the canvas instead of one per drawn note.
 */
export const DetailContext = createContext<Detail>('near');
