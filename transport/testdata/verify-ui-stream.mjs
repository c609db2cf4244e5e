// verify-ui-stream.mjs checks one AI SDK UI message stream with the `ai`
// package's own code, the way useChat would read it. Run by
// transport/aistream_test.go; by hand:
//
//   AI_SDK_DIR=/abs/dir/with/node_modules node verify-ui-stream.mjs URL BODY.json [--expect-error]
//
// VERIFY_HEADERS, when set, is a JSON object of extra request headers (for
// example {"cookie": "session=…"} to call the real route with a session;
// transport/aistream_test.go does). An environment variable rather than an
// argument keeps the session out of the process list.
//
// It POSTs BODY.json to URL, then
//   1. checks the status, the headers and the final `data: [DONE]`,
//   2. parses every SSE event with parseJsonEventStream + uiMessageChunkSchema
//      (the schema the client validates with) and reports each rejected one,
//   3. checks that chunks carry only the keys ai 5.0.0 accepts (it rejects
//      extra keys) and that input is always present on tool-input chunks,
//   4. feeds the chunks to readUIMessageStream (useChat's state machine),
//      which throws on order violations such as a delta without its start.
// It prints {chunkTypes, message} as JSON on stdout and exits 1 listing
// the problems on stderr.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const sdkDir = process.env.AI_SDK_DIR;
if (!sdkDir) {
  console.error('AI_SDK_DIR is not set');
  process.exit(2);
}
// Resolve `ai` from the install folder, not from this script's location.
const requireFromSdk = createRequire(join(sdkDir, 'noop.js'));
const { parseJsonEventStream, uiMessageChunkSchema, readUIMessageStream } = requireFromSdk('ai');

const args = process.argv.slice(2);
const [url, bodyFile] = args.filter((a) => !a.startsWith('--'));
const expectError = args.includes('--expect-error');
const problems = [];

// Keys of each chunk type in the oldest strict client (ai 5.0.0).
const allowedKeys = {
  start: ['messageId', 'messageMetadata'],
  'start-step': [],
  'finish-step': [],
  'text-start': ['id'],
  'text-delta': ['id', 'delta'],
  'text-end': ['id'],
  'reasoning-start': ['id'],
  'reasoning-delta': ['id', 'delta'],
  'reasoning-end': ['id'],
  'tool-input-available': ['toolCallId', 'toolName', 'input'],
  'tool-input-error': ['toolCallId', 'toolName', 'input', 'errorText'],
  error: ['errorText'],
  finish: ['messageMetadata'],
};

const extraHeaders = process.env.VERIFY_HEADERS ? JSON.parse(process.env.VERIFY_HEADERS) : {};
const res = await fetch(url, {
  method: 'POST',
  headers: { ...extraHeaders, 'content-type': 'application/json' },
  body: readFileSync(bodyFile, 'utf8'),
});
if (res.status !== 200) problems.push(`status ${res.status}`);
const wantHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};
for (const [h, v] of Object.entries(wantHeaders)) {
  if (!(res.headers.get(h) ?? '').startsWith(v)) problems.push(`header ${h}: got "${res.headers.get(h)}", want "${v}"`);
}
const raw = await res.text();
if (!raw.endsWith('data: [DONE]\n\n')) problems.push('stream does not end with "data: [DONE]\\n\\n"');

const chunks = [];
let n = 0;
for await (const r of parseJsonEventStream({ stream: new Response(raw).body, schema: uiMessageChunkSchema })) {
  if (!r.success) {
    problems.push(`event #${n} rejected by uiMessageChunkSchema: ${JSON.stringify(r.rawValue ?? null)}: ${String(r.error?.message).split('\n')[0]}`);
  } else {
    chunks.push(r.value);
  }
  n++;
}

for (const [i, c] of chunks.entries()) {
  const allowed = allowedKeys[c.type];
  if (!allowed) {
    problems.push(`chunk #${i}: unexpected type ${c.type}`);
    continue;
  }
  for (const k of Object.keys(c)) {
    if (k !== 'type' && !allowed.includes(k)) problems.push(`chunk #${i} (${c.type}): extra key ${k}`);
  }
  if (c.type.startsWith('tool-input-') && !('input' in c)) problems.push(`chunk #${i} (${c.type}): input missing`);
}

const types = chunks.map((c) => c.type);
if (types[0] !== 'start') problems.push(`first chunk is ${types[0]}, want start`);
const last = types.at(-1);
if (expectError ? last !== 'error' : last !== 'finish') problems.push(`last chunk is ${last}, want ${expectError ? 'error' : 'finish'}`);
if (types.filter((t) => t === 'start-step').length !== types.filter((t) => t === 'finish-step').length) {
  problems.push('start-step and finish-step are not balanced');
}

let message;
const clientErrors = [];
try {
  const stream = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  for await (const m of readUIMessageStream({ stream, onError: (e) => clientErrors.push(String(e?.message ?? e)) })) {
    message = m;
  }
} catch (e) {
  clientErrors.push(String(e?.message ?? e));
}
const errorTexts = chunks.filter((c) => c.type === 'error').map((c) => c.errorText);
for (const e of clientErrors) {
  // An error chunk surfaces as a client error; anything else is a bug.
  if (!(expectError && errorTexts.includes(e))) problems.push(`client state machine: ${e.split('\n')[0]}`);
}
for (const p of message?.parts ?? []) {
  if ((p.type === 'text' || p.type === 'reasoning') && p.state !== 'done') problems.push(`${p.type} part left ${p.state}`);
}

console.log(JSON.stringify({ chunkTypes: types, message }, null, 2));
if (problems.length > 0) {
  console.error('INVALID:\n  ' + problems.join('\n  '));
  process.exit(1);
}
console.error(`OK: ${chunks.length} chunks`);
