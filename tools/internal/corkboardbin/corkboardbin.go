// Package corkboardbin builds the product's server binary for the tools
// that start it (the load tool's tests, the chaos run).
//
// The tools are a module of their own that requires the product through a
// replace directive, so the product's own dependencies (chi, bbolt, the
// Ollama client, …) are not in the tools' go.sum: building
// corkboard/cmd/corkboard from inside the tools module fails. The binary is
// therefore built in the product's module directory, with the product's
// go.mod and go.sum, exactly as `make` builds it.
package corkboardbin

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ProductDir returns the directory of the product module (module
// corkboard), as the go command resolves it from the current directory:
// the replace directive's target when run inside the tools module.
func ProductDir(ctx context.Context) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "corkboard")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find the corkboard module (run inside the tools module, or pass the binary): %w: %s", err, stderr.Bytes())
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("find the corkboard module: go list gave no directory")
	}
	return dir, nil
}

// Build builds the corkboard binary into dir and returns its path.
func Build(ctx context.Context, dir string) (string, error) {
	root, err := ProductDir(ctx)
	if err != nil {
		return "", err
	}
	out, err := filepath.Abs(filepath.Join(dir, "corkboard"))
	if err != nil {
		return "", fmt.Errorf("build corkboard: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/corkboard")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build corkboard in %s: %w: %s", root, err, b)
	}
	return out, nil
}
