package avatar

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/web"
)

// CacheControl is sent with every served avatar. Links are stable per user while the picture can
// change at the next login, so caches keep it an hour and then revalidate with the ETag.
const CacheControl = "public, max-age=3600"

// Handler serves GET (and HEAD) /<id>.image relative to where it is mounted (chi Mount or
// http.StripPrefix): 200 with the image, its sniffed image/* Content-Type, an ETag from the store's
// ID, Cache-Control and nosniff; 304 when If-None-Match matches; 404 (JSON Error) for an unknown or
// malformed id. Bytes that are not an image (they must sniff as image/* and their header must
// parse) are never served: they answer 404 too.
func (p *Proxy) Handler() http.Handler {
	r := chi.NewRouter()
	r.NotFound(web.NotFound)
	r.MethodNotAllowed(web.MethodNotAllowed)
	r.Get("/{id}", p.serve)
	r.Head("/{id}", p.serve)
	return r
}

// serve answers one avatar request.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	notFound := func() {
		web.WriteError(w, r, http.StatusNotFound, web.Error{Code: web.CodeNotFound, Message: "no such avatar"})
	}
	if !ValidID(id) {
		notFound()
		return
	}
	rc, _, err := p.opts.Store.Get(r.Context(), id)
	if errors.Is(err, ErrNotFound) {
		notFound()
		return
	}
	if err != nil {
		web.Internal(w, r, p.log, err)
		return
	}
	b, err := io.ReadAll(io.LimitReader(rc, MaxStoreBytes+1))
	_ = rc.Close()
	if err != nil {
		web.Internal(w, r, p.log, err)
		return
	}
	ct := imageType(b)
	if ct == "" {
		p.log.ErrorContext(r.Context(), "avatar: stored bytes are not an image, refusing to serve", "id", id,
			"sniffed", http.DetectContentType(b))
		notFound()
		return
	}
	etag := p.opts.Store.ID(r.Context(), id)
	if etag == "" {
		etag = ContentID(b) // removed between Get and ID; the bytes we hold still have an identity
	}
	etag = `"` + etag + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", CacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	// An image never needs to run anything; if a browser ever treated it as a document, nothing
	// in it may load or execute.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, bytes.NewReader(b))
	}
}

// etagMatch implements the weak comparison of If-None-Match (RFC 9110 13.1.2): "*" or any listed
// tag equal to etag once a W/ prefix is dropped.
func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
