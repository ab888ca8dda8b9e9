import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { connect } from './client/connect';
import { createAppStore } from './store/app-store';
import { AppStoreContext } from './store/use-app-store';
import './styles.css';

const client = connect();
const store = createAppStore(client);
client.onEvent((event) => store.getState().applyEvent(event));
client.onConnectionChange((state) => store.getState().setConnection(state));

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <AppStoreContext.Provider value={store}>
      <App />
    </AppStoreContext.Provider>
  </StrictMode>,
);
