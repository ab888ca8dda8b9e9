import type { SafeStorage } from 'electron';
import type { SecretVault } from '../core/secrets/api-keys';

type Keychain = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString'> & Partial<Pick<SafeStorage, 'getSelectedStorageBackend'>>;

/** The vault keys and MCP secrets are sealed by, or null with what Settings tell the operator instead. */
export interface KeyStorage {
  vault: SecretVault | null;
  note: string | null;
}

const IN_MEMORY = 'API keys are kept in memory for this session only, and MCP servers’ secrets cannot be saved in Settings.';

/**
 * Electron's safeStorage (the OS keychain: Keychain, DPAPI, libsecret/kwallet) as the core's vault.
 * On Linux with no keyring running, safeStorage still says it can encrypt, but with a password
 * written into Chromium (`basic_text`), which anyone with the file can undo: that is no vault.
 */
export function safeStorageVault(safeStorage: Keychain, platform: NodeJS.Platform = process.platform): KeyStorage {
  if (!safeStorage.isEncryptionAvailable()) return { vault: null, note: `The OS keychain cannot encrypt here: ${IN_MEMORY}` };
  if (platform === 'linux' && safeStorage.getSelectedStorageBackend?.() === 'basic_text') {
    return { vault: null, note: `No keyring (GNOME Keyring, KWallet) is running, so Electron could only seal keys with a fixed password: ${IN_MEMORY} Start a keyring and restart Archon to keep them.` };
  }
  return { vault: { encrypt: (plain) => safeStorage.encryptString(plain), decrypt: (sealed) => safeStorage.decryptString(sealed) }, note: null };
}
