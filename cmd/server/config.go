package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/kit"
	authhttp "github.com/triadhq/triad/impl/surfaces/auth/httpapi"
	brandshttp "github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	ordershttp "github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// Secret is a configuration string that never appears in logs: the surfaces' Settings, which the
// configuration holds, type theirs the same.
type Secret = kit.Secret

// CredURI is a configuration URI that may carry credentials, its password redacted in logs.
type CredURI = kit.CredURI

// Config is every setting of the server, loaded once at start by LoadConfig. Each field's flag,
// environment variable, default, help and bounds are its row in the settings table (settings.go);
// the comments here say what the field is for.
type Config struct {
	Addr string // ADDR: listen address
	Mode string // MODE: dev, prod, migrate, wait-schema or archive
	// MetricsAddr (METRICS_ADDR) is where /metrics is served on a listener of its own, kept off
	// the API port and so off the Service the balancer routes to; empty serves it on ADDR.
	MetricsAddr string
	DatabaseURL Secret // DATABASE_URL: empty starts a managed cluster under DataDir/pg; may be a transaction-mode pooler
	// DatabaseDirectURL (DATABASE_DIRECT_URL) reaches PostgreSQL without a pooler, for LISTEN, the
	// advisory locks and migrations; empty uses DatabaseURL. Set and different, it tells the server
	// that DatabaseURL is a pooler.
	DatabaseDirectURL Secret
	// DatabaseReadURL (DATABASE_READ_URL) is a hot standby for the reads that tolerate its lag;
	// empty reads from DatabaseURL.
	DatabaseReadURL Secret
	DBAppRole       string // DB_APP_ROLE: -mode migrate grants this role the rows of every table
	// Archive configures -mode archive: where the archives go, from which age, or which to put back.
	Archive         ArchiveConfig
	DataDir         string        // DATA_DIR: where the managed cluster and file stores live
	DBMaxConns      int           // DB_MAX_CONNS: each database pool's size; 0: the URL's pool_max_conns, else max(4, GOMAXPROCS)
	LogLevel        string        // LOG_LEVEL: debug, info, warn, error
	BodyLimit       int64         // BODY_LIMIT: request body cap in bytes
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT: how long in-flight requests may finish
	DrainDelay      time.Duration // DRAIN_DELAY: how long a stopping server serves with /readyz 503 first
	CORSOrigins     string        // CORS_ORIGINS: comma-separated browser origins allowed to call the API
	TrustedProxies  string        // TRUSTED_PROXIES: reverse proxies whose X-Forwarded-For names the client
	// DevDefaults names the settings dev mode gave its own defaults (VAR=value, secrets masked),
	// for the start-up log: the published development credentials, and the abuse limits a
	// developer's own test suite would meet (sign-ups, confirmation mails, the slowing of one
	// address's logins). Empty in prod mode; a setting given explicitly is never among them.
	DevDefaults []string `json:"-"`
	// TestIdempotencyHold (TRIAD_TEST_IDEMPOTENCY_HOLD, environment only) is for tests only: see
	// testhold.go. Never set in production.
	TestIdempotencyHold string

	Logins LoginsConfig
	// Orders and Brands are those surfaces' own settings, as their mounts take them: the rows of
	// settings.go set their fields, so a setting is typed once, in the surface.
	Orders ordershttp.Settings
	Brands brandshttp.Settings
	Auth   AuthConfig
}

// ArchiveConfig is -mode archive's (docs/scaling.md#retention-by-archive).
type ArchiveConfig struct {
	Dir     string        // ARCHIVE_DIR: the folder each archived month's files go to
	Horizon time.Duration // ARCHIVE_HORIZON: a month whose end is older than this is archived
	Restore string        // ARCHIVE_RESTORE: an archived month's folder to put back instead
}

// LoginsConfig tunes what every surface with passwords shares, as kit.Shared takes it: the failed
// logins per address (LOGIN_ADDRESS_MAX, LOGIN_ADDRESS_INTERVAL) and per account
// (LOGIN_ACCOUNT_MAX), the hasher's per-client line (LOGIN_CLIENT_QUEUE) and the registration cap
// (SIGNUP_MAX per SIGNUP_WINDOW).
type LoginsConfig = kit.Logins

// AuthConfig configures the embedded auth service: the auth surface's own settings as they are
// (authhttp.Settings, each field set by its AUTH_* row), and what of AUTH_* is the server's.
type AuthConfig struct {
	authhttp.Settings
	// SecureCookies (AUTH_SECURE_COOKIES) marks every surface's cookies Secure (kit.Shared), as an
	// https AUTH_URL does.
	SecureCookies bool
	// URLFromListener: AUTH_URL was not given in dev mode, so URL is the address the server listens
	// on, settled by run once it listens (the configured port may be 0).
	URLFromListener bool
}

