'use strict'
// Feeds upstream's Rust parent one event frame per file named on stdin (the
// scripted worker, fakew, answers the Feed with it) and prints one JSON
// line per frame: {"file", "turn"} with the turn the parent reported.
// Env: RUST_PARENT_PEER (the directory of monty-rust-parent.cjs), RPX_WORK
// (fakew's directory, where cur.bin and after.bin go).
const fs = require('node:fs')
const path = require('node:path')
const rp = require(path.join(process.env.RUST_PARENT_PEER, 'monty-rust-parent.cjs'))
const work = process.env.RPX_WORK
// A Complete of None: follows a Print, which does not end a turn.
const completeNone = Buffer.from([0x32, 0x04, 0x0a, 0x02, 0x12, 0x00])

async function main() {
  const files = fs.readFileSync(0, 'utf8').split('\n').filter(Boolean)
  const pool = await rp.createPool({ minProcesses: 1, maxProcesses: 2, requestTimeoutMs: 1000 })
  for (const f of files) {
    fs.copyFileSync(f, path.join(work, 'cur.bin'))
    const after = path.join(work, 'after.bin')
    if (f.endsWith('-p.bin')) fs.writeFileSync(after, completeNone)
    else fs.rmSync(after, { force: true })
    let out
    let s
    try {
      s = await rp.checkout(pool)
      const prints = []
      const t = await s.feed('x', null, [], true, (...a) => prints.push(a))
      t.prints = prints
      out = { file: f, turn: t }
    } catch (e) {
      out = { file: f, error: String((e && e.message) || e) }
    }
    try { if (s) await Promise.race([s.finish(), new Promise(r => setTimeout(r, 3000))]) } catch (e) {}
    process.stdout.write(JSON.stringify(out, (k, v) => typeof v === 'bigint' ? String(v) : v) + '\n')
  }
  process.exit(0)
}
main().catch(e => { console.error('fatal', e); process.exit(1) })
