package mailaddr_test

import (
	"errors"
	"strings"
	"testing"

	"corkboard/auth/mailaddr"
	"corkboard/board"
)

func TestCanonical(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string // want "" for a refusal
	}{
		{"ASCII", "  Alice@Example.COM ", "alice@example.com"},
		{"Localhost", "bob@localhost", "bob@localhost"},
		{"TagAndDots", "a.b+tag@sub.example.org", "a.b+tag@sub.example.org"},
		{"NFC", "jos\u00e9@example.com", "jos\u00e9@example.com"},
		{"NFDToNFC", "jose\u0301@example.com", "jos\u00e9@example.com"},
		{"UpperNFD", "JOSE\u0301@example.com", "jos\u00e9@example.com"},
		{"ULabelToALabel", "ada@b\u00fccher.example", "ada@xn--bcher-kva.example"},
		{"ALabelKept", "ada@xn--bcher-kva.example", "ada@xn--bcher-kva.example"},
		{"UpperALabel", "ada@XN--BCHER-KVA.EXAMPLE", "ada@xn--bcher-kva.example"},
		{"UpperULabel", "ada@B\u00dcCHER.example", "ada@xn--bcher-kva.example"},
		{"FullWidthLocal", "\uff21\uff44\uff41@example.com", "ada@example.com"},
		{"FullWidthDomain", "ada@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com", "ada@example.com"},
		{"IdeographicFullStop", "ada@example\u3002com", "ada@example.com"},
		{"Cyrillic", "\u041f\u0430\u0432\u0435\u043b@example.com", "\u043f\u0430\u0432\u0435\u043b@example.com"},
		{"Japanese", "\u3084\u307e\u3060\u592a\u90ce@example.jp", "\u3084\u307e\u3060\u592a\u90ce@example.jp"},
		{"LatinAndHan", "li\u674e@example.cn", "li\u674e@example.cn"},
		{"GermanSharpS", "stra\u00dfe@example.de", "stra\u00dfe@example.de"},
		{"CyrillicDomainIsALabel", "ada@\u0435xample.com", "ada@xn--xample-2of.com"},

		{"Empty", "", ""},
		{"NoAt", "no-at-sign", ""},
		{"NoDot", "a@b", ""},
		{"DisplayName", "Alice <alice@example.com>", ""},
		{"HeaderInjection", "alice@example.com\r\nBcc: evil@example.com", ""},
		{"SpaceInDomain", "alice@exa mple.com", ""},
		{"Comma", "a,b@example.com", ""},
		{"NoLocal", "@example.com", ""},
		{"TrailingZWSP", "ada@example.com\u200b", ""},
		{"ZWSPInLocal", "a\u200bda@example.com", ""},
		{"ZWNJ", "a\u200cda@example.com", ""},
		{"ZWJ", "a\u200dda@example.com", ""},
		{"WordJoiner", "ada@exa\u2060mple.com", ""},
		{"BOM", "\ufeffada@example.com", ""},
		{"LRM", "ada\u200e@example.com", ""},
		{"RLO", "ada\u202e@example.com", ""},
		{"LRI", "ada\u2066@example.com", ""},
		{"SoftHyphen", "a\u00adda@example.com", ""},
		{"NBSP", "a\u00a0da@example.com", ""},
		{"IdeographicSpace", "a\u3000da@example.com", ""},
		{"LineSeparator", "ada\u2028@example.com", ""},
		{"HangulFiller", "ada\u3164@example.com", ""},
		{"VariationSelector", "ada\ufe0f@example.com", ""},
		{"NUL", "ada\x00@example.com", ""},
		{"DEL", "ada\x7f@example.com", ""},
		{"PrivateUse", "ada\ue000@example.com", ""},
		{"LatinAndCyrillic", "p\u0430ypal@example.com", ""},
		{"LatinAndGreek", "\u03bfscar@example.com", ""},
		{"CyrillicAndGreek", "\u043f\u03b1\u0432\u0435\u043b@example.com", ""},
		{"CompatibilityLigature", "\ufb01nn@example.com", ""},
		{"Superscript", "ada\u00b2@example.com", ""},
		{"Symbol", "ada\u2665@example.com", ""},
		{"Underscore domain", "ada@my_host.example", ""},
		{"BadALabel", "ada@xn--zz.example", ""},
		{"InvalidUTF8", "ada\xff@example.com", ""},
		{"TooLongInput", strings.Repeat("a", 5000) + "@example.com", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mailaddr.Canonical("email", tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Canonical(%q)=%q, want a refusal", tt.in, got)
				}
				if e, ok := errors.AsType[*board.Error](err); !ok || e.Code != board.EINVALID || e.Field != "email" {
					t.Fatalf("Canonical(%q): %v (code %s), want EINVALID naming email", tt.in, err, board.ErrorCode(err))
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Canonical(%q)=%q, %v; want %q", tt.in, got, err, tt.want)
			}
			// The canonical form is a fixed point.
			if again, err := mailaddr.Canonical("email", got); err != nil || again != got {
				t.Fatalf("Canonical(%q)=%q, %v; want it unchanged", got, again, err)
			}
		})
	}
}

// TestCanonicalLength: board.MaxEmailLen characters of the canonical form
// pass, one more fails, whatever the input's length was.
func TestCanonicalLength(t *testing.T) {
	const domain = "@example.com"
	for _, tt := range []struct {
		name  string
		local func(n int) string
	}{
		{"ASCII", func(n int) string { return strings.Repeat("a", n) }},
		{"FullWidth", func(n int) string { return strings.Repeat("\uff41", n) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := board.MaxEmailLen - len(domain)
			if _, err := mailaddr.Canonical("email", tt.local(n)+domain); err != nil {
				t.Fatalf("%d characters: %v", board.MaxEmailLen, err)
			}
			if _, err := mailaddr.Canonical("email", tt.local(n+1)+domain); board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("%d characters: %v, want a refusal naming email", board.MaxEmailLen+1, err)
			}
		})
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"ada@example.com", "jose\u0301@b\u00fccher.example", "\uff41@example.com", "a\u200b@x.io"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := mailaddr.Canonical("email", s)
		if err != nil {
			return
		}
		if again, err := mailaddr.Canonical("email", got); err != nil || again != got {
			t.Fatalf("Canonical(%q)=%q is not a fixed point: %q, %v", s, got, again, err)
		}
	})
}
