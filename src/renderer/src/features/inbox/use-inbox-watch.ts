import { useEffect } from 'react';
import { useAppStore } from '../../store/use-app-store';

/** Keeps the inbox current for as long as the component that calls it is mounted. */
export function useInboxWatch(): void {
  const watchInbox = useAppStore((state) => state.watchInbox);
  useEffect(() => watchInbox(), [watchInbox]);
}
