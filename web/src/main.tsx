import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { createApi } from './api/api';
import { registerServiceWorker } from './app/serviceWorker';
import { UpdatePrompt } from './app/UpdatePrompt';
import './app/app.css';
import './layout/layout.css';
import { themeOfPage } from './layout/theme';

performance.mark('corkboard:start');
// The theme is on <html> before the first render: no flash of the wrong colours.
themeOfPage();
const api = createApi();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={api} />
    <UpdatePrompt />
  </StrictMode>,
);
registerServiceWorker();
