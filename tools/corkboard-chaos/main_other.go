//go:build !unix

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "corkboard-chaos: runs on Unix only (it stops nodes with SIGSTOP)")
	os.Exit(2)
}
