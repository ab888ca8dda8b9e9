import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppState, AppStore } from './app-store';

export const AppStoreContext = createContext<AppStore | null>(null);

/** Reads from the app store; wrap a selector that builds a new object each time in `useShallow`. */
export function useAppStore<T>(selector: (state: AppState) => T): T {
  const store = useContext(AppStoreContext);
  if (!store) throw new Error('useAppStore must be used inside <AppStoreContext.Provider>.');
  return useStore(store, selector);
}
