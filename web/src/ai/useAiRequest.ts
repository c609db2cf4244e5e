// What the AI dialogs (Import document, Generate in the tracker) share
// around their one request: it can be cancelled, it stops when the dialog
// closes, and the credits are read again after it, whatever happened.
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { creditsChanged } from './credits';

/**
 * useAiRequest runs a dialog's AI request. send resolves to what call
 * returns, or to undefined when it failed (error then says why) or was
 * cancelled (error stays empty: the user asked for it).
 */
export function useAiRequest() {
  const abort = useRef<AbortController | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Closing the dialog stops a request still running.
  useEffect(() => () => abort.current?.abort(), []);

  const send = useCallback(async <T>(call: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> => {
    setError(null);
    const ac = new AbortController();
    abort.current = ac;
    try {
      return await call(ac.signal);
    } catch (e) {
      if (!ac.signal.aborted) setError(e);
      return undefined;
    } finally {
      abort.current = null;
      creditsChanged();
    }
  }, []);
  const cancel = useCallback(() => abort.current?.abort(), []);
  return { send, cancel, error };
}

/**
 * useFocusAfterSending moves the focus to target when a request ends with
 * the form shown again (it failed or was cancelled): the Cancel button the
 * focus was on is gone, and the focus would fall to the page.
 */
export function useFocusAfterSending(target: RefObject<HTMLElement | null>, sending: boolean, formShown: boolean) {
  const wasSending = useRef(false);
  useEffect(() => {
    if (wasSending.current && formShown) target.current?.focus();
    wasSending.current = sending;
  }, [target, sending, formShown]);
}
