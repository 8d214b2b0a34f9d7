// ESLint (flat config): the recommended JavaScript and typescript-eslint rules, plus berth's
// layer rules and no import cycles. `npm run lint`.
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Relative imports from `target` into any of `from` are refused with `message`. */
const layer = (target, from, message) => from.map((f) => ({ target, from: f, message }));

export default tseslint.config(
  { ignores: ['dist/', 'docs/api/', 'node_modules/', 'coverage/', 'sim/tmp/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver()] },
    rules: {
      // Unused variables are an error unless named _like_this (a deliberate placeholder).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `catch {}` with a comment saying why is house style for best-effort cleanup.
      'no-empty': ['error', { allowEmptyCatch: true }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The layers (see docs/architecture.md): machines/ are pure charts over model/ and xstate;
      // bus/ knows only model/; model/ knows nothing else of berth.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            ...layer('./machines', ['./actors', './bus', './bin', './index.ts'], 'machines/ may import only model/ and xstate'),
            ...layer('./bus', ['./actors', './machines', './bin', './index.ts'], 'bus/ may import only model/'),
            ...layer('./model', ['./actors', './machines', './bus', './bin', './index.ts'], 'model/ imports nothing else of berth'),
            ...layer('./actors', ['./bin', './agent'], 'the library does not import the command line or the agent'),
            ...layer('./machines', ['./agent'], 'machines/ may import only model/ and xstate'),
            ...layer('./agent', ['./actors', './machines', './bus', './model', './bin', './sim'], 'agent/ imports berth only through the top-level index.ts'),
          ],
        },
      ],
    },
  },
  {
    files: ['machines/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!xstate$|\\.)', message: 'machines/ may import only model/ and xstate (no I/O, no other package)' }] },
      ],
    },
  },
  {
    // The viewer's page runs in a browser.
    files: ['actors/viewer/static/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['spec/**', 'bench/**'],
    languageOptions: { globals: { ...globals.mocha } },
    rules: {
      // chai's `expect(x).to.be.true` style and test doubles.
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
