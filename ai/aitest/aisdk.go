package aitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// AISDKDir returns the folder holding node_modules/ai (the AI SDK, whose own
// parser checks our streams), from CORKBOARD_AI_SDK_DIR: absolute, or
// relative to the module root for a test running one folder below it. It
// skips the test when the variable is unset, the package is not installed
// (make test sets the variable even where npm is missing) or node is
// missing.
func AISDKDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("CORKBOARD_AI_SDK_DIR")
	if dir == "" {
		tb.Skip("CORKBOARD_AI_SDK_DIR is not set: to check streams with the AI SDK's own parser, run " +
			"`npm install --prefix .cache/aisdk ai@6.0.323` and set CORKBOARD_AI_SDK_DIR=.cache/aisdk (make test does both)")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai", "package.json")); err != nil {
		tb.Skipf("CORKBOARD_AI_SDK_DIR=%s has no node_modules/ai (was npm install skipped?): %v", dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		tb.Skipf("node is not installed: %v", err)
	}
	return dir
}
