package main

import (
	"fmt"
	"os"

	"corkboard/web"
)

// webHandler serves the embedded client build, or the build in dir when
// -web-dir names one: a client developer (or an end-to-end test of a new
// build replacing an old one) serves a fresh `vite build` without
// rebuilding the binary.
func webHandler(dir string) (*web.Handler, error) {
	if dir == "" {
		return web.NewHandler()
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("-web-dir: %w", err)
	}
	h, err := web.NewHandlerFS(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("-web-dir %s: %w", dir, err)
	}
	return h, nil
}
