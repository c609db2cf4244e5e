// The connection badge's words, from the browser's network state and the
// live socket's status; plain so that the socket tests can check what the
// user would read.
import type { SocketStatus } from './socket';

/** Badge is the connection badge: its text and its class (data-connection). */
export interface Badge {
  text: string;
  cls: 'online' | 'offline' | 'reconnecting';
}

/** connectionBadge says Offline, Connected, Access removed or Reconnecting…. */
export function connectionBadge(networkUp: boolean, status: SocketStatus): Badge {
  if (!networkUp) return { text: 'Offline', cls: 'offline' };
  if (status === 'online') return { text: 'Connected', cls: 'online' };
  if (status === 'forbidden') return { text: 'Access removed', cls: 'offline' };
  return { text: 'Reconnecting…', cls: 'reconnecting' };
}
