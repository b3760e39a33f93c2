// Lint: the import direction of DESIGN "Layout" and a few checks that catch
// mistakes; formatting is prettier's alone (`npm run lint` runs both).
import js from '@eslint/js'
import importPlugin from 'eslint-plugin-import'
import tseslint from 'typescript-eslint'

/**
 * The layers of src/, top first. A module may import from its own layer and
 * the layers below it, never from one above: commands -> app -> domain ->
 * native -> ui. The domain's packages are peers; import/no-cycle keeps them
 * free of cycles.
 */
const LAYERS = [['commands'], ['app'], ['workspaces', 'sandbox', 'git', 'platform', 'net'], ['native'], ['ui']]

const NODE_GLOBALS = Object.fromEntries(
  ['process', 'Buffer', 'console', 'URL', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'].map(name => [name, 'readonly']),
)

const zones = LAYERS.flatMap((layer, index) =>
  layer.map(dir => ({
    target: `./src/${dir}`,
    from: LAYERS.slice(0, index)
      .flat()
      .map(above => `./src/${above}`),
    message: `src/${dir} is below these in DESIGN "Layout": imports only go down (commands -> app -> workspaces/sandbox/git/platform/net -> native -> ui)`,
  })),
)

export default tseslint.config(
  {ignores: ['dist/', 'node_modules/', 'native-helpers/build/', '.test-worlds/', '.bench/']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.js'],
    plugins: {import: importPlugin},
    languageOptions: {globals: NODE_GLOBALS},
    settings: {'import/resolver': {typescript: true, node: true}},
    rules: {
      'import/no-restricted-paths': ['error', {zones}],
      'import/no-cycle': 'error',
      // An empty catch is "best effort, nothing to do if it fails"; the code around it says why.
      'no-empty': ['error', {allowEmptyCatch: true}],
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_'}],
    },
  },
  {
    // The entry is CommonJS (bin/package.json): Node starts it faster than an ES module.
    files: ['bin/**/*.js'],
    languageOptions: {sourceType: 'commonjs', globals: {...NODE_GLOBALS, module: 'readonly', require: 'readonly', __dirname: 'readonly'}},
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
  {
    // Expected table text is clearer with its spaces as they are printed.
    files: ['test/**/*.ts'],
    rules: {'no-regex-spaces': 'off'},
  },
)
