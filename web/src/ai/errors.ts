// The sentences a person reads when an AI request fails (issue 12,
// "Errors a person understands"). Every AI part of the client shows its
// errors through aiErrorMessage, so the same failure reads the same
// everywhere.
import { ApiError } from '../api/api';
import { AiError } from '../api/ai';

/** plural is n and the word for it: "1 credit", "3 credits" (many when the plural is not one + s). */
export const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

function resetText(resetsAt?: string): string {
  if (!resetsAt) return '';
  const d = new Date(resetsAt);
  if (Number.isNaN(d.getTime())) return '';
  return ` They renew on ${d.toLocaleDateString(undefined, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' })}.`;
}

/**
 * aiErrorMessage is what to tell the user about e. resetsAt (from
 * GET /api/me/usage) adds when the credits renew to a quota message.
 */
export function aiErrorMessage(e: unknown, resetsAt?: string): string {
  if (e instanceof AiError) {
    switch (e.kind) {
      case 'quota': {
        const q = e.quota!;
        return `You have used ${q.used} of ${plural(q.limit, 'AI credit')} this month on the ${q.plan} plan.${resetText(resetsAt)}`;
      }
      case 'rate':
        return e.retryAfter ? `Too many AI requests. Try again in ${plural(e.retryAfter, 'second')}.` : 'Too many AI requests. Try again in a minute.';
      case 'unavailable': {
        const reason = e.message.replace(/^AI model unavailable:\s*/i, '').replace(/\.$/, '');
        return `The local AI model is not available${reason ? ` (${reason})` : ''}. Whoever runs this Corkboard can start it with \`ollama serve\` and \`ollama pull <model>\`.`;
      }
      case 'cut':
        return e.partial ? 'The answer was cut off. What arrived is kept.' : 'The answer was cut off before any text arrived. Try again.';
      case 'upstream':
        return `The AI model gave an answer Corkboard could not use (${e.message}). Try again.`;
      case 'offline':
        return 'The server cannot be reached. Check your connection and try again.';
      case 'session':
        return 'Your session has ended. Sign in again to use the AI.';
      case 'access':
        return 'You no longer have access to this board.';
      case 'invalid':
        return e.field ? `${e.message} (${e.field})` : e.message;
      default:
        return e.message;
    }
  }
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
