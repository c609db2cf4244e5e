// useChat's error, as an AiError the shared messages understand. Answers
// refused before the stream (4xx/5xx) are AiErrors already: the transport's
// fetch is aiFetch. What remains is an answer that broke after it began:
// an `error` chunk (useChat makes it an Error with the server's text) or a
// connection that dropped (a TypeError from reading the body).
import { AiError } from '../../api/ai';

/**
 * chatError classifies err. partial is the text of the answer that was
 * arriving (empty when nothing had): with it the failure is a cut answer,
 * which keeps what arrived.
 */
export function chatError(err: unknown, partial: string): AiError {
  if (err instanceof AiError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  if (partial) return new AiError(200, msg, 'cut', { partial });
  if (/^AI model unavailable/i.test(msg)) return new AiError(503, msg, 'unavailable');
  if (err instanceof TypeError) return new AiError(0, msg, 'cut');
  return new AiError(502, msg, 'upstream');
}

/** cutReason is the server's reason for a cut answer worth showing, or ''. */
export function cutReason(e: AiError): string {
  if (e.kind !== 'cut') return '';
  // A dropped connection says "network error" / "Failed to fetch": nothing a person can use.
  if (/network|fetch|terminated|aborted/i.test(e.message)) return 'The connection to the server broke.';
  return e.message;
}
