/**
 * backoffDelay is the wait before retry number `attempt` (0-based): the
 * live protocol's 1 s, 3 s, 7 s … doubling up to `max`, with "full jitter"
 * on the upper half so that many clients dropped together do not come back
 * in step. `random` is injectable for tests.
 */
export function backoffDelay(attempt: number, { base = 1000, max = 30_000, random = Math.random } = {}): number {
  const ceiling = Math.min(max, base * (2 ** (attempt + 1) - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
