#!/usr/bin/env node
// gen-updates.js writes a sequence of real, incremental Yjs updates for the
// load tool's y-websocket side (tools/corkboard-load -mode compare):
//
//   node gen-updates.js [count] [out-file]      (defaults: 20000 updates.bin)
//
// One Y.Doc with a fixed client ID makes one Y.Map change per update: key
// "n<seq>" set to the string "cbload:<seq>;", so every update carries its
// sequence number in readable bytes. Update <seq> depends on all earlier
// ones: the writer must send them in order, to a fresh room.
//
// File format: the 8 bytes "CBYUPD1\n", then per update (seq 0, 1, 2, …) its
// length as a 4-byte big-endian unsigned integer followed by the update.
//
// The script also replays the updates into a second document, as the
// y-websocket server does, and checks that the update that document emits
// (the bytes y-websocket rebroadcasts) equals the one sent, so receivers can
// match what they get by its bytes.
'use strict'

const fs = require('fs')
const Y = require('yjs')

const count = parseInt(process.argv[2] || '20000', 10)
const out = process.argv[3] || 'updates.bin'
if (!Number.isInteger(count) || count < 1 || count > 10000000) {
  console.error('count must be an integer from 1 to 10000000')
  process.exit(2)
}

const doc = new Y.Doc()
doc.clientID = 4242 // fixed: the same file every time
const map = doc.getMap('notes')
const updates = []
doc.on('update', (u) => updates.push(u))
for (let seq = 0; seq < count; seq++) {
  map.set('n' + seq, 'cbload:' + seq + ';')
  if (updates.length !== seq + 1) {
    console.error('change ' + seq + ' produced ' + (updates.length - seq) + ' updates, want 1')
    process.exit(1)
  }
}

// Replay as the server would, and compare the re-emitted bytes.
const server = new Y.Doc()
let reemitted = null
server.on('update', (u) => { reemitted = u })
let differ = 0
for (let seq = 0; seq < count; seq++) {
  reemitted = null
  Y.applyUpdate(server, updates[seq])
  if (reemitted === null || Buffer.compare(Buffer.from(reemitted), Buffer.from(updates[seq])) !== 0) differ++
}

const parts = [Buffer.from('CBYUPD1\n', 'latin1')]
for (const u of updates) {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(u.length)
  parts.push(len, Buffer.from(u))
}
fs.writeFileSync(out, Buffer.concat(parts))
console.log('wrote ' + count + ' updates to ' + out + '; ' + differ + ' re-encode differently on the server (matched by their marker instead)')
