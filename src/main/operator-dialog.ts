import type { BaseWindow, Dialog } from 'electron';
import type { OperatorConfirmation } from '../core/authority/operator-authority';

const ALLOW = 1;

/** The app's confirmation of widening changes: a native dialog of the main process, which the page cannot answer for. */
export function dialogConfirmation(dialog: Pick<Dialog, 'showMessageBox'>, parent: () => BaseWindow | undefined): OperatorConfirmation {
  return {
    async confirm({ title, changes }, signal) {
      const options = {
        type: 'warning' as const,
        title: 'Archon',
        message: title,
        detail: `${changes.map((change) => `• ${change}`).join('\n')}\n\nThis was asked for from the app's window. Allow it only if you did that yourself.`,
        buttons: ['Cancel', 'Allow'],
        defaultId: 0,
        cancelId: 0,
        noLink: true,
        signal,
      };
      const window = parent();
      const { response } = await (window ? dialog.showMessageBox(window, options) : dialog.showMessageBox(options));
      return response === ALLOW;
    },
  };
}
