import { inAppTerms } from '../../../../shared/app-advice';
import type { SettingsSave } from './settings-slice';
import { useAppStore } from '../../store/use-app-store';

function saveText(save: SettingsSave | null): string {
  switch (save?.state) {
    case undefined:
      return '';
    case 'saving':
      return 'Saving…';
    case 'saved':
      return 'Saved.';
    case 'failed':
      return `Not saved. ${inAppTerms(save.message)}`;
  }
}

/** Whether the last change was saved, kept in view at the foot of the window however far Settings is scrolled; the region stays in the page so every change is announced. */
export function SettingsSaveStatus() {
  const save = useAppStore((state) => state.settingsSave);
  return (
    <p role="status" className={`settings-save${save?.state === 'failed' ? ' invalid' : ''}`}>
      {saveText(save)}
    </p>
  );
}
