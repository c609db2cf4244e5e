import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { createServices, ServicesContext } from './app/services';
import { registerServiceWorker } from './app/serviceWorker';
import { UpdatePrompt } from './app/UpdatePrompt';
import './app/app.css';

performance.mark('corkboard:start');
createServices().then((services) => {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <ServicesContext.Provider value={services}>
        <App />
        <UpdatePrompt />
      </ServicesContext.Provider>
    </StrictMode>,
  );
});
registerServiceWorker();
