// The package's TypeScript declarations (its package.json `types` file)
// match what it exports at run time: every exported name with its kind
// (class, function, const, enum), both ways, and each declared class's
// members. Read with TypeScript's compiler API (the `typescript` package
// next to the package under test: the Node consumer project, or
// bindings-wasm's tools). Generic: it compares whatever is declared with
// whatever is exported, so a new export needs only its declaration.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, test } from 'node:test'

import pkg, { pkgDir } from './pkg.mjs'

const manifest = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'))
const dtsFile = path.join(pkgDir, manifest.types ?? manifest.typings ?? 'index.d.ts')
const ts = createRequire(path.join(pkgDir, 'package.json'))('typescript')

const has = (node, kind) => (ts.getModifiers(node) ?? []).some((m) => m.kind === kind)
const nameOf = (m) => (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) ? m.name.text : undefined)

/**
 * The declarations: values (name -> kind) and, per class or interface name,
 * its members (`static` ones prefixed `static `).
 */
function declarations(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const values = new Map()
  const members = new Map()
  const addMembers = (name, list) => {
    const set = members.get(name) ?? new Set()
    for (const m of list) {
      const n = nameOf(m)
      if (n === undefined || ts.isConstructorDeclaration(m) || ts.isIndexSignatureDeclaration(m)) continue
      set.add(has(m, ts.SyntaxKind.StaticKeyword) ? `static ${n}` : n)
    }
    members.set(name, set)
  }
  const value = (name, kind) => {
    assert.ok(!values.has(name) || values.get(name) === kind, `${name} declared as ${values.get(name)} and ${kind}`)
    values.set(name, kind)
  }
  for (const st of source.statements) {
    if (ts.isExportDeclaration(st)) {
      // `export { a, b } from '...'`: values of unknown kind.
      assert.ok(st.exportClause && ts.isNamedExports(st.exportClause), `unsupported: ${st.getText()}`)
      if (!st.isTypeOnly) for (const e of st.exportClause.elements) if (!e.isTypeOnly) value(e.name.text, 'any')
      continue
    }
    if (ts.isExportAssignment(st) || !has(st, ts.SyntaxKind.ExportKeyword)) continue
    if (ts.isClassDeclaration(st)) {
      value(st.name.text, 'class')
      addMembers(st.name.text, st.members)
    } else if (ts.isInterfaceDeclaration(st)) {
      addMembers(st.name.text, st.members) // merged into a class of that name, if any
    } else if (ts.isFunctionDeclaration(st)) {
      value(st.name.text, 'function')
    } else if (ts.isVariableStatement(st)) {
      const kind = st.declarationList.flags & ts.NodeFlags.Const ? 'const' : 'let'
      for (const d of st.declarationList.declarations) value(d.name.text, kind)
    } else if (ts.isEnumDeclaration(st)) {
      value(st.name.text, 'enum')
    } else if (ts.isModuleDeclaration(st)) {
      value(st.name.text, 'namespace')
    } else {
      assert.ok(ts.isTypeAliasDeclaration(st), `unexpected declaration: ${st.getText().slice(0, 80)}`)
    }
  }
  return { values, members }
}

/** The kind of a run-time value, in the declarations' terms. */
function kindOf(v) {
  if (typeof v === 'function') {
    const proto = v.prototype
    const methods = proto ? Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor') : []
    return /^class\b/.test(Function.prototype.toString.call(v)) || methods.length > 0 ? 'class' : 'function'
  }
  if (v === undefined) return 'undefined'
  return typeof v === 'object' && v !== null ? 'object' : 'const'
}

const matches = (declared, actual) =>
  declared === 'any' ? actual !== 'undefined' :
  declared === 'const' || declared === 'let' ? actual === 'const' || actual === 'object' :
  declared === 'enum' || declared === 'namespace' ? actual === 'object' :
  declared === actual

/** Own string-named properties along a prototype chain, up to `stop` (excluded). */
function ownNames(obj, stop) {
  const names = new Set()
  for (let o = obj; o !== null && o !== stop; o = Object.getPrototypeOf(o)) {
    for (const n of Object.getOwnPropertyNames(o)) names.add(n)
  }
  return names
}

// Run-time names a declaration need not list: the package's internals
// (`__`-prefixed), what every class or function has (`arguments` and
// `caller`: a sloppy-mode function's, such as a native constructor).
// Under the native package's WebAssembly fallback (`__backend === 'wasm'`)
// the declarations are the addon's: every declared member must work, but the
// WebAssembly classes carry more than the addon has (wasm-bindgen's `free()`,
// `Layout.decodeMany`), so only that direction is checked there.
const fallback = pkg.__backend === 'wasm'
// IdMask needs the addon: the fallback's refuses to be made (invalid_option),
// so no instance exists whose members could be compared.
const refused = fallback ? ['IdMask'] : []
const internal = (n) =>
  n.startsWith('__') ||
  ['constructor', 'length', 'name', 'prototype', 'arguments', 'caller'].includes(n)

const { values, members } = declarations(dtsFile)

describe(`index.d.ts (${path.relative(process.cwd(), dtsFile)}) matches the run-time exports`, () => {
  test('the declarations were read', () => {
    for (const n of ['Layout', 'Generator', 'decode']) assert.ok(values.has(n), `${n} not declared`)
  })

  test('every declared value is exported, with its kind', () => {
    for (const [name, kind] of values) {
      assert.ok(Object.hasOwn(pkg, name), `${name} is declared (${kind}) but not exported`)
      assert.ok(matches(kind, kindOf(pkg[name])), `${name} is declared as ${kind} but is a ${kindOf(pkg[name])}`)
    }
  })

  test('every export is declared', () => {
    const undeclared = Object.keys(pkg).filter((n) => n !== 'default' && !values.has(n))
    assert.deepEqual(undeclared, [], `exported but not declared: ${undeclared.join(', ')}`)
  })

  test("each class's declared members exist, and its public ones are declared", () => {
    for (const [name, kind] of values) {
      if (kind !== 'class') continue
      if (refused.includes(name)) {
        assert.throws(() => new pkg[name]('twitter', '00'.repeat(16)), { code: 'invalid_option' })
        continue
      }
      const cls = pkg[name]
      const declared = members.get(name)
      const instance = ownNames(cls.prototype, Object.prototype)
      const statics = ownNames(cls, Function.prototype)
      for (const m of declared) {
        const present = m.startsWith('static ') ? statics.has(m.slice(7)) : instance.has(m)
        assert.ok(present, `${name}: ${m} is declared but not there at run time`)
      }
      if (fallback) continue
      const runtime = [...[...instance].filter((n) => !internal(n)), ...[...statics].filter((n) => !internal(n)).map((n) => `static ${n}`)]
      const missing = runtime.filter((m) => !declared.has(m))
      assert.deepEqual(missing, [], `${name}: not declared: ${missing.join(', ')}`)
    }
  })

  test("Parts' declared members are on a decoded ID", () => {
    const p = pkg.decode(175928847299117063n, 'discord')
    const names = ownNames(p, Object.prototype)
    for (const m of members.get('Parts')) assert.ok(names.has(m), `Parts: ${m} is declared but not there`)
  })
})
