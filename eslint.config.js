// The linter: typescript-eslint's recommended rules, plus the type-aware ones that catch what
// an installer cannot afford (a promise nobody awaits loses its failure: the step that failed
// is never reported). Formatting is Prettier's (.prettierrc.json), unused exports knip's
// (knip.json); all three run in `npm run lint`, which `npm test` runs first.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test/fixtures/', '.state/', '.demo/'] },
  tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.config.ts', '*.config.js', 'test/tools/*.mjs', 'test/cli/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // `_` marks a binding kept for its position; a destructured sibling drops a field on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The style rule: small files, no function longer than a screen (about 60 lines of code; a
    // file of 400). A longer function hides its steps: split it along read / decide / act.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Tests read parsed YAML and API objects loosely on purpose: the assertion is the check.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
