// Package mailaddr gives an e-mail address its one canonical form, the
// account's identity: every entry point (login codes, invites, billing
// webhooks, the plan command) passes addresses through Canonical, so that
// the spellings of one address that look the same to a person are one
// account, and an address that could pass for another is refused. The
// rules and why are in docs/auth.md, "E-mail addresses".
package mailaddr

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/secure/precis"

	"corkboard/board"
)

// maxInputBytes bounds the work on one input before anything else: a
// canonical address is at most board.MaxEmailLen characters, and no
// mapping shrinks text more than fourfold.
const maxInputBytes = 4 * 4 * board.MaxEmailLen

// domainProfile maps a domain as a browser's address bar does (UTS 46:
// width, case, NFC), checks it against IDNA 2008 and the hostname rules
// (letters, digits and hyphens), and gives its ASCII form: A-labels
// (xn--…) for the labels that are not ASCII.
var domainProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(true),
	idna.VerifyDNSLength(true),
)

// Canonical returns the canonical form of the address s, or an EINVALID
// error naming field:
//   - surrounding white space is trimmed;
//   - an invisible or control character anywhere is refused (format
//     characters such as U+200B..U+200D, U+2060, U+FEFF and the bidi
//     controls, controls, and any space or separator inside);
//   - the local part goes through PRECIS UsernameCaseMapped (RFC 8265):
//     full-width and half-width forms mapped to their usual form, lower
//     case, NFC; other compatibility characters, symbols and unassigned
//     code points refused;
//   - its letters must come from one script, or one of the mixes of
//     Unicode's "highly restrictive" level (UTS 39): Latin with Han and
//     Japanese kana, with Han and Bopomofo, or with Han and Hangul;
//   - the domain goes through IDNA (UTS 46 mapping, IDNA 2008 rules) and
//     is kept in lower-case ASCII, with A-labels for Unicode labels;
//   - the result is one bare address (board.NormalizeEmail's rules) of at
//     most board.MaxEmailLen characters.
func Canonical(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxInputBytes {
		return "", board.FieldErrorf(field, "%s must be at most %d characters.", field, board.MaxEmailLen)
	}
	if !utf8.ValidString(s) {
		return "", board.FieldErrorf(field, "%s must be valid UTF-8.", field)
	}
	for _, r := range s {
		if invisible(r) {
			return "", board.FieldErrorf(field, "%s has an invisible or control character (U+%04X); type the address again.", field, r)
		}
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at == len(s)-1 {
		return "", board.FieldErrorf(field, "%s is not a valid e-mail address.", field)
	}
	local, domain := s[:at], s[at+1:]
	if isASCII(local) {
		// The common case; PRECIS would give the same.
		local = strings.ToLower(local)
	} else {
		l, err := precis.UsernameCaseMapped.String(local)
		if err != nil {
			return "", board.FieldErrorf(field, "%s has a character that is not allowed in the part before the @.", field)
		}
		local = l
		if scripts, ok := oneScript(local); !ok {
			return "", board.FieldErrorf(field, "%s mixes scripts before the @ (%s), so it could pass for another address.", field, strings.Join(scripts, " and "))
		}
	}
	d, err := domainProfile.ToASCII(domain)
	if err != nil || d == "" {
		return "", board.FieldErrorf(field, "%s has a domain that is not a valid domain name.", field)
	}
	// The syntax rules (one bare address, no display name or quotes,
	// a dot in the domain) and the length apply to the canonical form.
	return board.NormalizeEmail(field, local+"@"+strings.ToLower(d))
}

// invisible reports whether r cannot be seen or changes how the text
// around it shows: controls (Cc), format characters (Cf: zero-width
// spaces and joiners, U+2060, U+FEFF, soft hyphen, bidi controls),
// separators (Z*: no space belongs inside an address), surrogates and
// private-use characters, and the default-ignorable code points that are
// not Cf (U+115F, U+3164 Hangul fillers, variation selectors).
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Z, unicode.Cs, unicode.Co, unicode.Variation_Selector) ||
		r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0 || r == 0x034F
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// allowedMixes are the mixes of scripts that UTS 39's "highly
// restrictive" level allows in one identifier: the ways Japanese,
// Chinese and Korean are written, alone or with Latin.
var allowedMixes = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// oneScript reports whether the letters of s come from one script or one
// of allowedMixes, and which scripts they come from (sorted). Digits,
// punctuation and combining marks (scripts Common and Inherited) count
// for none.
func oneScript(s string) ([]string, bool) {
	var scripts []string
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			continue
		}
		name := scriptOf(r)
		if name == "" || slices.Contains(scripts, name) {
			continue
		}
		scripts = append(scripts, name)
	}
	slices.Sort(scripts)
	if len(scripts) <= 1 {
		return scripts, true
	}
	for _, mix := range allowedMixes {
		if !slices.ContainsFunc(scripts, func(n string) bool { return !slices.Contains(mix, n) }) {
			return scripts, true
		}
	}
	return scripts, false
}

// scriptOf is the Unicode script of r, "" for Common and Inherited.
func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	for name, table := range unicode.Scripts {
		if name == "Common" || name == "Inherited" {
			continue
		}
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}
