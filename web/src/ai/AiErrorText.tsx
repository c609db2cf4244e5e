import { aiErrorMessage } from './errors';
import { useCredits } from './credits';
import { AiError } from '../api/ai';

/** AiErrorText shows an AI failure as a sentence, announced to screen readers. */
export function AiErrorText({ error }: { error: unknown }) {
  const usage = useCredits();
  if (!error) return null;
  const resetsAt = error instanceof AiError && error.kind === 'quota' ? usage?.resetsAt : undefined;
  return (
    <p role="alert" className="ai-error">
      {aiErrorMessage(error, resetsAt)}
    </p>
  );
}
