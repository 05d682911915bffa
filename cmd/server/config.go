package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/brands"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// Secret is a configuration string that never appears in logs.
type Secret string

// LogValue masks the secret in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON masks the secret where a JSON log handler marshals the whole config.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// String masks the secret in fmt output too: empty stays empty so a missing secret is visible.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// CredURI is a configuration URI that may carry credentials (a store's user:password@host). Logs
// show where it points, with any password replaced by "xxxxx", because an operator needs to see
// which store a server uses but the log must not become a way to read its password.
type CredURI string

// String is the URI with its password redacted; a plain path or an unparsable value is shown only
// when it cannot hold userinfo.
func (u CredURI) String() string {
	if !strings.Contains(string(u), "@") {
		return string(u)
	}
	parsed, err := url.Parse(string(u))
	if err != nil || parsed.User == nil {
		return "***"
	}
	return parsed.Redacted()
}

// LogValue redacts the password in slog output.
func (u CredURI) LogValue() slog.Value { return slog.StringValue(u.String()) }

// MarshalJSON redacts the password where a JSON log handler marshals the whole config.
func (u CredURI) MarshalJSON() ([]byte, error) { return json.Marshal(u.String()) }

// Config is every setting of the server, loaded once at start from flags, whose defaults come from
// the environment variables named beside them.
type Config struct {
	Addr string // ADDR: listen address
	Mode string // MODE: dev, prod, migrate or wait-schema
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
	DBAppRole       string        // DB_APP_ROLE: -mode migrate grants this role the rows of every table
	DataDir         string        // DATA_DIR: where the managed cluster and file stores live
	DBMaxConns      int           // DB_MAX_CONNS: each database pool's size; 0: the URL's pool_max_conns, else max(4, GOMAXPROCS)
	LogLevel        string        // LOG_LEVEL: debug, info, warn, error
	BodyLimit       int64         // BODY_LIMIT: request body cap in bytes
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT: how long in-flight requests may finish
	DrainDelay      time.Duration // DRAIN_DELAY: how long a stopping server serves with /readyz 503 first
	CORSOrigins     string        // CORS_ORIGINS: comma-separated browser origins allowed to call the API
	TrustedProxies  string        // TRUSTED_PROXIES: reverse proxies whose X-Forwarded-For names the client

	Logins LoginsConfig
	Orders OrdersConfig
	Brands BrandsConfig
	Auth   AuthConfig
}

// LoginsConfig tunes what every surface with passwords shares: the per-address layer of the
// failed-login limit, the hasher's per-client line and the registration cap.
type LoginsConfig struct {
	AddressMax      int           // LOGIN_ADDRESS_MAX: failed logins per client address per window before it is slowed
	AddressInterval time.Duration // LOGIN_ADDRESS_INTERVAL: spacing of a slowed address's password checks
	ClientQueue     int           // LOGIN_CLIENT_QUEUE: hashes of one client that may wait for its share
	SignupMax       int           // SIGNUP_MAX: registrations per client address per SIGNUP_WINDOW, per surface
	SignupWindow    time.Duration // SIGNUP_WINDOW
}

// OrdersConfig configures the orders surface.
type OrdersConfig struct {
	ClientID     string        // ORDERS_CLIENT_ID
	ClientSecret Secret        // ORDERS_CLIENT_SECRET
	TokenTTL     time.Duration // ORDERS_TOKEN_TTL
	// MaxHeld is how many orders one performer may hold at once, IN PROGRESS and READY.
	MaxHeld int // ORDERS_MAX_HELD (formerly ORDERS_MAX_IN_PROGRESS, still read when the new name is unset)
	// InProgressTimeout is how long an order may stay IN PROGRESS untouched before it returns to WAITING.
	InProgressTimeout time.Duration // ORDERS_IN_PROGRESS_TIMEOUT
	// ReadyTimeout is how long an order may stay READY unanswered before the server accepts it.
	ReadyTimeout time.Duration // ORDERS_READY_TIMEOUT
	// RetakeCooldown is how long a performer may not take again an order rejected, released or expired in its hands.
	RetakeCooldown time.Duration // ORDERS_RETAKE_COOLDOWN
	// ListShare is how many list pages one user reads at once per replica (0: a quarter of the pool).
	ListShare int // ORDERS_LIST_SHARE
	// ListTimeout bounds one list page's query.
	ListTimeout time.Duration // ORDERS_LIST_TIMEOUT
}

