package avatar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/image/draw"

	// Registered so that pictures in these formats pass the decode check too.
	_ "image/gif"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/webp"
)

// ProxyOptions configures NewProxy. Only Store and URL are required.
type ProxyOptions struct {
	// Store keeps the pictures.
	Store Store
	// URL is the public base URL of the server (scheme://host[:port]); links are URL+RoutePath+"/"+id.
	URL string
	// RoutePath is where Handler is mounted; default "/avatar".
	RoutePath string
	// ResizeLimit, when > 0, scales pictures down at Put so that neither side exceeds it (keeping the
	// aspect ratio); 0 keeps pictures at their size.
	ResizeLimit int
	// HTTPClient fetches pictures; nil builds the guarded client of NewHTTPClient from the fields below.
	HTTPClient *http.Client
	// AllowPrivate lets the default client dial private and loopback addresses. Tests only.
	AllowPrivate bool
	// MaxBytes caps a fetched picture; default DefaultMaxBytes, at most MaxStoreBytes.
	MaxBytes int64
	// MaxPixels caps width*height of a picture, checked from its header before decoding; default
	// DefaultMaxPixels.
	MaxPixels int
	// Timeout bounds one fetch; default DefaultTimeout.
	Timeout time.Duration
	// Logger receives refusals and failures; nil discards.
	Logger *slog.Logger
}

// Proxy saves users' pictures into a Store at login and serves them. It implements the auth
// providers' AvatarSaver.
type Proxy struct {
	opts   ProxyOptions
	client *http.Client
	log    *slog.Logger
}

// NewProxy builds a proxy, filling in defaults.
func NewProxy(opts ProxyOptions) *Proxy {
	if opts.RoutePath == "" {
		opts.RoutePath = "/avatar"
	}
	opts.RoutePath = "/" + strings.Trim(opts.RoutePath, "/")
	opts.URL = strings.TrimRight(opts.URL, "/")
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	// A picture kept at its size must still fit in a store.
	opts.MaxBytes = min(opts.MaxBytes, MaxStoreBytes)
	if opts.MaxPixels <= 0 {
		opts.MaxPixels = DefaultMaxPixels
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	p := &Proxy{opts: opts, client: opts.HTTPClient, log: opts.Logger}
	if p.client == nil {
		p.client = NewHTTPClient(ClientOptions{Timeout: opts.Timeout, MaxBytes: opts.MaxBytes, AllowPrivate: opts.AllowPrivate})
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// Put saves the picture at pictureURL as userID's avatar and returns its local link
// "<URL><RoutePath>/<id>.image".
//
// An empty pictureURL gives the user an identicon. A picture that cannot be fetched or is refused
// (bad scheme, forbidden address, too large, not an image, too many pixels) does not fail the
// login: the refusal is logged, the user keeps the avatar already stored for them if there is one,
// and otherwise gets an identicon. Put only fails when the store does.
func (p *Proxy) Put(ctx context.Context, userID, pictureURL string) (string, error) {
	if userID == "" {
		return "", errors.New("avatar: empty user id")
	}
	var img []byte
	if pictureURL != "" {
		b, err := p.Fetch(ctx, pictureURL)
		if err == nil {
			img, err = p.prepare(b)
		}
		if err != nil {
			p.log.WarnContext(ctx, "avatar: picture refused, using a fallback", "user_hash", AvatarID(userID), "err", err)
			if id := AvatarID(userID); p.opts.Store.ID(ctx, id) != "" {
				return p.link(id), nil
			}
			img = nil
		}
	}
	if img == nil {
		var err error
		if img, err = p.prepare(Identicon(userID)); err != nil {
			return "", err
		}
	}
	id, err := p.opts.Store.Put(ctx, userID, bytes.NewReader(img))
	if err != nil {
		return "", fmt.Errorf("avatar: store: %w", err)
	}
	return p.link(id), nil
}

// link is the public URL of an avatar id.
func (p *Proxy) link(id string) string { return p.opts.URL + p.opts.RoutePath + "/" + id }

// Fetch downloads a picture: only absolute http(s) URLs, within Timeout and MaxBytes, answered with
// 200. It does not check that the bytes are an image; prepare does.
func (p *Proxy) Fetch(ctx context.Context, pictureURL string) ([]byte, error) {
	u, err := url.Parse(pictureURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrBadURL
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, ErrBadURL
	}
	req.Header.Set("Accept", "image/*")
	resp, err := p.client.Do(req)
	if err != nil {
		// *url.Error repeats the URL, and picture URLs can carry credentials (Telegram's file URLs
		// hold the bot token), so only the cause goes into the error and thus the log.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("avatar: fetch from %s: %w", u.Host, clientError(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("avatar: fetch: status %d", resp.StatusCode)
	}
	if resp.ContentLength > p.opts.MaxBytes {
		return nil, ErrTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, p.opts.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("avatar: fetch: %w", clientError(err))
	}
	if int64(len(b)) > p.opts.MaxBytes {
		return nil, ErrTooLarge
	}
	return b, nil
}

// prepare checks that b is a real image of acceptable size and resizes it if configured. The pixel
// count is checked from the header before the full decode, so a decompression bomb is refused
// before it allocates anything. The full decode then proves the bytes are an image, not something
// wearing an image header.
func (p *Proxy) prepare(b []byte) ([]byte, error) {
	if !isImageType(http.DetectContentType(b)) {
		return nil, ErrNotImage
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, ErrNotImage
	}
	if int64(cfg.Width)*int64(cfg.Height) > int64(p.opts.MaxPixels) {
		return nil, fmt.Errorf("%w: %dx%d", ErrTooManyPixels, cfg.Width, cfg.Height)
	}
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	limit := p.opts.ResizeLimit
	if limit <= 0 || (cfg.Width <= limit && cfg.Height <= limit) {
		return b, nil
	}
	return encode(resize(img, limit), format)
}

// resize scales img down so its longer side is limit, keeping the aspect ratio.
func resize(img image.Image, limit int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	nw, nh := limit, limit
	if w >= h {
		nh = max(1, h*limit/w)
	} else {
		nw = max(1, w*limit/h)
	}
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// encode writes a resized picture: JPEG stays JPEG (photos), everything else becomes PNG.
func encode(img image.Image, format string) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		return nil, fmt.Errorf("avatar: encode: %w", err)
	}
	return buf.Bytes(), nil
}
