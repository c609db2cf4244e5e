package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeMail(t *testing.T, dir, name, to, code string, mod time.Time) {
	t.Helper()
	msg := "From: Corkboard <noreply@localhost>\r\nTo: <" + to + ">\r\nSubject: Your Corkboard login code: " + code + "\r\n\r\nYour code is " + code + ".\r\n"
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(msg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func TestFindCode(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeMail(t, dir, "a.eml", "load@example.com", "111111", now.Add(-time.Hour)) // an old login
	writeMail(t, dir, "b.eml", "load@example.com", "222222", now.Add(time.Second))
	writeMail(t, dir, "c.eml", "other@example.com", "333333", now.Add(2*time.Second))
	writeMail(t, dir, "d.eml", "LOAD@example.com", "444444", now.Add(-time.Second))
	os.WriteFile(filepath.Join(dir, "junk.eml"), []byte("not a mail"), 0o600)
	os.WriteFile(filepath.Join(dir, "e.txt"), []byte("To: load@example.com\r\nSubject: 555555\r\n\r\n"), 0o600)

	tests := []struct {
		name      string
		email     string
		notBefore time.Time
		want      string
		ok        bool
	}{
		{"newest for the address wins", "load@example.com", now.Add(-2 * time.Hour), "222222", true},
		{"other address ignored", "other@example.com", now, "333333", true},
		{"too old", "load@example.com", now.Add(time.Minute), "", false},
		{"unknown address", "nobody@example.com", now.Add(-2 * time.Hour), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, ok, err := findCode(dir, tt.email, tt.notBefore)
			if err != nil || code != tt.want || ok != tt.ok {
				t.Fatalf("findCode=%q,%v,%v, want %q,%v", code, ok, err, tt.want, tt.ok)
			}
		})
	}
	// No outbox yet: no code, no error (the server makes it on first mail).
	if _, ok, err := findCode(filepath.Join(dir, "missing"), "load@example.com", now); ok || err != nil {
		t.Fatalf("missing folder: ok=%v err=%v", ok, err)
	}
}

func TestWaitCodeGivesUp(t *testing.T) {
	start := time.Now()
	_, err := waitCode(context.Background(), t.TempDir(), "load@example.com", start, 200*time.Millisecond)
	if err == nil {
		t.Fatal("waitCode found a code in an empty folder")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("waitCode took %v with a 200ms bound", d)
	}
}
