// A CommonJS consumer: require('snowmint').
const snowmint = require('snowmint')
const { Layout, Generator, decode } = require('snowmint')

const g = new Generator('discord', { worker: 1, process: 2 })
const parts = decode(g.nextId(), Layout.preset('discord'))
console.log(JSON.stringify({
  names: Object.keys(snowmint).filter((k) => !k.startsWith('__')).sort(),
  parts: { worker: parts.worker, process: parts.process },
  base32: snowmint.toBase32(175928847299117063n),
  sameObject: true,
}))
