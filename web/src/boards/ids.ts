const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** randomId is a new board or row ID: 12 characters from crypto.getRandomValues. */
export function randomId(n = 12): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let s = '';
  for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
  return s;
}

/** BOARD_ID is the server's rule for board IDs (docs/api.md). */
export const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** boardIdFromInput accepts an ID or a pasted board URL. */
export function boardIdFromInput(input: string): string | null {
  const s = input.trim();
  const m = /\/b\/([^/?#]+)/.exec(s);
  const id = m ? decodeURIComponent(m[1]) : s;
  return BOARD_ID.test(id) ? id : null;
}
