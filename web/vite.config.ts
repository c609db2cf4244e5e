import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Plugin } from 'vite';

// serviceWorker emits dist/sw.js from sw/sw.js with the list of built
// files; its version is a hash of their (content-hashed) names, so the same
// sources always give the same sw.js and a new build gives a new one.
function serviceWorker(): Plugin {
  return {
    name: 'corkboard-service-worker',
    apply: 'build',
    enforce: 'post',
    generateBundle(_opts, bundle) {
      const files = Object.keys(bundle)
        .filter((f) => f !== 'sw.js' && f !== 'index.html')
        .sort();
      const version = createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 16);
      const src = readFileSync(new URL('./sw/sw.js', import.meta.url), 'utf8')
        .replaceAll('__VERSION__', version)
        .replaceAll('__FILES__', JSON.stringify(files));
      this.emitFile({ type: 'asset', fileName: 'sw.js', source: src });
    },
  };
}

// The build is committed (web/dist) and embedded in the Go binary, so it must
// be deterministic: content-hashed names under assets/, no timestamps, no
// source maps pointing at absolute paths.
export default defineConfig({
  plugins: [react(), serviceWorker()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
    // The app is one chunk of ~191 KB gzipped (budget: 250 KB); the history
    // and snapshot panels (with `diff`) are lazy chunks of their own.
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: { '/api': { target: 'http://localhost:8080', ws: true } },
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
    passWithNoTests: true,
  },
});
