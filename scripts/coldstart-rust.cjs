'use strict'
// Cold start through upstream's Rust parent (monty-pool in the napi binding of
// npm @pydantic/monty-linux-x64-gnu@0.0.23), timed like gomonty's
// BenchmarkColdStart: a new pool (spawns one worker), checkout + enter
// (Configure), the first feed of `1 + 2` up to its result; closing is not
// timed. Prints the median op and the median close in ns.
//   RP_LIB=.../monty-rust-parent.cjs run.sh DIR coldstart-rust.cjs [N]
// Run by scripts/coldstart-vs-rust.sh; nothing in the test suite uses it.
const { createPool, checkout, run } = require(process.env.RP_LIB)
const N = +(process.argv[2] || 200)
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)]
;(async () => {
  const ops = []
  const closes = []
  for (let i = 0; i < N + 5; i++) {
    const t0 = process.hrtime.bigint()
    const pool = await createPool({ minProcesses: 1, maxProcesses: 1, requestTimeoutMs: 10000 })
    const s = await checkout(pool)
    const t = await run(s, '1 + 2')
    const t1 = process.hrtime.bigint()
    if (t.kind !== 'complete' || t.value !== 3) throw new Error(JSON.stringify(t))
    await s.finish()
    await pool.close()
    const t2 = process.hrtime.bigint()
    if (i >= 5) { // the first few warm the binding up
      ops.push(Number(t1 - t0))
      closes.push(Number(t2 - t1))
    }
  }
  console.log(`rust-parent n=${ops.length} p50-ns/op=${median(ops)} close-p50-ns=${median(closes)}`)
})().catch((e) => { console.error(e); process.exit(1) })
