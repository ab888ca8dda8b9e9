import type { StoreApi } from 'zustand';
import type { ArchonClient } from '../../../shared/ipc/client';
import type { AppState } from './app-store';

/** What a feature slice is given: the store's setter and getter, the client, and error reporting. */
export interface SliceContext {
  set: StoreApi<AppState>['setState'];
  get: StoreApi<AppState>['getState'];
  client: ArchonClient;
  attempt(action: () => Promise<void>): Promise<void>;
}
