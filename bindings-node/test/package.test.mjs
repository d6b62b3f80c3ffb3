// The packed package as its users get it: CommonJS, ESM and TypeScript
// consumers, the version, the examples of the README and docs/NODE.md, and
// the package README's lease example.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { consumerDir } from './pkg-native.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const here = path.dirname(fileURLToPath(import.meta.url))
const needConsumer = { skip: consumerDir ? false : 'SNOWMINT_CONSUMER_DIR is not set (cargo xtask test node sets it)' }

function run(file) {
  return execFileSync(process.execPath, [file], { cwd: consumerDir, encoding: 'utf8' })
}

test('package.json version is the workspace version', () => {
  const cargo = readFileSync(path.join(root, 'Cargo.toml'), 'utf8')
  const section = cargo.slice(cargo.indexOf('[workspace.package]'))
  const version = /^version\s*=\s*"([^"]+)"/m.exec(section)[1]
  const pkgJson = JSON.parse(readFileSync(path.join(root, 'bindings-node/package.json'), 'utf8'))
  assert.equal(pkgJson.version, version)
  if (consumerDir) {
    const installed = JSON.parse(
      readFileSync(path.join(consumerDir, 'node_modules/snowmint/package.json'), 'utf8'),
    )
    assert.equal(installed.version, version)
  }
})

test('CommonJS and ESM consumers see the same module', needConsumer, () => {
  const cjs = JSON.parse(run('cjs.cjs'))
  const esm = JSON.parse(run('esm.mjs'))
  assert.deepEqual(esm, cjs)
  assert.equal(cjs.parts.worker, 1)
  assert.equal(esm.sameObject, true)
})

test('TypeScript consumer type-checks against index.d.ts', needConsumer, () => {
  const tsc = path.join(consumerDir, 'node_modules/typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '--noEmit', '-p', consumerDir], { cwd: consumerDir, encoding: 'utf8' })
})

// The short example of the repository README and the guide's (docs/NODE.md).
for (const [page, marker] of [['README.md', 'quickstart:node'], ['docs/NODE.md', 'guide:node']]) {
  test(`the ${page} ${marker} example runs`, needConsumer, () => {
    const blocks = markedBlocks(page, marker)
    assert.ok(blocks.length > 0, `${page}'s ${marker} has no \`\`\`js block`)
    const file = path.join(consumerDir, `${marker.replace(':', '-')}.mjs`)
    writeFileSync(file, blocks.join('\n'))
    run(file)
  })
}

test('the docs/NODE.md cluster example runs: 4 processes lease 4 distinct values', needConsumer, () => {
  const blocks = markedBlocks('docs/NODE.md', 'cluster:node')
  assert.equal(blocks.length, 1)
  const file = path.join(consumerDir, 'readme-cluster.mjs')
  writeFileSync(file, blocks[0])
  execFileSync(process.execPath, [file], { cwd: consumerDir, encoding: 'utf8', timeout: 30_000 })
})

// The ```js blocks between <!-- MARKER:start --> and <!-- MARKER:end --> of the
// repository's file PAGE.
function markedBlocks(page, marker) {
  const text = readFileSync(path.join(root, page), 'utf8')
  const start = text.indexOf(`<!-- ${marker}:start -->`)
  const end = text.indexOf(`<!-- ${marker}:end -->`)
  assert.ok(start >= 0 && end > start, `${page} has no ${marker} markers`)
  return [...text.slice(start, end).matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
}

test('the package README lease example runs', needConsumer, () => {
  const readme = readFileSync(path.join(consumerDir, 'node_modules/snowmint/README.md'), 'utf8')
  assert.equal(readme, readFileSync(path.join(here, '../README.md'), 'utf8'))
  const start = readme.indexOf('<!-- lease-example:start -->')
  const end = readme.indexOf('<!-- lease-example:end -->')
  assert.ok(start >= 0 && end > start, 'bindings-node/README.md has no lease example markers')
  const blocks = [...readme.slice(start, end).matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.equal(blocks.length, 1)
  const file = path.join(consumerDir, 'readme-lease.cjs')
  writeFileSync(file, blocks[0])
  run(file)
})

test('consumer sources are the checked-in ones', needConsumer, () => {
  for (const f of ['cjs.cjs', 'esm.mjs', 'consumer.ts']) {
    assert.equal(
      readFileSync(path.join(consumerDir, f), 'utf8'),
      readFileSync(path.join(here, 'consumer', f), 'utf8'),
    )
  }
})
