import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useServices } from '../app/services';
import type { ApiError } from '../api/api';

/** Rules of docs/auth.md the messages follow. */
const CODE_LIFETIME_MS = 10 * 60 * 1000;
const TRIES_PER_CODE = 5;

function waitText(seconds?: number): string {
  if (!seconds) return 'a little while';
  if (seconds < 90) return `${seconds} seconds`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * Login is the two-step form: e-mail, then the six-digit code. notice is
 * shown above it (what a logout could not do yet); beforeLogin runs before
 * the code is checked, so a logout made offline ends its session before a
 * new one replaces its cookie.
 */
export function Login({ onLoggedIn, notice, beforeLogin }: { onLoggedIn: () => void; notice?: string; beforeLogin?: () => Promise<void> }) {
  const { api } = useServices();
  const [step, setStep] = useState<'email' | 'code'>('email');
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [info, setInfo] = useState('');
  const [busy, setBusy] = useState(false);
  const [codesInLog, setCodesInLog] = useState(false);
  const sentAt = useRef(0);
  const wrongTries = useRef(0);
  const codeRef = useRef<HTMLInputElement>(null);
  const ids = { email: useId(), code: useId(), err: useId(), hint: useId() };

  useEffect(() => {
    api.config().then((c) => setCodesInLog(c.loginCodesInLog), () => {});
  }, [api]);

  useEffect(() => {
    if (step === 'code') codeRef.current?.focus();
  }, [step]);

  async function send(e?: FormEvent) {
    e?.preventDefault();
    setError('');
    setBusy(true);
    try {
      await api.sendOtp(email.trim());
      sentAt.current = Date.now();
      wrongTries.current = 0;
      setCode('');
      setInfo(`We sent a 6-digit code to ${email.trim()}. It works for 10 minutes.`);
      setStep('code');
    } catch (err) {
      const x = err as ApiError;
      if (x.status === 429) setError(`Too many codes were asked for this address. Try again in ${waitText(x.retryAfter)}.`);
      else setError(x.message);
    } finally {
      setBusy(false);
    }
  }

  async function verify(e: FormEvent) {
    e.preventDefault();
    setError('');
    if (!/^\d{6}$/.test(code)) {
      setError('The code is 6 digits.');
      return;
    }
    setBusy(true);
    try {
      await beforeLogin?.();
      await api.verifyOtp(email.trim(), code);
      onLoggedIn();
    } catch (err) {
      const x = err as ApiError;
      if (x.status === 429) {
        setError(`Too many tries. Wait ${waitText(x.retryAfter)}, then try again.`);
      } else if (x.status === 400) {
        wrongTries.current++;
        // The server gives one answer for every failure (no hints for
        // attackers); the client knows the rules and explains them.
        if (Date.now() - sentAt.current >= CODE_LIFETIME_MS) {
          setError('This code has expired (codes work for 10 minutes). Ask for a new one.');
        } else if (wrongTries.current >= TRIES_PER_CODE) {
          setError('Too many wrong tries: this code no longer works. Ask for a new one.');
        } else {
          const left = TRIES_PER_CODE - wrongTries.current;
          setError(`That code is not right. Check the latest e-mail and try again (${left} ${left === 1 ? 'try' : 'tries'} left).`);
        }
      } else {
        setError(x.message);
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="centered">
      <div className="card login">
        <h1 className="login-brand">
          <span className="brand-mark" aria-hidden="true" /> Corkboard
        </h1>
        <p className="tagline">Boards your team shares live, offline-ready, with a local AI.</p>
        {notice && (
          <p className="banner" role="status">
            {notice}
          </p>
        )}
        {step === 'email' ? (
          <form onSubmit={send} aria-describedby={error ? ids.err : undefined}>
            <h2>Log in</h2>
            <p>We'll e-mail you a 6-digit code. No password needed.</p>
            <label htmlFor={ids.email}>E-mail address</label>
            <input id={ids.email} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Sending…' : 'Send me a code'}
            </button>
          </form>
        ) : (
          <form onSubmit={verify}>
            <h2>Enter your code</h2>
            <p role="status">{info}</p>
            <label htmlFor={ids.code}>6-digit code</label>
            <input
              ref={codeRef}
              id={ids.code}
              name="code"
              autoComplete="one-time-code"
              inputMode="numeric"
              pattern="[0-9]{6}"
              maxLength={6}
              required
              value={code}
              onChange={(e) => setCode(e.target.value.replace(/\D/g, '').slice(0, 6))}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? ids.err : undefined}
            />
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Checking…' : 'Log in'}
            </button>
            <div className="row">
              <button type="button" onClick={() => send()} disabled={busy}>
                Send a new code
              </button>
              <button type="button" onClick={() => (setStep('email'), setError(''))}>
                Use another address
              </button>
            </div>
          </form>
        )}
        <p id={ids.err} className="error" role="alert">
          {error}
        </p>
        {codesInLog && (
          <p className="hint" id={ids.hint}>
            This server has no mail server configured: your code is not e-mailed. It is in the server's log (look for
            "login code") and in the <code>outbox</code> folder of its data folder.
          </p>
        )}
      </div>
    </main>
  );
}