// BrandsConfig configures the brands surface.
type BrandsConfig struct {
	AdminEmail    string        // BRANDS_ADMIN_EMAIL: creates this admin at start when set (prod)
	AdminPassword Secret        // BRANDS_ADMIN_PASSWORD
	TokenTTL      time.Duration // BRANDS_TOKEN_TTL: access token lifetime
}

// AuthConfig configures the embedded auth service.
type AuthConfig struct {
	Secret         Secret        // AUTH_SECRET: JWT signing secret
	URL            string        // AUTH_URL: public base URL of the server
	Issuer         string        // AUTH_ISSUER
	TokenDuration  time.Duration // AUTH_TOKEN_DURATION
	CookieDuration time.Duration // AUTH_COOKIE_DURATION
	SecureCookies  bool          // AUTH_SECURE_COOKIES
	CookieDomain   string        // AUTH_COOKIE_DOMAIN: Domain of the JWT and XSRF cookies; empty keeps them host-only
	AllowedHosts   string        // AUTH_ALLOWED_HOSTS: comma-separated hosts `from` may point at
	AvatarStore    CredURI       // AUTH_AVATAR_STORE: file path, file://, bolt://, mongodb://, postgres://
	AvatarResize   int           // AUTH_AVATAR_RESIZE
	DevPort        int           // AUTH_DEV_PORT: port of the dev OAuth2 server (dev mode)
	AdminPasswd    Secret        // AUTH_ADMIN_PASSWD: enables basic auth for user admin
	Providers      Secret        // AUTH_PROVIDERS: comma-separated name:cid:csecret of built-in OAuth providers
	Audiences      string        // AUTH_AUDIENCES: comma-separated allowed aud values (empty: any; confirmation e-mails: the issuer)
	SMTPHost       string        // AUTH_SMTP_HOST: enables the "email" verified provider
	SMTPPort       int           // AUTH_SMTP_PORT
	SMTPUser       string        // AUTH_SMTP_USER
	SMTPPassword   Secret        // AUTH_SMTP_PASSWORD
	SMTPFrom       string        // AUTH_SMTP_FROM
	SMTPStartTLS   bool          // AUTH_SMTP_STARTTLS
	// ConfirmPerRecipient, ConfirmPerClient and ConfirmWindow bound the verified provider's
	// confirmation messages: AUTH_CONFIRM_PER_RECIPIENT to one recipient, AUTH_CONFIRM_PER_CLIENT
	// asked by one client address, in each AUTH_CONFIRM_WINDOW.
	ConfirmPerRecipient int
	ConfirmPerClient    int
	ConfirmWindow       time.Duration
	// URLFromListener: AUTH_URL was not given in dev mode, so URL is the address the server listens
	// on, settled by run once it listens (the configured port may be 0).
	URLFromListener bool
	// ProviderSettings enables providers one by one: AUTH_<NAME>_CID/_CSECRET, AUTH_MICROSOFT_TENANT,
	// AUTH_APPLE_*, AUTH_TELEGRAM_*, AUTH_CUSTOM_PROVIDERS (see auth_providers.go).
	ProviderSettings ProvidersConfig
}

// IsDev reports whether the server runs in development mode.
func (c Config) IsDev() bool { return c.Mode == "dev" }

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envReader reads typed defaults from the environment and remembers every malformed value, so the
// start stops with all of them named instead of silently falling back to a default (a TTL of "1d"
// used to become 24h without a word).
type envReader struct{ errs []error }

func (e *envReader) fail(name, v, want string) {
	e.errs = append(e.errs, fmt.Errorf("%s=%q: want %s", name, v, want))
}

func (e *envReader) duration(name string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.fail(name, v, "a duration such as 90s, 15m or 24h (units ns, us, ms, s, m, h)")
		return def
	}
	return d
}

func (e *envReader) int(name string, def int) int {
	v, ok := os.LookupEnv(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.fail(name, v, "a whole number")
		return def
	}
	return n
}

func (e *envReader) bool(name string, def bool) bool {
	v, ok := os.LookupEnv(name)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		e.fail(name, v, "true or false")
		return def
	}
	return b
}

type secretFlag struct{ s *Secret }

func (f secretFlag) String() string {
	if f.s == nil {
		return ""
	}
	return f.s.String()
}
func (f secretFlag) Set(v string) error { *f.s = Secret(v); return nil }

