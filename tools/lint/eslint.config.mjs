// ESLint over the repository's hand-written JavaScript (cargo xtask test lint).
// Generated files are left out: napi-rs's loader (bindings-node/binding.js)
// and the built packages (bindings-wasm/pkg-*, the decoder page's copy in
// www/pkg). TypeScript files are type-checked by the consumer tests instead.
import js from '@eslint/js'
import globals from 'globals'
import path from 'node:path'

// The repository: the patterns below are relative to it.
const basePath = path.resolve(import.meta.dirname, '../..')

export default [
  {
    basePath,
    ignores: [
      '**/node_modules/**',
      'target/**',
      '.cache/**',
      '.venv/**',
      'artifacts/**',
      'bindings-node/binding.js',
      'bindings-node/npm/**',
      'bindings-wasm/pkg-*/**',
      'bindings-wasm/www/pkg/**',
    ],
  },
  {
    basePath,
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      ...js.configs.recommended.rules,
      // `catch (e)` kept for readability where the error is ignored on purpose.
      'no-unused-vars': ['error', { caughtErrors: 'none' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'prefer-const': 'error',
      'no-var': 'error',
    },
  },
  {
    // CommonJS: the native package's files and parts.js, which
    // bindings-wasm/assemble.cjs turns into ES modules for the web package.
    basePath,
    files: ['bindings-node/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    // The decoder page runs in browsers, and so do the functions that the
    // browser test hands to playwright's page.evaluate.
    basePath,
    files: ['bindings-wasm/www/**/*.js', 'bindings-wasm/test/browser.test.mjs'],
    languageOptions: { globals: { ...globals.browser } },
  },
]
