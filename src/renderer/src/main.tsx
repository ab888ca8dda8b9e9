import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { connect } from './client/connect';
import { createEventBatcher } from './client/event-batcher';
import { notifyApproval } from './features/approvals/approval-notifications';
import { PerfHarness } from './perf/perf-harness';
import { createAppStore } from './store/app-store';
import { AppStoreContext } from './store/use-app-store';
import './styles.css';

const root = createRoot(document.getElementById('root') as HTMLElement);
const perfNodes = Number(new URLSearchParams(location.search).get('perf-dag') ?? 0);

if (perfNodes > 0) {
  root.render(<PerfHarness nodes={perfNodes} />);
} else {
  const client = connect();
  const store = createAppStore(client);
  client.onEvent(createEventBatcher((batch) => store.getState().applyEvents(batch)));
  // Not batched: a hidden page gets no animation frames, and that is when a notification matters.
  client.onEvent(notifyApproval);
  client.onConnectionChange((state) => store.getState().setConnection(state));
  root.render(
    <StrictMode>
      <AppStoreContext.Provider value={store}>
        <App />
      </AppStoreContext.Provider>
    </StrictMode>,
  );
}
