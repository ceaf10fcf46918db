'use strict'
// Cold starts through upstream's Rust parent (monty-pool in the napi binding
// of npm @pydantic/monty-linux-x64-gnu@0.0.23), one per line read from
// stdin, timed like gomonty's BenchmarkColdStart: a new pool (which spawns
// one worker), checkout + enter (Configure), the first feed of `1 + 2` up to
// its result. Closing the pool is not timed. Each op answers one line: the
// op's nanoseconds, then the worker's on-CPU and run-queue nanoseconds so
// far (from /proc/PID/schedstat, read right after the result).
//   RP_LIB=.../monty-rust-parent.cjs run.sh DIR coldstart-rust.cjs
// Driven by internal/coldcompare (scripts/coldstart-vs-rust.sh); nothing in
// the test suite uses it.
const fs = require('node:fs')
const readline = require('node:readline')
const { createPool, checkout, run } = require(process.env.RP_LIB)

;(async () => {
  for await (const _ of readline.createInterface({ input: process.stdin })) {
    const t0 = process.hrtime.bigint()
    const pool = await createPool({ minProcesses: 1, maxProcesses: 1, requestTimeoutMs: 10000 })
    const s = await checkout(pool)
    const t = await run(s, '1 + 2')
    const t1 = process.hrtime.bigint()
    const sched = fs.readFileSync(`/proc/${s.workerPid}/schedstat`, 'utf8').split(' ')
    if (t.kind !== 'complete' || t.value !== 3) throw new Error(JSON.stringify(t))
    await s.finish()
    await pool.close()
    process.stdout.write(`${t1 - t0} ${sched[0]} ${sched[1]}\n`)
  }
})().catch((e) => { console.error(e); process.exit(1) })
