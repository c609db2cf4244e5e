// Command corkboard-fakeollama is the fake Ollama of the Go tests
// (corkboard/ai/aitest) as a process, for the browser end-to-end tests: it
// answers GET /api/tags and POST /api/chat on a free port of 127.0.0.1
// following a JSON script of rules (docs/ai.md, "The fake Ollama as a
// process"), prints
//
//	fake ollama listening on http://127.0.0.1:PORT
//
// once it is ready, logs the rule that answered each request, and serves
// until it is killed (SIGINT or SIGTERM).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"corkboard/ai/aitest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-fakeollama:", err)
		os.Exit(2)
	}
}

// run serves until ctx ends; ready, when not nil, receives the URL once the
// server listens (for tests).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(url string)) error {
	fs := flag.NewFlagSet("corkboard-fakeollama", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scriptPath := fs.String("script", "", "the JSON script of rules (required)")
	models := fs.String("models", "qwen3:4b", "comma-separated models the fake has; a chat request for another gets 404 like Ollama's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scriptPath == "" {
		return errors.New("-script is required")
	}
	srv, err := newServer(*scriptPath, *models, stderr)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "fake ollama listening on %s\n", srv.URL)
	if ready != nil {
		ready(srv.URL)
	}
	<-ctx.Done()
	return nil
}

// newServer starts the fake with the script's rules, logging to log which
// rule answered each request (or that none did).
func newServer(scriptPath, models string, log io.Writer) (*aitest.Server, error) {
	script, rules, err := aitest.LoadRules(scriptPath)
	if err != nil {
		return nil, err
	}
	var names []string
	for m := range strings.SplitSeq(models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("-models names no model")
	}
	logged := func(c aitest.Call) aitest.Reply {
		if name := aitest.RuleFor(rules, c); name != "" {
			fmt.Fprintf(log, "fake ollama: request %d answered by rule %q\n", c.N, name)
		} else {
			fmt.Fprintf(log, "fake ollama: no rule matches %s\n", aitest.Describe(c))
		}
		return script(c)
	}
	return aitest.NewServer(logged, aitest.WithModels(names...)), nil
}
