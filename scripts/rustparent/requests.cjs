'use strict'
// Drives upstream's Rust parent through the requests it sends a worker: a
// Configure with limits, feeds with inputs, resumes returning values of
// every kind, raising, not found, OS calls answered and not handled, name
// lookups answered with a value, a function and an error, futures, a dump
// and restore. The worker (MONTY_BIN, a tee in front of the real worker)
// records what it receives. Env: RUST_PARENT_PEER as for driver.cjs.
const path = require('node:path')
const rp = require(path.join(process.env.RUST_PARENT_PEER, 'monty-rust-parent.cjs'))
const noPrint = () => {}

async function step(label, f) {
  try {
    const t = await f()
    console.log(label, t && t.kind)
  } catch (e) {
    console.log(label, 'failed:', String(e).slice(0, 160))
  }
}

async function main() {
  const pool = await rp.createPool({ minProcesses: 1, maxProcesses: 1 })
  let s = await rp.checkout(pool, {
    limits: { maxDurationSecs: 30, maxMemory: 100000000, gcInterval: 1000, maxRecursionDepth: 300, maxSuspensions: 50 },
    printFlushIntervalMs: 5,
  })
  const externals = {
    ret: (...a) => (a.length === 1 ? a[0] : a),
    big: () => 2n ** 100n,
    obj: () => ({ a: 1, b: [1, 2.5, 'x', null, true], c: { d: new Uint8Array([1, 2]) } }),
    boom: () => { throw new TypeError('nope') },
    m: () => new Map([[1, 'a'], ['k', [1, 2]]]),
    st: () => new Set([1, 2, 3]),
    f: (x) => x * 2,
    value42: 42,
    strv: 'hello',
  }
  const os = (name) => (name === 'os.getenv' ? 'VAL' : name === 'Path.exists' ? true : name === 'Path.read_text' ? 'content' : undefined)
  for (const code of [
    'ret(1)', 'ret("héllo")', 'ret([1, 2, 3])', 'ret({"a": (1, 2)})', 'big()', 'obj()', 'ret(-5)', 'ret(0)', 'ret("")',
    'ret(-0.0)', 'm()', 'st()', 'value42 + 1', 'strv', 'f(2)', 'undefined_name', 'boom()', 'missing_fn()', 'ret(1, 2, k=3)',
    'ret(None)', 'ret(True)', 'ret(b"\\x00\\xff")', 'ret(1.5e300)', 'ret(-2**63)', 'ret(2**64)',
    'import os\nos.getenv("HOME", "d")', 'from pathlib import Path\nPath("/x").exists()',
    'from pathlib import Path\nPath("/x").read_text()', 'from pathlib import Path\nPath("/x").is_dir()',
  ]) {
    await step(JSON.stringify(code), () => rp.run(s, code, { externals, os }))
  }
  await step('inputs', () => rp.run(s, 'str(x) + str(y)', { externals, inputs: { x: 21, y: [1, 'a', null, { k: 2n }] } }))
  await step('futures', async () => {
    let t = await s.feed('async def main():\n    return await g(1) + await g(2)\nawait main()', null, [], true, noPrint)
    for (let i = 0; i < 20 && t.kind !== 'complete' && t.kind !== 'error'; i++) {
      if (t.kind === 'functionCall') t = await s.resumeFuture(noPrint)
      else if (t.kind === 'resolveFutures') t = await s.resolveFutures(t.pendingCallIds.map(id => ({ callId: id, ok: true, value: Number(id) * 10 })), noPrint)
      else if (t.kind === 'nameLookup') t = await s.resumeNameLookup(t.name, null, noPrint)
      else break
    }
    return t
  })
  await step('lookup error', async () => {
    let t = await s.feed('zzz + 1', null, [], true, noPrint)
    if (t.kind === 'nameLookup') t = await s.resumeNameLookupError('KeyError', 'nope', noPrint)
    return t
  })
  await s.finish().catch(() => {})
  s = await rp.checkout(pool)
  await step('dump and restore', async () => {
    await rp.run(s, 'a = 5', {})
    const d = await s.dump()
    await s.restore(d, [], noPrint)
    return rp.run(s, 'a + 1', {})
  })
  await s.finish().catch(() => {})
  process.exit(0)
}
main().catch(e => { console.error('fatal', e); process.exit(1) })
