// The table of bench/runtimes/run from its JSON lines (one per runtime run).
import { readFileSync } from 'node:fs'

const runs = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l))
const ratio = (a, b) => (a / b).toFixed(2)
console.log(`# ${runs[0].repeats} rounds of ${runs[0].n} operations; median ns per operation; ratio to @sapphire/snowflake in the same process`)
console.log('| runtime | backend | nextId ns | sapphire generate ns | ratio (goal <= 0.5) | decode ns | sapphire deconstruct ns | ratio (goal <= 0.7) |')
console.log('|---|---|---:|---:|---:|---:|---:|---:|')
for (const r of runs) {
  const x = r.results
  const g = x['snowmint nextId()']
  const sg = x['@sapphire/snowflake generate()']
  const d = x['snowmint layout.decode(bigint)']
  const sd = x['@sapphire/snowflake deconstruct(bigint)']
  console.log(
    `| ${r.runtime} | ${r.backend} | ${g.toFixed(1)} | ${sg.toFixed(1)} | ${ratio(g, sg)} | ${d.toFixed(1)} | ${sd.toFixed(1)} | ${ratio(d, sd)} |`,
  )
}
for (const r of runs) {
  const viaNapi = r.results['snowmint nextId() through N-API']
  if (viaNapi !== undefined) {
    console.log(`${r.runtime} ${r.backend}: nextId through N-API ${viaNapi.toFixed(1)} ns (ratio ${ratio(viaNapi, r.results['@sapphire/snowflake generate()'])})`)
  }
}