// IsDev reports whether the server runs in development mode.
func (c Config) IsDev() bool { return c.Mode == "dev" }

// LoadConfig parses args (without the program name) over the environment's values over the
// defaults, all three from the settings table, then checks what the rows cannot check alone.
func LoadConfig(args []string) (Config, error) {
	var c Config
	c.TestIdempotencyHold = os.Getenv(testHoldEnv)
	rows := settings(&c)
	if err := loadSettings(rows, args); err != nil {
		return c, err
	}
	var errs []error
	for _, s := range rows {
		if s.check == nil {
			continue
		}
		if err := s.check(); err != nil {
			errs = append(errs, err)
		}
		switch {
		case c.Mode == "dev" && s.devUnset():
			s.devFill()
			c.DevDefaults = append(c.DevDefaults, s.env+"="+s.value.String())
		case c.Mode == "prod" && s.prod != nil:
			if err := s.prod(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return c, errors.Join(append(errs, c.crossChecks()...)...)
}

// prodDefaultAuthURL is AUTH_URL when prod mode is not given one.
const prodDefaultAuthURL = "http://localhost:8080"

// listenURL is the http base URL of a server configured to listen on addr: addr's host, or
// localhost when addr names none or every address (":8080", "0.0.0.0:8080", "[::]:8080"), with the
// port of bound (the listener's real address, for a configured port 0) when bound is not nil, else
// addr's. An addr that does not parse is returned behind http:// as it is; net.Listen refuses it.
func listenURL(addr string, bound net.Addr) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	if tcp, ok := bound.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
	}
	return "http://" + net.JoinHostPort(host, port)
}

// defaultProdDrainDelay is DRAIN_DELAY in prod mode: a balancer checking /readyz every second or
// two, failing after two or three checks, and Kubernetes' endpoint updates all fit in it.
const defaultProdDrainDelay = 5 * time.Second

// Development defaults: documented in docs/, refused in prod mode.
const (
	devOrdersClientID     = "triad-orders"
	devOrdersClientSecret = "triad-orders-secret"
	devAuthSecret         = "dev-only-secret-change-me-0123456789"
)

// Dev mode's defaults of the limits an attacker meets but a developer's own test suite run against
// `make run` meets too: generous, so a suite that signs up hundreds of users or asks for many
// confirmation mails from localhost is served. Prod keeps the packages' defaults, and any of them
// set explicitly (environment or flag) applies in every mode.
const (
	devSignupMax           = 1000
	devConfirmPerRecipient = 1000
	devConfirmPerClient    = 1000
	devAddressMax          = 10000
)

// Minimum lengths of the secrets prod mode accepts. AUTH_SECRET signs every JWT (HMAC-SHA256 wants
// a key of at least 32 bytes); the client secret and the admin passwords guard accounts that can
// do anything on their surface, so they must be more than a guessable word.
const (
	minAuthSecret    = 32
	minClientSecret  = 24
	minAdminPassword = 12
)

// maxAvatarResize is the largest AUTH_AVATAR_RESIZE: an avatar is shown at a few hundred pixels,
// so a bigger limit is a typo (an extra zero), and one above the pictures' own size resizes nothing.
const maxAvatarResize = 4096

// publishedSecrets are values anyone can read in the docs, the seeds or the dev data (dev
// defaults, demo passwords, placeholders of examples): a prod server configured with one of them
// is open to whoever read them, so prod refuses them for every secret, whatever their length.
var publishedSecrets = []string{
	devOrdersClientSecret, devAuthSecret, devOrdersClientID,
	"admin-password", "demo-password", "alice-password", "bob-password", "carol-password", "dave-password",
	"secret", "password", "changeme", "change-me", "admin", "passwd",
}

// checkProdSecret says what is wrong with a prod secret named name, or nil: empty (when required),
// shorter than min, or a published value. Comparison ignores case and surrounding space, so
// "Admin-Password " is refused too.
func checkProdSecret(name string, v Secret, min int, required bool) error {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "" && !required:
		return nil
	case s == "":
		return fmt.Errorf("prod mode needs %s", name)
	}
	published := strings.Contains(strings.ToLower(s), "change-me") // the docs' placeholder style
	for _, p := range publishedSecrets {
		published = published || strings.EqualFold(s, p)
	}
	if published {
		return fmt.Errorf("%s is a published development value: choose a secret of your own", name)
	}
	if len(s) < min {
		return fmt.Errorf("%s is %d characters: prod mode needs at least %d", name, len(s), min)
	}
	return nil
}

