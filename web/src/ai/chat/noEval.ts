// zod (under the AI SDK) compiles object parsers with new Function() unless
// told not to, and first probes whether it may: the app shell's
// Content-Security-Policy (script-src 'self', no 'unsafe-eval') refuses it,
// and the probe alone reports a violation. jitless parses without it; the
// chat's schemas are small, so the compiled path would gain nothing here.
import { config } from 'zod';

config({ jitless: true });
