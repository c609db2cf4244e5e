// The spec's recovery rule: a client with no local state, on a board where
// the server has no data, fetches the latest snapshot and rebuilds the board
// from it (as normal pushes, so the server has the data again).
import type { BoardState, SnapshotInfo } from '../api/types';
import type { SyncState } from '../sync/client';
import { applyPlan, planRestore, type Editor } from './restore';

/** SnapshotSource is the API as recovery sees it. */
export interface SnapshotSource {
  listSnapshots(boardId: string): Promise<{ snapshots: SnapshotInfo[] }>;
  restoreBoard(boardId: string, key: string): Promise<BoardState>;
}

/** emptyState reports a state with no board data at all (local or server). */
export const emptyState = (s: Pick<SyncState, 'version' | 'notes' | 'items' | 'pending'>) => s.version === 0 && s.notes.size === 0 && s.items.size === 0 && s.pending === 0;

/**
 * recover rebuilds an empty board from its latest point-in-time snapshot;
 * it returns the snapshot's key, or null when there is none (a new board).
 * The caller checks the rule's two conditions (emptyState before the first
 * pull, and after it).
 */
export async function recover(api: SnapshotSource, boardId: string, client: Editor & { getSnapshot(): SyncState }): Promise<string | null> {
  const { snapshots } = await api.listSnapshots(boardId);
  if (!snapshots.length) return null;
  const state = await api.restoreBoard(boardId, snapshots[0].key);
  const now = client.getSnapshot();
  if (!emptyState(now)) return null; // someone wrote meanwhile: theirs wins
  applyPlan(client, planRestore(now, state));
  return snapshots[0].key;
}
