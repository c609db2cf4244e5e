import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { createApi } from './api/api';
import { registerServiceWorker } from './app/serviceWorker';
import { UpdatePrompt } from './app/UpdatePrompt';
import './app/app.css';

performance.mark('corkboard:start');
const api = createApi();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={api} />
    <UpdatePrompt />
  </StrictMode>,
);
registerServiceWorker();
