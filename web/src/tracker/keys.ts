// Work item keys (PREFIX-n), shared by the tracker's "+ Item" and the AI's
// generated items. Kept apart from both so the board's entry chunk does not
// pull in the lazily loaded AI code.
import type { TrackerItem } from '../api/types';

/** nextKeys proposes n keys after the largest PREFIX-n of items (CB-1 on an empty tracker). */
export function nextKeys(items: Iterable<TrackerItem>, n: number): string[] {
  let prefix = 'CB';
  let max = 0;
  for (const i of items) {
    const m = /^([A-Za-z]+)-(\d+)$/.exec(i.key ?? '');
    if (m && Number(m[2]) > max) {
      max = Number(m[2]);
      prefix = m[1];
    }
  }
  return Array.from({ length: n }, (_, k) => `${prefix}-${max + 1 + k}`);
}
