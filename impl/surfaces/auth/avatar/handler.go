package avatar

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/web"
)

// CacheControl is sent with every served avatar. Links are stable per user while the picture can
// change at the next login, so caches keep it an hour and then revalidate with the ETag.
const CacheControl = "public, max-age=3600"

// Handler serves GET (and HEAD) /<id>.image relative to where it is mounted (chi Mount or
// http.StripPrefix): 200 with the image, its sniffed image/* Content-Type, an ETag (its content id),
// Cache-Control and nosniff; 304 when If-None-Match matches the store's ID, answered without
// reading the picture; 404 (JSON Error) for an unknown or malformed id. Bytes that are not an
// image (they must sniff as image/* and their header must parse) are never served: they answer
// 404 too.
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
	// A revalidation (every browser and cache does one per page once max-age has passed) is
	// answered from the store's ID alone, which no store computes from the picture: fifty clients
	// revalidating a 4 MB avatar must not move 4 MB each out of the store to answer 304.
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etag := p.opts.Store.ID(r.Context(), id); etag != "" && etagMatch(inm, `"`+etag+`"`) {
			setAvatarHeaders(w.Header(), `"`+etag+`"`)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	rc, _, err := p.opts.Store.Get(r.Context(), id)
	if errors.Is(err, ErrNotFound) {
		notFound()
		return
	}
	if err != nil {
		web.Internal(w, r, err)
		return
	}
	b, err := io.ReadAll(io.LimitReader(rc, MaxStoreBytes+1))
	_ = rc.Close()
	if err != nil {
		web.Internal(w, r, err)
		return
	}
	ct := imageType(b)
	if ct == "" {
		p.log.ErrorContext(r.Context(), "avatar: stored bytes are not an image, refusing to serve", "id", id,
			"sniffed", http.DetectContentType(b))
		notFound()
		return
	}
	// The ETag of the bytes served is their own content id (what every store's ID is), so it
	// names these bytes even when a new picture replaced them after they were read.
	etag := `"` + ContentID(b) + `"`
	h := w.Header()
	setAvatarHeaders(h, etag)
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

// setAvatarHeaders sets what a 200 and a 304 of an avatar share.
func setAvatarHeaders(h http.Header, etag string) {
	h.Set("ETag", etag)
	h.Set("Cache-Control", CacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	// An image never needs to run anything; if a browser ever treated it as a document, nothing
	// in it may load or execute.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
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
