// The user's AI credits (GET /api/me/usage), shared by every AI part of the
// client: each calls creditsChanged() after a request, and whatever shows
// the credits (useCredits) reads them again.
import { useEffect, useSyncExternalStore } from 'react';
import { getUsage, type Usage } from '../api/ai';

let usage: Usage | undefined;
let generation = 0; // bumped by creditsChanged; a stale answer is dropped
let inFlight = false;
let stale = true;
const listeners = new Set<() => void>();

const notify = () => listeners.forEach((l) => l());

async function refresh(): Promise<void> {
  if (inFlight) return;
  inFlight = true;
  stale = false;
  const gen = generation;
  try {
    const u = await getUsage();
    if (gen === generation) {
      usage = u;
      notify();
    }
  } catch {
    // Credits are a hint; a failed read keeps the last figure.
  } finally {
    inFlight = false;
    if (gen !== generation && listeners.size > 0) void refresh();
  }
}

/** creditsChanged says an AI request ended: the credits are read again. */
export function creditsChanged(): void {
  generation++;
  stale = true;
  if (listeners.size > 0) void refresh();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** currentCredits is the last usage read, if any: useCredits' snapshot. */
function currentCredits(): Usage | undefined {
  return usage;
}

/** useCredits returns the user's latest usage, reading it when first shown. */
export function useCredits(): Usage | undefined {
  const u = useSyncExternalStore(subscribe, currentCredits);
  useEffect(() => {
    if (stale) void refresh();
  }, []);
  return u;
}
