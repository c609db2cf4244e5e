import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// The build is committed (web/dist) and embedded in the Go binary, so it must
// be deterministic: content-hashed names under assets/, no timestamps, no
// source maps pointing at absolute paths.
export default defineConfig({
  plugins: [react()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
    // The whole app is one chunk of ~185 KB gzipped (budget: 250 KB).
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
