// Package web serves the browser client: the Vite build in dist/, committed
// to the repository and embedded in the binary, so no Node is needed to run
// Corkboard.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// immutableCache is the Cache-Control of content-hashed files: their name
// changes whenever their bytes do, so a browser may keep them for a year.
const immutableCache = "public, max-age=31536000, immutable"

// revalidateCache is the Cache-Control of everything whose name stays the
// same across builds (index.html, the service worker): always revalidated,
// answered 304 by ETag when unchanged.
const revalidateCache = "no-cache"

// contentSecurityPolicy is the app shell's policy (docs/web-client.md,
// "Content-Security-Policy"). The client loads only its own modules and
// styles; 'self' in connect-src covers the live socket (ws: and wss: of the
// same host in Chromium and Firefox ESR, CSP Level 3); style attributes are
// allowed because the canvas places notes with them and Markdown tables
// align cells with them, while <style> elements are not; data: and blob:
// images are for pasted and exported pictures.
const contentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"style-src 'self'; style-src-attr 'unsafe-inline'; " +
	"img-src 'self' data: blob:; " +
	"font-src 'self'; " +
	"connect-src 'self'; " +
	"worker-src 'self'; " +
	"manifest-src 'self'; " +
	"object-src 'none'; " +
	"base-uri 'self'; " +
	"form-action 'self'; " +
	"frame-ancestors 'none'"

// minGzipSize is the smallest file worth compressing.
const minGzipSize = 1024

// file is one embedded file, with its gzipped form when that is smaller.
type file struct {
	name  string
	body  []byte
	gz    []byte
	etag  string
	ctype string
}

// Handler serves the client. Built by NewHandler; it is an http.Handler.
type Handler struct {
	files map[string]*file // by path without the leading slash
	index *file
	// linkIndex is index.html for the pages of read-only links (/l/…),
	// with a robots meta tag that keeps them out of search engines.
	linkIndex *file
}

// NewHandler builds the handler over the embedded build. Files are read and
// compressed once, here.
func NewHandler() (*Handler, error) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, err
	}
	return NewHandlerFS(sub)
}

// NewHandlerFS builds the handler over fsys, laid out like dist/ (tests use
// an in-memory tree).
func NewHandlerFS(fsys fs.FS) (*Handler, error) {
	h := &Handler{files: map[string]*file{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		h.files[p] = newFile(p, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.index = h.files["index.html"]
	if h.index == nil {
		// A tree without a build (a fresh clone before `make web`) still
		// serves something that says so.
		h.index = newFile("index.html", []byte("<!doctype html><title>Corkboard</title><p>The web client is not built. Run <code>make web</code>.</p>\n"))
	}
	h.linkIndex = newFile("index.html", noIndex(h.index.body))
	return h, nil
}

func newFile(name string, body []byte) *file {
	sum := sha256.Sum256(body)
	f := &file{name: name, body: body, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
	f.ctype = mime.TypeByExtension(path.Ext(name))
	if f.ctype == "" {
		f.ctype = http.DetectContentType(body)
	}
	if len(body) >= minGzipSize && compressible(f.ctype) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if buf.Len() < len(body) {
			f.gz = buf.Bytes()
		}
	}
	return f
}

func compressible(ctype string) bool {
	for _, p := range []string{"text/", "application/javascript", "application/json", "image/svg+xml", "application/manifest+json", "application/wasm"} {
		if strings.HasPrefix(ctype, p) {
			return true
		}
	}
	return false
}

// ServeHTTP serves an embedded file, or index.html for any other path so
// that the client's routes (/b/<boardId>) load the app. A missing file
// under /assets/ is a 404: answering HTML for a script would only hide a
// stale page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	f := h.files[name]
	switch {
	case f != nil && strings.HasPrefix(name, "assets/"):
		w.Header().Set("Cache-Control", immutableCache)
	case f != nil:
		w.Header().Set("Cache-Control", revalidateCache)
	case strings.HasPrefix(name, "assets/"):
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "No such file.", http.StatusNotFound)
		return
	case strings.HasPrefix(name, linkPages):
		// A read-only link's page: its address is the link's token, so it
		// is neither indexed, kept, nor sent on as a Referer.
		f = h.linkIndex
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Robots-Tag", "noindex, nofollow")
	default:
		f = h.index
		w.Header().Set("Cache-Control", revalidateCache)
	}
	h.serveFile(w, r, f)
}

func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, f *file) {
	hdr := w.Header()
	hdr.Set("Content-Type", f.ctype)
	hdr.Set("X-Content-Type-Options", "nosniff")
	if f == h.index || f == h.linkIndex {
		// The app shell: nobody may frame it, and it only loads its own code.
		hdr.Set("Content-Security-Policy", contentSecurityPolicy)
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "same-origin")
	}
	if f == h.linkIndex {
		// Not even this site's own pages learn a link's address.
		hdr.Set("Referrer-Policy", "no-referrer")
	}
	body, etag := f.body, f.etag
	if f.gz != nil {
		hdr.Add("Vary", "Accept-Encoding")
		if AcceptsGzip(r) {
			body, etag = f.gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
			hdr.Set("Content-Encoding", "gzip")
		}
	}
	hdr.Set("ETag", etag)
	// ServeContent answers If-None-Match with 304 and handles HEAD and
	// ranges; the zero modtime keeps Last-Modified out (ETags suffice).
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

// AcceptsGzip reports whether r's Accept-Encoding allows gzip (a q=0 entry
// refuses it).
func AcceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
				return false
			}
			return true
		}
	}
	return false
}

// linkPages is the folder of read-only links' pages (/l/<token>).
const linkPages = "l/"

// robotsNoIndex is the tag linkIndex carries.
const robotsNoIndex = `<meta name="robots" content="noindex, nofollow">`

// noIndex returns index.html with robotsNoIndex at the end of its head
// (at its start when it has no </head>).
func noIndex(index []byte) []byte {
	out := make([]byte, 0, len(index)+len(robotsNoIndex)+1)
	if i := bytes.Index(index, []byte("</head>")); i >= 0 {
		out = append(out, index[:i]...)
		out = append(out, robotsNoIndex...)
		out = append(out, '\n')
		return append(out, index[i:]...)
	}
	out = append(out, robotsNoIndex...)
	return append(out, index...)
}
