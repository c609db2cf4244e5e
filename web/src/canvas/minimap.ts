// What the minimap draws for each node (issue 24): a note as a block of its
// colour; a frame as an outline in its colour over its faint tint. xyflow
// draws the minimap's nodes in the canvas's order, frames first (largest
// first), so the frames lie under the notes there as on the board.
import type { Frame, Note } from '../api/types';
import { frameColor } from '../editor/structure';
import { background } from './notes';

/** MiniNode is the part of a canvas node the minimap's functions read. */
export interface MiniNode {
  type?: string;
  data: unknown;
}

const frameOf = (n: MiniNode) => (n.type === 'frame' ? (n.data as { frame: Frame }).frame : null);

/** minimapColor is a node's fill: a note's colour, a frame's tint. */
export function minimapColor(n: MiniNode): string {
  const f = frameOf(n);
  return f ? frameColor(f.color).fill : background((n.data as { note: Note }).note.color);
}

/** minimapStroke is a node's outline: a frame's line colour; notes have none (the CSS's transparent). */
export function minimapStroke(n: MiniNode): string {
  const f = frameOf(n);
  return f ? frameColor(f.color).line : 'transparent';
}

/** minimapClass marks frames, whose outline keeps a width readable at any minimap scale (editor.css). */
export function minimapClass(n: MiniNode): string {
  return n.type === 'frame' ? 'minimap-frame' : '';
}