// LoadConfig parses args (without the program name) over the environment's defaults.
func LoadConfig(args []string) (Config, error) {
	var c Config
	var e envReader
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.StringVar(&c.Addr, "addr", env("ADDR", ":8080"), "listen address (ADDR)")
	fs.StringVar(&c.Mode, "mode", env("MODE", "dev"), "run mode: dev (prepared data, demo logins), prod, migrate (apply the migrations and exit), or wait-schema (wait until the database has every migration of this binary, then exit) (MODE)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("METRICS_ADDR", ""), "listen address of /metrics on a port of its own (not the API's); empty serves /metrics on ADDR (METRICS_ADDR)")
	c.DatabaseURL = Secret(env("DATABASE_URL", ""))
	fs.Var(secretFlag{&c.DatabaseURL}, "database-url", "PostgreSQL URL, or a transaction-mode pooler's; empty starts a managed cluster (DATABASE_URL)")
	c.DatabaseDirectURL = Secret(env("DATABASE_DIRECT_URL", ""))
	fs.Var(secretFlag{&c.DatabaseDirectURL}, "database-direct-url", "PostgreSQL URL without a pooler, for LISTEN, advisory locks and migrations; empty uses DATABASE_URL (DATABASE_DIRECT_URL)")
	c.DatabaseReadURL = Secret(env("DATABASE_READ_URL", ""))
	fs.Var(secretFlag{&c.DatabaseReadURL}, "database-read-url", "PostgreSQL hot standby URL for lists, the brand catalog and avatars; empty reads from DATABASE_URL (DATABASE_READ_URL)")
	fs.StringVar(&c.DBAppRole, "db-app-role", env("DB_APP_ROLE", ""), "role that -mode migrate grants reading and writing the rows of every table (DB_APP_ROLE)")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", e.int("DB_MAX_CONNS", 0), "database pool size (each pool: DATABASE_URL's, DATABASE_READ_URL's); 0 uses the URL's pool_max_conns, else max(4, GOMAXPROCS) (DB_MAX_CONNS)")
	fs.StringVar(&c.DataDir, "data-dir", env("DATA_DIR", "./var"), "folder for the managed database and file stores (DATA_DIR)")
	fs.StringVar(&c.LogLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (LOG_LEVEL)")
	fs.StringVar(&c.CORSOrigins, "cors-origins", env("CORS_ORIGINS", ""), "browser origins allowed cross-origin, comma-separated exact origins or * (no credentials); dev mode adds local dev servers (CORS_ORIGINS)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", env("TRUSTED_PROXIES", ""), "addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For names the client, comma-separated; empty trusts none (TRUSTED_PROXIES)")
	fs.Int64Var(&c.BodyLimit, "body-limit", int64(e.int("BODY_LIMIT", 1<<20)), "request body cap in bytes (BODY_LIMIT)")
	fs.DurationVar(&c.DrainDelay, "drain-delay", e.duration("DRAIN_DELAY", -1), "on SIGTERM, how long to keep serving with /readyz 503 and Connection: close before the listener closes; default 5s in prod, 0 in dev (DRAIN_DELAY)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", e.duration("SHUTDOWN_TIMEOUT", 20*time.Second), "grace period for in-flight requests (SHUTDOWN_TIMEOUT)")

	fs.IntVar(&c.Logins.AddressMax, "login-address-max", e.int("LOGIN_ADDRESS_MAX", throttle.DefaultAddressMax),
		"failed logins from one client address per 15 minutes, over all accounts, before its checks are slowed (LOGIN_ADDRESS_MAX)")
	fs.DurationVar(&c.Logins.AddressInterval, "login-address-interval", e.duration("LOGIN_ADDRESS_INTERVAL", throttle.DefaultAddressInterval),
		"spacing of the password checks of a client address past LOGIN_ADDRESS_MAX (LOGIN_ADDRESS_INTERVAL)")
	fs.IntVar(&c.Logins.ClientQueue, "login-client-queue", e.int("LOGIN_CLIENT_QUEUE", password.DefaultClientLine),
		"password hashes of one client address that may wait for its share of the hasher before it gets 429 (LOGIN_CLIENT_QUEUE)")
	fs.IntVar(&c.Logins.SignupMax, "signup-max", e.int("SIGNUP_MAX", loginguard.DefaultSignupMax),
		"registrations from one client address per SIGNUP_WINDOW, on orders and on brands each (SIGNUP_MAX)")
	fs.DurationVar(&c.Logins.SignupWindow, "signup-window", e.duration("SIGNUP_WINDOW", loginguard.DefaultSignupWindow),
		"window of SIGNUP_MAX (SIGNUP_WINDOW)")

	fs.StringVar(&c.Orders.ClientID, "orders-client-id", env("ORDERS_CLIENT_ID", ""), "OAuth2 client id of the orders API (ORDERS_CLIENT_ID)")
	c.Orders.ClientSecret = Secret(env("ORDERS_CLIENT_SECRET", ""))
	fs.Var(secretFlag{&c.Orders.ClientSecret}, "orders-client-secret", "OAuth2 client secret of the orders API (ORDERS_CLIENT_SECRET)")
	fs.DurationVar(&c.Orders.TokenTTL, "orders-token-ttl", e.duration("ORDERS_TOKEN_TTL", orders.DefaultTokenTTL), "access token lifetime (ORDERS_TOKEN_TTL)")
	fs.IntVar(&c.Orders.MaxHeld, "orders-max-held", e.int("ORDERS_MAX_HELD", e.int("ORDERS_MAX_IN_PROGRESS", orders.DefaultMaxHeld)), "orders one performer may hold at once, IN PROGRESS and READY; a take beyond gets 409 too_many_in_progress (ORDERS_MAX_HELD; the deprecated ORDERS_MAX_IN_PROGRESS is read when it is unset)")
	fs.IntVar(&c.Orders.ListShare, "orders-list-share", e.int("ORDERS_LIST_SHARE", 0), "list pages one user reads at once per replica, more wait their turn; 0 is a quarter of the database pool, at least 1 (ORDERS_LIST_SHARE)")
	fs.DurationVar(&c.Orders.ListTimeout, "orders-list-timeout", e.duration("ORDERS_LIST_TIMEOUT", orders.DefaultListTimeout), "longest a list page's query may run before it is cancelled and answered 503 server_busy (ORDERS_LIST_TIMEOUT)")
	fs.DurationVar(&c.Orders.InProgressTimeout, "orders-in-progress-timeout", e.duration("ORDERS_IN_PROGRESS_TIMEOUT", 72*time.Hour), "an order IN PROGRESS untouched this long returns to WAITING (ORDERS_IN_PROGRESS_TIMEOUT)")
	fs.DurationVar(&c.Orders.ReadyTimeout, "orders-ready-timeout", e.duration("ORDERS_READY_TIMEOUT", orders.DefaultReadyTimeout), "an order READY this long without its customer's accept or reject is accepted and paid by the server (ORDERS_READY_TIMEOUT)")
	fs.DurationVar(&c.Orders.RetakeCooldown, "orders-retake-cooldown", e.duration("ORDERS_RETAKE_COOLDOWN", orders.DefaultRetakeCooldown), "how long a performer may not take again an order rejected, released or expired in its hands; such a take gets 409 retake_cooldown (ORDERS_RETAKE_COOLDOWN)")

	fs.StringVar(&c.Brands.AdminEmail, "brands-admin-email", env("BRANDS_ADMIN_EMAIL", ""), "first admin of the brands API (BRANDS_ADMIN_EMAIL)")
	c.Brands.AdminPassword = Secret(env("BRANDS_ADMIN_PASSWORD", ""))
	fs.Var(secretFlag{&c.Brands.AdminPassword}, "brands-admin-password", "password of that admin (BRANDS_ADMIN_PASSWORD)")
	fs.DurationVar(&c.Brands.TokenTTL, "brands-token-ttl", e.duration("BRANDS_TOKEN_TTL", brands.DefaultTokenTTL), "brands access token lifetime (BRANDS_TOKEN_TTL)")

	c.Auth.Secret = Secret(env("AUTH_SECRET", ""))
	fs.Var(secretFlag{&c.Auth.Secret}, "auth-secret", "JWT signing secret (AUTH_SECRET)")
	fs.StringVar(&c.Auth.URL, "auth-url", env("AUTH_URL", ""), "public base URL; empty: in dev mode the address listened on, in prod mode "+prodDefaultAuthURL+" (AUTH_URL)")
	fs.StringVar(&c.Auth.Issuer, "auth-issuer", env("AUTH_ISSUER", "triad"), "JWT issuer (AUTH_ISSUER)")
	fs.DurationVar(&c.Auth.TokenDuration, "auth-token-duration", e.duration("AUTH_TOKEN_DURATION", 5*time.Minute), "JWT lifetime (AUTH_TOKEN_DURATION)")
	fs.DurationVar(&c.Auth.CookieDuration, "auth-cookie-duration", e.duration("AUTH_COOKIE_DURATION", 24*time.Hour), "cookie lifetime (AUTH_COOKIE_DURATION)")
	fs.BoolVar(&c.Auth.SecureCookies, "auth-secure-cookies", e.bool("AUTH_SECURE_COOKIES", false), "mark cookies Secure (AUTH_SECURE_COOKIES)")
	fs.StringVar(&c.Auth.CookieDomain, "auth-cookie-domain", env("AUTH_COOKIE_DOMAIN", ""), "domain of the auth cookies, e.g. example.com so a page on app.example.com reads XSRF-TOKEN set by api.example.com; empty keeps them to AUTH_URL's host (AUTH_COOKIE_DOMAIN)")
	fs.StringVar(&c.Auth.AllowedHosts, "auth-allowed-hosts", env("AUTH_ALLOWED_HOSTS", ""), "hosts a login `from` may redirect to (AUTH_ALLOWED_HOSTS)")
	c.Auth.AvatarStore = CredURI(env("AUTH_AVATAR_STORE", ""))
	fs.Func("auth-avatar-store", "avatar store URI; empty uses the server database (AUTH_AVATAR_STORE)", func(v string) error {
		c.Auth.AvatarStore = CredURI(v)
		return nil
	})
	fs.IntVar(&c.Auth.AvatarResize, "auth-avatar-resize", e.int("AUTH_AVATAR_RESIZE", 0), "avatar resize limit in pixels, 0 keeps the size (AUTH_AVATAR_RESIZE)")
	fs.IntVar(&c.Auth.DevPort, "auth-dev-port", e.int("AUTH_DEV_PORT", 8084), "port of the dev OAuth2 server in dev mode (AUTH_DEV_PORT)")
	c.Auth.AdminPasswd = Secret(env("AUTH_ADMIN_PASSWD", ""))
	fs.Var(secretFlag{&c.Auth.AdminPasswd}, "auth-admin-passwd", "basic-auth password of user admin (AUTH_ADMIN_PASSWD)")

	c.Auth.Providers = Secret(env("AUTH_PROVIDERS", ""))
	fs.Var(secretFlag{&c.Auth.Providers}, "auth-providers", "OAuth providers as name:cid:csecret,... (AUTH_PROVIDERS)")
	fs.StringVar(&c.Auth.Audiences, "auth-audiences", env("AUTH_AUDIENCES", ""), "allowed token audiences, comma-separated; empty allows any (a confirmation e-mail's aud: only AUTH_ISSUER) (AUTH_AUDIENCES)")
	fs.StringVar(&c.Auth.SMTPHost, "auth-smtp-host", env("AUTH_SMTP_HOST", ""), "SMTP host; enables the email verified provider (AUTH_SMTP_HOST)")
	fs.IntVar(&c.Auth.SMTPPort, "auth-smtp-port", e.int("AUTH_SMTP_PORT", 587), "SMTP port (AUTH_SMTP_PORT)")
	fs.StringVar(&c.Auth.SMTPUser, "auth-smtp-user", env("AUTH_SMTP_USER", ""), "SMTP user name (AUTH_SMTP_USER)")
	c.Auth.SMTPPassword = Secret(env("AUTH_SMTP_PASSWORD", ""))
	fs.Var(secretFlag{&c.Auth.SMTPPassword}, "auth-smtp-password", "SMTP password (AUTH_SMTP_PASSWORD)")
	fs.StringVar(&c.Auth.SMTPFrom, "auth-smtp-from", env("AUTH_SMTP_FROM", ""), "sender address of confirmation e-mails (AUTH_SMTP_FROM)")
	fs.BoolVar(&c.Auth.SMTPStartTLS, "auth-smtp-starttls", e.bool("AUTH_SMTP_STARTTLS", true), "require STARTTLS (AUTH_SMTP_STARTTLS)")
	fs.IntVar(&c.Auth.ConfirmPerRecipient, "auth-confirm-per-recipient", e.int("AUTH_CONFIRM_PER_RECIPIENT", provider.DefaultSendsPerRecipient),
		"confirmation e-mails to one recipient per window, whichever clients ask (AUTH_CONFIRM_PER_RECIPIENT)")
	fs.IntVar(&c.Auth.ConfirmPerClient, "auth-confirm-per-client", e.int("AUTH_CONFIRM_PER_CLIENT", provider.DefaultSendsPerClient),
		"confirmation e-mails one client address may ask for per window (AUTH_CONFIRM_PER_CLIENT)")
	fs.DurationVar(&c.Auth.ConfirmWindow, "auth-confirm-window", e.duration("AUTH_CONFIRM_WINDOW", provider.DefaultSendWindow),
		"window of the confirmation e-mail limits (AUTH_CONFIRM_WINDOW)")
	registerProviderFlags(fs, &c.Auth.ProviderSettings)
	fs.BoolVar(&c.Auth.ProviderSettings.AllowPrivate, "auth-providers-allow-private", e.bool("AUTH_PROVIDERS_ALLOW_PRIVATE", false),
		"let provider calls reach private and loopback addresses (AUTH_PROVIDERS_ALLOW_PRIVATE)")

	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if len(e.errs) > 0 {
		return c, errors.Join(e.errs...)
	}
	return c, c.validate()
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

func (c *Config) validate() error {
	var errs []error
	if c.Auth.URL == "" {
		// Dev mode's callbacks and avatar links must reach this very server, on whatever port it was
		// started (`-addr 127.0.0.1:9090`), so there the default is the listen address. A prod server
		// sits behind names and proxies only the operator knows: it keeps the documented default.
		c.Auth.URL, c.Auth.URLFromListener = prodDefaultAuthURL, false
		if c.IsDev() {
			c.Auth.URL, c.Auth.URLFromListener = listenURL(c.Addr, nil), true
		}
	}
	switch c.Mode {
	case "dev":
		if c.Orders.ClientID == "" {
			c.Orders.ClientID = devOrdersClientID
		}
		if c.Orders.ClientSecret == "" {
			c.Orders.ClientSecret = devOrdersClientSecret
		}
		if c.Auth.Secret == "" {
			c.Auth.Secret = devAuthSecret
		}
	case "prod":
		if c.Orders.ClientID == "" {
			errs = append(errs, errors.New("prod mode needs ORDERS_CLIENT_ID"))
		}
		for _, s := range []struct {
			name     string
			v        Secret
			min      int
			required bool
		}{
			{"ORDERS_CLIENT_SECRET", c.Orders.ClientSecret, minClientSecret, true},
			{"AUTH_SECRET", c.Auth.Secret, minAuthSecret, true},
			{"BRANDS_ADMIN_PASSWORD", c.Brands.AdminPassword, minAdminPassword, false},
			{"AUTH_ADMIN_PASSWD", c.Auth.AdminPasswd, minAdminPassword, false},
		} {
			if err := checkProdSecret(s.name, s.v, s.min, s.required); err != nil {
				errs = append(errs, err)
			}
		}
		if (c.Brands.AdminEmail == "") != (c.Brands.AdminPassword == "") {
			errs = append(errs, errors.New("BRANDS_ADMIN_EMAIL and BRANDS_ADMIN_PASSWORD go together"))
		}
	case "migrate", "wait-schema": // need only the database
	default:
		errs = append(errs, fmt.Errorf("mode %q: want dev, prod, migrate or wait-schema", c.Mode))
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log level %q: want debug, info, warn or error", c.LogLevel))
	}
	if c.BodyLimit <= 0 {
		errs = append(errs, errors.New("body limit must be positive"))
	}
	// Ports and sizes outside their range would fail only later (a dev server that cannot listen,
	// an SMTP dial at the first e-mail login, a negative resize): refuse them at the start.
	if c.Auth.DevPort < 0 || c.Auth.DevPort > 65535 {
		errs = append(errs, fmt.Errorf("AUTH_DEV_PORT %d: want 0 (any free port) to 65535", c.Auth.DevPort))
	}
	if c.Auth.SMTPPort < 1 || c.Auth.SMTPPort > 65535 {
		errs = append(errs, fmt.Errorf("AUTH_SMTP_PORT %d: want 1 to 65535", c.Auth.SMTPPort))
	}
	if c.Auth.ConfirmPerRecipient < 1 || c.Auth.ConfirmPerClient < 1 || c.Auth.ConfirmWindow < time.Second {
		errs = append(errs, fmt.Errorf("AUTH_CONFIRM_PER_RECIPIENT %d, AUTH_CONFIRM_PER_CLIENT %d, AUTH_CONFIRM_WINDOW %s: want at least 1, 1 and 1s (the limits cannot be turned off)",
			c.Auth.ConfirmPerRecipient, c.Auth.ConfirmPerClient, c.Auth.ConfirmWindow))
	}
	if l := c.Logins; l.AddressMax < 1 || l.AddressInterval < time.Millisecond || l.ClientQueue < 0 || l.SignupMax < 1 || l.SignupWindow < time.Second {
		errs = append(errs, fmt.Errorf("LOGIN_ADDRESS_MAX %d, LOGIN_ADDRESS_INTERVAL %s, LOGIN_CLIENT_QUEUE %d, SIGNUP_MAX %d, SIGNUP_WINDOW %s: want at least 1, 1ms, 0, 1 and 1s (the limits cannot be turned off)",
			l.AddressMax, l.AddressInterval, l.ClientQueue, l.SignupMax, l.SignupWindow))
	}
	if c.Auth.AvatarResize < 0 || c.Auth.AvatarResize > maxAvatarResize {
		errs = append(errs, fmt.Errorf("AUTH_AVATAR_RESIZE %d: want 0 (keep the size) to %d pixels", c.Auth.AvatarResize, maxAvatarResize))
	}
	if err := checkCookieDomain(c.Auth.CookieDomain, c.Auth.URL); err != nil {
		errs = append(errs, err)
	}
	if c.DBMaxConns < 0 || c.DBMaxConns > 10000 {
		errs = append(errs, fmt.Errorf("DB_MAX_CONNS %d: want 0 (max(4, GOMAXPROCS)) to 10000", c.DBMaxConns))
	}
	if c.DrainDelay < 0 { // unset: a balancer needs a few health checks to notice; a developer's Ctrl-C does not
		c.DrainDelay = 0
		if c.Mode == "prod" {
			c.DrainDelay = defaultProdDrainDelay
		}
	}
	// -mode migrate and wait-schema use only the direct URL (docs/deploy.md's migrate command sets
	// nothing else); a server needs the pooled one beside it.
	schemaOnly := c.Mode == "migrate" || c.Mode == "wait-schema"
	if c.DatabaseURL == "" && ((c.DatabaseDirectURL != "" && !schemaOnly) || c.DatabaseReadURL != "") {
		errs = append(errs, errors.New("DATABASE_DIRECT_URL and DATABASE_READ_URL go with DATABASE_URL (without it the server manages its own PostgreSQL)"))
	}
	if c.Mode == "wait-schema" && c.DatabaseURL == "" && c.DatabaseDirectURL == "" {
		errs = append(errs, errors.New("-mode wait-schema waits for a database of its own: set DATABASE_DIRECT_URL or DATABASE_URL"))
	}
	if _, err := corsPolicy(*c); err != nil {
		errs = append(errs, err)
	}
	if _, err := web.ParseTrustedProxies(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: %w", err))
	}
	if c.Orders.TokenTTL <= 0 {
		errs = append(errs, errors.New("orders token TTL must be positive"))
	}
	if c.Orders.MaxHeld < 1 {
		errs = append(errs, errors.New("ORDERS_MAX_HELD must be at least 1"))
	}
	if c.Orders.ListShare < 0 {
		errs = append(errs, errors.New("ORDERS_LIST_SHARE must not be negative"))
	}
	if c.Orders.ListTimeout < time.Millisecond {
		errs = append(errs, errors.New("ORDERS_LIST_TIMEOUT must be at least 1ms"))
	}
	if c.Orders.InProgressTimeout < time.Second {
		errs = append(errs, errors.New("ORDERS_IN_PROGRESS_TIMEOUT must be at least 1s"))
	}
	if c.Orders.ReadyTimeout < time.Second {
		errs = append(errs, errors.New("ORDERS_READY_TIMEOUT must be at least 1s"))
	}
	if c.Orders.RetakeCooldown < time.Second {
		errs = append(errs, errors.New("ORDERS_RETAKE_COOLDOWN must be at least 1s"))
	}
	if c.Brands.TokenTTL <= 0 {
		errs = append(errs, errors.New("brands token TTL must be positive"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"SHUTDOWN_TIMEOUT", c.ShutdownTimeout}, {"AUTH_TOKEN_DURATION", c.Auth.TokenDuration}, {"AUTH_COOKIE_DURATION", c.Auth.CookieDuration}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", d.name))
		}
	}
	return errors.Join(errs...)
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
