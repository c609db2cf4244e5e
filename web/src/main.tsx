import { createRoot } from 'react-dom/client';

createRoot(document.getElementById('root')!).render(<main><h1>Corkboard</h1></main>);
