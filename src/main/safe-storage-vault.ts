import type { SafeStorage } from 'electron';
import type { SecretVault } from '../core/secrets/api-keys';

/** Electron's safeStorage (the OS keychain: Keychain, DPAPI, libsecret/kwallet) as the core's vault; null where it cannot encrypt. */
export function safeStorageVault(safeStorage: Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString'>): SecretVault | null {
  if (!safeStorage.isEncryptionAvailable()) return null;
  return { encrypt: (plain) => safeStorage.encryptString(plain), decrypt: (sealed) => safeStorage.decryptString(sealed) };
}
