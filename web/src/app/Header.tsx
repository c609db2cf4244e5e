import type { ReactNode } from 'react';
import { navigate } from './router';

/** Header is the top bar: app name (home link), the screen's own controls, the user. */
export function Header({ email, onLogout, children }: { email: string; onLogout: () => void; children?: ReactNode }) {
  return (
    <header className="topbar">
      <a
        className="brand"
        href="/"
        onClick={(e) => {
          e.preventDefault();
          navigate('/');
        }}
      >
        Corkboard
      </a>
      <div className="topbar-main">{children}</div>
      <span className="who" title={email}>
        {email}
      </span>
      <button type="button" onClick={onLogout}>
        Log out
      </button>
    </header>
  );
}
