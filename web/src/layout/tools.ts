// The board's tools as data: the rail on a desktop, the bottom bar and its
// "More" menu on a phone (docs/web-client.md, "Breakpoints"). Any feature
// adds a tool by adding an entry; where it shows is decided here.
import { PHONE_MAX_WIDTH } from './zoom';

/** Tool is one entry of the board's tool rail (the bottom bar on a phone, or its More menu). */
export interface Tool {
  /** id is stable across renders (the React key). */
  id: string;
  /** label is the visible text. */
  label: string;
  /** name is the accessible name when the text says too little ("?" is "Keyboard shortcuts"). */
  name?: string;
  onSelect: () => void;
  /** pressed makes the tool a toggle (aria-pressed in the bar, a checked menuitemcheckbox in More). */
  pressed?: boolean;
  disabled?: boolean;
  /** keys is the tool's aria-keyshortcuts. */
  keys?: string;
  title?: string;
  primary?: boolean;
  /** startsGroup sets the tool a little apart from the one before (the panel toggles after the tools). */
  startsGroup?: boolean;
  /**
   * rank says who keeps a place in a phone's bar when not all fit: the
   * lowest ranks stay, the others go to More (in the rail's order).
   */
  rank: number;
}

/** BAR_SLOT_PX is the width (CSS px) one tool needs in a phone's bottom bar: a readable word and a finger. */
export const BAR_SLOT_PX = 64;

/**
 * splitTools says which tools show in the bar and which go to the More
 * menu, for a window width. Wider than a phone, the rail holds them all.
 * On a phone the bar has a slot per BAR_SLOT_PX; when the tools are more
 * than the slots, one slot is More's and the lowest ranks keep the others.
 * Both lists keep the rail's order.
 */
export function splitTools(tools: readonly Tool[], windowWidth: number): { bar: Tool[]; more: Tool[] } {
  const slots = windowWidth > PHONE_MAX_WIDTH ? Infinity : Math.max(2, Math.floor(windowWidth / BAR_SLOT_PX));
  if (tools.length <= slots) return { bar: [...tools], more: [] };
  const keep = new Set([...tools].sort((a, b) => a.rank - b.rank).slice(0, slots - 1));
  return { bar: tools.filter((t) => keep.has(t)), more: tools.filter((t) => !keep.has(t)) };
}
