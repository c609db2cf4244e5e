// Read-only links in the browser (docs/web-client.md, "Read-only links"):
// the pure parts of the link page (boards/LinkPage.tsx) and of the share
// dialog's links (boards/LinksSection.tsx).
import type { ApiError } from '../api/api';
import type { Access, LinkInfo } from '../api/types';

/** linkPath is the page of a read-only link. */
export const linkPath = (token: string) => `/l/${token}`;

/** linkTokenOf returns the token of a /l/<token> path (a read-only link's page), or null. */
export function linkTokenOf(path: string): string | null {
  const m = /^\/l\/([A-Za-z0-9_-]{43})\/?$/.exec(path);
  return m ? m[1] : null;
}

/** LinkState is what a link's page shows. */
export type LinkState = { s: 'loading' } | { s: 'open'; info: LinkInfo } | { s: 'gone' } | { s: 'error'; message: string; offline: boolean };

/** viewerAccess is what a read-only link may do: view. */
export function viewerAccess(): Access {
  return { hasAccess: true, isOwner: false, isUnclaimed: false, canEdit: false };
}

/** linkState is what the page shows after asking what the link opens. */
export function linkState(result: { info: LinkInfo } | { error: ApiError }): LinkState {
  if ('info' in result) return { s: 'open', info: result.info };
  const { status, message } = result.error;
  // 401: never made, revoked or expired; 403: not a link to a board (any more).
  if (status === 401 || status === 403) return { s: 'gone' };
  return { s: 'error', message, offline: status === 0 };
}

/** EXPIRY_CHOICES are the lives a new link may be given, in hours (the server takes 1 to 8760). */
export const EXPIRY_CHOICES: readonly { hours: number; label: string }[] = [
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '1 day' },
  { hours: 24 * 7, label: '7 days' },
  { hours: 24 * 30, label: '30 days' },
  { hours: 24 * 365, label: '1 year' },
];

/** DEFAULT_EXPIRY is the choice the form starts on: long enough for a week's workshop. */
export const DEFAULT_EXPIRY = 24 * 7;

/** when says a link's time as people read it, in their locale. */
export function when(iso: string, locale?: string): string {
  return new Date(iso).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'short' });
}