// crossChecks settles the defaults that depend on other settings and checks the rules over
// several settings, each error naming the variables; a single setting's bounds are its row's.
func (c *Config) crossChecks() []error {
	var errs []error
	if err := checkTestHold(c.TestIdempotencyHold); err != nil {
		errs = append(errs, err)
	}
	if c.Auth.URL == "" {
		// Dev mode's callbacks and avatar links must reach this very server, on whatever port it was
		// started (`-addr 127.0.0.1:9090`), so there the default is the listen address. A prod server
		// sits behind names and proxies only the operator knows: it keeps the documented default.
		c.Auth.URL, c.Auth.URLFromListener = prodDefaultAuthURL, false
		if c.IsDev() {
			c.Auth.URL, c.Auth.URLFromListener = listenURL(c.Addr, nil), true
		}
	}
	if _, port, err := net.SplitHostPort(c.Addr); err == nil && port == "0" {
		// A server on an ephemeral port (tests) gets an ephemeral dev provider too, so parallel
		// servers never fight over AUTH_DEV_PORT's 8084.
		c.Auth.DevPort = 0
	}
	if c.Mode == "prod" && (c.Brands.AdminEmail == "") != (c.Brands.AdminPassword == "") {
		errs = append(errs, errors.New("BRANDS_ADMIN_EMAIL and BRANDS_ADMIN_PASSWORD go together"))
	}
	if err := checkCookieDomain(c.Auth.CookieDomain, c.Auth.URL); err != nil {
		errs = append(errs, err)
	}
	if c.DrainDelay < 0 { // unset: a balancer needs a few health checks to notice; a developer's Ctrl-C does not
		c.DrainDelay = 0
		if c.Mode == "prod" {
			c.DrainDelay = defaultProdDrainDelay
		}
	}
	// -mode migrate and wait-schema use only the direct URL (docs/deploy.md's migrate command sets
	// nothing else); a server needs the pooled one beside it.
	schemaOnly := c.Mode == "migrate" || c.Mode == "wait-schema" || c.Mode == "archive"
	if c.DatabaseURL == "" && ((c.DatabaseDirectURL != "" && !schemaOnly) || c.DatabaseReadURL != "") {
		errs = append(errs, errors.New("DATABASE_DIRECT_URL and DATABASE_READ_URL go with DATABASE_URL (without it the server manages its own PostgreSQL)"))
	}
	if c.Mode == "wait-schema" && c.DatabaseURL == "" && c.DatabaseDirectURL == "" {
		errs = append(errs, errors.New("-mode wait-schema waits for a database of its own: set DATABASE_DIRECT_URL or DATABASE_URL"))
	}
	if c.Mode == "archive" && c.Archive.Dir == "" && c.Archive.Restore == "" {
		errs = append(errs, errors.New("-mode archive writes its files to ARCHIVE_DIR (or puts ARCHIVE_RESTORE back): set one"))
	}
	if _, err := corsOrigins(*c); err != nil {
		errs = append(errs, fmt.Errorf("CORS_ORIGINS: %w", err))
	}
	return errs
}

// checkCookieDomain refuses an AUTH_COOKIE_DOMAIN the browser would drop: it must be a bare host
// name (no scheme, port or path) that AUTH_URL's host is, or is below. A browser silently ignores a
// Set-Cookie whose Domain does not cover the host that sent it, so a wrong value would show only as
// logins that never stick.
func checkCookieDomain(domain, authURL string) error {
	if domain == "" {
		return nil
	}
	d := strings.ToLower(strings.TrimPrefix(domain, "."))
	if d == "" || strings.ContainsAny(d, ":/ ;,@") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
		return fmt.Errorf("AUTH_COOKIE_DOMAIN %q: want a host name such as example.com", domain)
	}
	u, err := url.Parse(authURL)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("AUTH_COOKIE_DOMAIN needs AUTH_URL to name a host, got %q", authURL)
	}
	host := strings.ToLower(u.Hostname())
	// An address has no parent domains: browsers take Domain on it only when it is the address.
	if host != d && (net.ParseIP(host) != nil || !strings.HasSuffix(host, "."+d)) {
		return fmt.Errorf("AUTH_COOKIE_DOMAIN %q does not cover AUTH_URL's host %s: browsers would drop the cookies", domain, host)
	}
	return nil
}
