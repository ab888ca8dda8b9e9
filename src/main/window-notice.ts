import type { BrowserWindow, Notification } from 'electron';

export interface Notice {
  title: string;
  body: string;
}
export type Notify = (notice: Notice) => void;

/** Brings the window back in front, restored if it was minimized. */
export function bringBack(window: BrowserWindow): void {
  if (window.isMinimized()) window.restore();
  window.focus();
}

/** Shows a desktop notification while the window is not focused (and the system can); clicking it brings the window back. */
export function windowNotifier(NotificationClass: typeof Notification, window: BrowserWindow): Notify {
  return (content) => {
    if (window.isFocused() || !NotificationClass.isSupported()) return;
    const notice = new NotificationClass(content);
    notice.on('click', () => bringBack(window));
    notice.show();
  };
}
