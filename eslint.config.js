import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Import bans per layer; .dependency-cruiser.cjs holds the full map (see docs/ARCHITECTURE.md). */
const banImports = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const electron = { group: ['electron'], message: 'Only src/main and src/preload may import electron.' };
const core = { group: ['**/core/*', '**/core'], message: 'The UI reaches the runtime only through the contract in src/shared/ipc.' };
const ours = { group: ['**/core/*', '**/main/*', '**/renderer/*', '**/preload/*', '**/hosts/*', '**/executor/*'], message: 'src/shared imports nothing of ours.' };

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  { files: ['src/shared/**'], rules: banImports([electron, ours]) },
  { files: ['src/core/**', 'src/executor/**', 'src/hosts/**'], rules: banImports([electron]) },
  {
    files: ['src/renderer/**', 'src/preload/**'],
    languageOptions: { globals: { ...globals.browser } },
    rules: banImports([core]),
  },
  { files: ['src/renderer/**/*.tsx'], plugins: { 'react-hooks': reactHooks }, rules: reactHooks.configs.recommended.rules },
  { files: ['test/**', 'bench/**', 'scripts/**', 'bin/**'], rules: { 'no-console': 'off' } },
);
