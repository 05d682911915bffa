package main

import (
	"strings"
	"time"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/web"
	authhttp "github.com/triadhq/triad/impl/surfaces/auth/httpapi"
	brandshttp "github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	"github.com/triadhq/triad/impl/surfaces/orders/archive"
	ordershttp "github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// settings is the settings table: every setting of the server, once, bound to its field of c.
// The flags, the environment, -h and docs/configuration.md's table (TestConfigDocs_AreTheTable)
// are made from it; what a row cannot say alone (a rule over several settings) is in
// Config.crossChecks. Adding a setting is adding a field and a row. The defaults of the shared
// login machinery and of each surface are theirs (kit.DefaultLogins, each mount package's
// DefaultSettings).
func settings(c *Config) []*setting {
	positive := atLeast[time.Duration](1)
	logins, orders, brands, auth := kit.DefaultLogins(), ordershttp.DefaultSettings(), brandshttp.DefaultSettings(), authhttp.DefaultSettings()
	rows := []*setting{
		set("addr", "ADDR", &c.Addr, ":8080", "listen address"),
		set("metrics-addr", "METRICS_ADDR", &c.MetricsAddr, "", "listen address of /metrics on a port of its own (not the API's); empty serves /metrics on ADDR").
			docs("listen address of `GET /metrics` on a port of its own, which then is not served on `ADDR`: the Kubernetes Service and the balancer expose the API port only, the scraper reaches each pod on this one (`deploy/k8s`: `:9090`). Empty serves `/metrics` on `ADDR`"),
		set("mode", "MODE", &c.Mode, "dev", "run mode: dev (prepared data, demo logins), prod, migrate (apply the migrations and exit), wait-schema (wait until the database has every migration of this binary, then exit), or archive (move the orders ledger's months older than ARCHIVE_HORIZON, and the orders finished in them, to files in ARCHIVE_DIR, or put ARCHIVE_RESTORE back, then exit)",
			oneOf("dev", "prod", "migrate", "wait-schema", "archive")).
			docs("`dev` (prepared data, demo logins, dev OAuth2 server), `prod`, `migrate`: apply the migrations through `DATABASE_DIRECT_URL` (grant `DB_APP_ROLE` the rows when set) and exit, for a Kubernetes Job or a deploy step ([deploy](deploy.md#migrations-and-database-roles)), or `wait-schema`: wait until the database (through `DATABASE_DIRECT_URL`, else `DATABASE_URL`) has every migration of this binary, logging how many are missing every 2 s, then exit 0, for a pod's init step; both need no secret, and `DATABASE_DIRECT_URL` alone is enough for them; or `archive`: retention of the orders, run from cron: each month of the ledger that ended more than `ARCHIVE_HORIZON` ago, with the orders finished before its end, to checksummed files under `ARCHIVE_DIR`, its money kept provable by an opening row per account, then detached and dropped; with `ARCHIVE_RESTORE`, that month put back instead ([scaling](scaling.md#retention-by-archive))"),
		set("database-url", "DATABASE_URL", &c.DatabaseURL, "", "PostgreSQL URL, or a transaction-mode pooler's; empty starts a managed cluster").
			docs("PostgreSQL URL, or a transaction-mode pooler's (PgBouncer, RDS Proxy): every query goes here; empty starts a managed cluster under `<data-dir>/pg`"),
		set("database-direct-url", "DATABASE_DIRECT_URL", &c.DatabaseDirectURL, "", "PostgreSQL URL without a pooler, for LISTEN, advisory locks and migrations; empty uses DATABASE_URL").
			defaultDoc("`DATABASE_URL`").
			docs("a connection straight to PostgreSQL (the primary) for what needs a session: the token revocation listener (`LISTEN`), the Telegram poller's advisory lock, migrations. Set and different from `DATABASE_URL`, it also tells the server that `DATABASE_URL` is a pooler: the pool then sends statements unnamed (pgx's `cache_describe` mode) unless the URL sets `default_query_exec_mode`. See [replicas](replicas.md#behind-a-pooler-with-read-replicas)"),
		set("database-read-url", "DATABASE_READ_URL", &c.DatabaseReadURL, "", "PostgreSQL hot standby URL for lists, the brand catalog and avatars; empty reads from DATABASE_URL").
			defaultDoc("`DATABASE_URL`").
			docs("a hot standby for the reads that tolerate its lag (lists, the brand catalog, avatars); the server creates nothing there. See [replicas](replicas.md#behind-a-pooler-with-read-replicas)"),
		set("db-app-role", "DB_APP_ROLE", &c.DBAppRole, "", "role that -mode migrate grants reading and writing the rows of every table").
			docs("with `-mode migrate`: the role the servers run as, granted reading and writing the rows of every table and nothing else ([deploy](deploy.md#migrations-and-database-roles))"),
		set("archive-dir", "ARCHIVE_DIR", &c.Archive.Dir, "", "with -mode archive: the folder each archived month's files go to (a folder per month)").
			docs("with `-mode archive`: the folder each archived month goes to, one folder per month (`order_ledger_p2026_01/`: the COPY files of its ledger rows, of the orders finished before its end and of their cool-downs, and `manifest.json` with each file's SHA-256 and row count, the month's sums by kind and the opening rows left in its place); keep it in cold storage"),
		set("archive-horizon", "ARCHIVE_HORIZON", &c.Archive.Horizon, archive.DefaultHorizon, "with -mode archive: a month of the orders ledger whose end is older than this is archived", atLeast[time.Duration](24*time.Hour)).
			docs("with `-mode archive`: how old a month's end must be for the month to be archived (at least `24h`; open orders are never archived, whatever their age)"),
		set("archive-restore", "ARCHIVE_RESTORE", &c.Archive.Restore, "", "with -mode archive: the folder of an archived month to put back instead of archiving").
			docs("with `-mode archive`: the folder of one archived month to put back (after checking every file's SHA-256) instead of archiving; months go back newest first"),
		set("data-dir", "DATA_DIR", &c.DataDir, "./var", "folder for the managed database and file stores").
			docs("managed database and file stores"),
		set("db-max-conns", "DB_MAX_CONNS", &c.DBMaxConns, 0, "database pool size (each pool: DATABASE_URL's, DATABASE_READ_URL's); 0 uses the URL's pool_max_conns, else max(4, GOMAXPROCS)",
			within(0, 10000, "want 0 (max(4, GOMAXPROCS)) to 10000")).
			docs("each database pool's size per server (the `DATABASE_URL` pool's, and the `DATABASE_READ_URL` pool's when set); 0 takes `pool_max_conns` from the URL, else max(4, GOMAXPROCS), GOMAXPROCS following the container's CPU limit (not the node's cores; see [scaling](scaling.md#the-connection-budget)). The default holds up under `make flood`: logins take their hashing place before any database work, so a flood cannot queue more logins for connections than the hashers have places (see [operations](operations.md#login-flood-load-run) for the figures: a real user's median login of 0.70 s and 3.8 s in two runs on a loaded 2-core machine, 9.5 s before that change, when the flood's logins queued for the four connections); replicas × (this + one per Telegram bot + one listening for token revocations + one during start-up, those three on `DATABASE_DIRECT_URL`) must stay below PostgreSQL's `max_connections` (the managed cluster allows 200; see [replicas](replicas.md#connections))"),
		set("log-level", "LOG_LEVEL", &c.LogLevel, "info", "debug, info, warn or error", oneOf("debug", "info", "warn", "error")).
			docs("prod logs one access-log line per request at `info`, dev at `debug` (so dev's terminal stays quiet unless asked); logs are text in dev, JSON in prod"),
		set("body-limit", "BODY_LIMIT", &c.BodyLimit, 1<<20, "request body cap in bytes", atLeast[int64](1)).
			docs("request body cap in bytes (413 above)"),
		set("cors-origins", "CORS_ORIGINS", &c.CORSOrigins, "", "browser origins allowed cross-origin, comma-separated exact origins or * (no credentials); dev mode adds local dev servers").
			docs("browser origins allowed to call the API from another origin: comma-separated exact origins (`https://app.example.com`), with credentials (auth's cookies); or `*`, any origin without credentials. Empty allows none; dev mode adds `http://localhost` and `http://127.0.0.1` on ports 3000, 4200, 5173 and 8081 (and, in dev mode only, takes them as a login's `from` too: see `AUTH_ALLOWED_HOSTS`). See [specs](specs.md)"),
		set("trusted-proxies", "TRUSTED_PROXIES", &c.TrustedProxies, "", "addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For names the client, comma-separated; empty trusts none",
			parsed(func(v string) error { _, err := web.ParseTrustedProxies(v); return err })).
			docs("reverse proxies (addresses or CIDR prefixes, comma-separated: `10.244.3.0/24,127.0.0.1`; only the proxies themselves, never a whole private range, or anyone inside it names its own address) whose `X-Forwarded-For` names the client: for a connection from one of them the client address is the right-most entry that is not itself a trusted proxy; the access log (`client`) and the login throttle (per account and address, and per address) use it. Empty trusts none, so a caller cannot forge its address; behind a load balancer or ingress that connects from its own address, set it (and have the proxy send `X-Forwarded-For`), or every client shares the proxy's address and its login limits. A malformed entry stops the start"),
		// -1: unset, so crossChecks can give prod and dev their own default.
		set("drain-delay", "DRAIN_DELAY", &c.DrainDelay, -1, "on SIGTERM, how long to keep serving with /readyz 503 and Connection: close before the listener closes; default 5s in prod, 0 in dev").
			defaultDoc("prod `5s`, dev `0`").
			docs("on SIGINT/SIGTERM, how long the server keeps serving with `/readyz` at 503 and `Connection: close` on every response before it closes its listener, so the balancer takes it out first ([operations](operations.md))"),

		set("login-address-max", "LOGIN_ADDRESS_MAX", &c.Logins.AddressMax, logins.AddressMax,
			"failed logins from one client address per 15 minutes, over all accounts, before its checks are slowed", atLeast(1)).
			devLimit(&c.Logins.AddressMax, devAddressMax).
			docs("wrong passwords one client address may have in 15 minutes over any accounts (orders and brands logins, the auth surface's direct login and basic auth) before its logins are slowed; shared by replicas. The address is never locked out by it (see `LOGIN_ADDRESS_INTERVAL`); one account from one address is still refused after 10"),
		set("login-account-max", "LOGIN_ACCOUNT_MAX", &c.Logins.AccountMax, logins.AccountMax,
			"failed logins at one account per 15 minutes, over all client addresses, before it is refused to every client but the devices that signed in to it before", atLeast(1)).
			docs("wrong passwords one account may have in 15 minutes over all client addresses (a botnet, or addresses forged through a trusted proxy; orders and brands logins, the auth surface's direct login and basic auth); networks the account never signed in from share four fifths of it (40), and past that every login to the account from them is 429 `too_many_attempts` without a check until the window ends; the last fifth (10) is kept for the networks it signed in from in the last 30 days, so its owner on a new client at home still gets in, and the account's checks stay at most this many in all. The account's own devices are counted apart: a client that signed in to it before keeps a signed device cookie (`orders_device`, `brands_device`, `AUTH-DEVICE`, keyed by `AUTH_SECRET`) and is counted under that device alone (10 wrong passwords per 15 minutes), so others' guesses never lock it out ([operations](operations.md#what-an-operator-sees-of-each-abuse))"),
		set("login-address-interval", "LOGIN_ADDRESS_INTERVAL", &c.Logins.AddressInterval, logins.AddressInterval,
			"spacing of the password checks of a client address past LOGIN_ADDRESS_MAX", atLeast(time.Millisecond)).
			docs("past `LOGIN_ADDRESS_MAX`, the address's password checks are scheduled this far apart (at most 15m / interval more per window: 450 at 2s), so a real user behind the address still gets in after a short wait; a login that would wait more than three intervals gets 429 with a `Retry-After` of a few seconds (at least `1ms`)"),
		set("login-client-queue", "LOGIN_CLIENT_QUEUE", &c.Logins.ClientQueue, logins.ClientQueue,
			"password hashes of one client address that may wait for its share of the hasher before it gets 429", atLeast(0)).
			docs("password hashes (logins, registrations, password changes) of one client address that wait for its share of the hasher (a fifth of its places) beyond those it holds: people arriving together behind one NAT address are served in turn; beyond it the address gets 429 `too_many_requests` (token endpoint: `temporarily_unavailable`) with `Retry-After: 1`. 0 refuses at once whatever is over the share"),
		set("signup-max", "SIGNUP_MAX", &c.Logins.SignupMax, logins.SignupMax,
			"registrations from one client address per SIGNUP_WINDOW, on orders and on brands each", atLeast(1)).
			devLimit(&c.Logins.SignupMax, devSignupMax).
			docs("registrations from one client address per `SIGNUP_WINDOW`, on orders (`POST /users`) and brands (`/api/user/register`) each; past it 429 `too_many_signups` with `Retry-After`; only accounts really created count; shared by replicas (at least 1)"),
		set("signup-window", "SIGNUP_WINDOW", &c.Logins.SignupWindow, logins.SignupWindow, "window of SIGNUP_MAX", atLeast(time.Second)).
			docs("the window of `SIGNUP_MAX`, from the address's first registration (at least `1s`)"),
		set("shutdown-timeout", "SHUTDOWN_TIMEOUT", &c.ShutdownTimeout, 20*time.Second, "grace period for in-flight requests", positive).
			docs("grace period for in-flight requests on SIGINT/SIGTERM, after the drain delay"),
		envOnly("GOGC", "`400`", "Go's garbage-collector target; when unset the server uses 400 instead of Go's 100 (its few MB of parsed specs would otherwise be re-marked every few MB of request garbage: about 15% of throughput under load)"),
		envOnly("GOMEMLIMIT", "80% of the container's cgroup memory limit (cgroup v2 or v1), else `200MiB`", "Go's soft memory limit: near it the collector works harder instead of letting the heap (password hashes hold 19 MiB each) grow until the kernel kills the process; an operator's value always wins, `off` disables it; the start-up log shows the limit in use (`gomemlimit_mib`)"),

		set("orders-client-id", "ORDERS_CLIENT_ID", &c.Orders.ClientID, "", "OAuth2 client id of the orders API").
			devDefault(func() { c.Orders.ClientID = devOrdersClientID }).prodNeeds().
			defaultDoc("dev: `" + devOrdersClientID + "`").docs("OAuth2 client id of the orders API (required in prod)"),
		set("orders-client-secret", "ORDERS_CLIENT_SECRET", &c.Orders.ClientSecret, "", "OAuth2 client secret of the orders API").
			devDefault(func() { c.Orders.ClientSecret = devOrdersClientSecret }).prodSecret(&c.Orders.ClientSecret, minClientSecret, true).
			defaultDoc("dev: `" + devOrdersClientSecret + "`").docs("its secret (required in prod)"),
		set("orders-token-ttl", "ORDERS_TOKEN_TTL", &c.Orders.TokenTTL, orders.TokenTTL, "access token lifetime", positive).
			docs("orders access-token lifetime"),
		set("orders-max-held", "ORDERS_MAX_HELD", &c.Orders.Limits.MaxHeld, orders.Limits.MaxHeld,
			"orders one performer may hold at once, IN PROGRESS and READY; a take beyond gets 409 too_many_in_progress; the deprecated ORDERS_MAX_IN_PROGRESS is read when it is unset", atLeast(1)).
			formerly("ORDERS_MAX_IN_PROGRESS").
			docs("orders one performer may hold at once, IN PROGRESS and READY together; a take beyond gets 409 `too_many_in_progress` (at least 1). Formerly `ORDERS_MAX_IN_PROGRESS` (`-orders-max-in-progress`), which counted IN PROGRESS only: that variable is still read when `ORDERS_MAX_HELD` is unset (deprecated); the old flag is gone"),
		set("orders-list-share", "ORDERS_LIST_SHARE", &c.Orders.Limits.ListShare, 0,
			"list pages one user reads at once per replica, more wait their turn; 0 is a quarter of the database pool, at least 1", atLeast(0)).
			docs("list pages (`GET /orders`, `GET /users/{id}/orders`) one user reads at once on each replica while others read; more wait for one of that user's places, never another user's (a lone user's pages starting at most 100 rows in go beyond it while the pool has more than one connection free); `0` is a quarter of the database pool (`DB_MAX_CONNS` or pgx's default), at least 1"),
		set("orders-write-share", "ORDERS_WRITE_SHARE", &c.Orders.Limits.WriteShare, 0,
			"writes and own-account reads one user runs at once per replica, up to 16 times as many more wait, the rest get 429; 0 is a quarter of the database pool, at least 1", atLeast(0)).
			docs("writes (`POST /orders` and every `PATCH /orders/{id}/…`) and `GET /authenticated` one user runs at once on each replica; up to sixteen times as many more wait for one of that user's places, and past that a request that finds no place free within a second is answered 429 `too_many_requests` with `Retry-After: 1` before any database work, so one user on many connections leaves the pool to others (and, held that second, its refusals cost little CPU); `0` is a quarter of the database pool (`DB_MAX_CONNS` or pgx's default), at least 1"),
		set("orders-list-timeout", "ORDERS_LIST_TIMEOUT", &c.Orders.Limits.ListTimeout, orders.Limits.ListTimeout,
			"longest a list page's query may run before it is cancelled and answered 503 server_busy", atLeast(time.Millisecond)).
			docs("the `statement_timeout` of each list page's query; a page past it is cancelled and answered 503 `server_busy` with `Retry-After: 1`"),
		set("orders-in-progress-timeout", "ORDERS_IN_PROGRESS_TIMEOUT", &c.Orders.InProgressTimeout, orders.InProgressTimeout,
			"an order IN PROGRESS untouched this long returns to WAITING", atLeast(time.Second)).
			docs("an order left IN PROGRESS this long without a move (take or any later change) returns to WAITING; every replica sweeps for such orders every quarter of this, at least once a minute (at least `1s`)"),
		set("orders-ready-timeout", "ORDERS_READY_TIMEOUT", &c.Orders.ReadyTimeout, orders.ReadyTimeout,
			"an order READY this long without its customer's accept or reject is accepted and paid by the server", atLeast(time.Second)).
			docs("an order left READY this long without its customer's accept or reject is accepted and paid by the server, as its customer would (14 days; see [orders](orders.md)); every replica sweeps every quarter of this, at least once a minute (at least `1s`)"),
		set("orders-retake-cooldown", "ORDERS_RETAKE_COOLDOWN", &c.Orders.Limits.RetakeCooldown, orders.Limits.RetakeCooldown,
			"how long a performer may not take again an order rejected, released or expired in its hands; such a take gets 409 retake_cooldown", atLeast(time.Second)).
			docs("how long a performer may not take again an order that was rejected, released or expired in its hands; such a take gets 409 `retake_cooldown` (at least `1s`)"),

		set("brands-admin-email", "BRANDS_ADMIN_EMAIL", &c.Brands.AdminEmail, "", "first admin of the brands API").
			docs("makes sure this brands admin exists at start (prod's first admin; see [Brands API](brands.md))"),
		set("brands-admin-password", "BRANDS_ADMIN_PASSWORD", &c.Brands.AdminPassword, "", "password of that admin").
			prodSecret(&c.Brands.AdminPassword, minAdminPassword, false).docs("that admin's password"),
		set("brands-token-ttl", "BRANDS_TOKEN_TTL", &c.Brands.TokenTTL, brands.TokenTTL, "brands access token lifetime", positive).
			docs("brands access-token lifetime (30 days)"),

		set("auth-secret", "AUTH_SECRET", &c.Auth.Secret, "", "JWT signing secret").
			devDefault(func() { c.Auth.Secret = devAuthSecret }).prodSecret(&c.Auth.Secret, minAuthSecret, true).
			defaultDoc("dev: a fixed dev secret").docs("JWT signing secret, at least 32 characters (required in prod)"),
		set("auth-url", "AUTH_URL", &c.Auth.URL, "", "public base URL; empty: in dev mode the address listened on, in prod mode "+prodDefaultAuthURL).
			defaultDoc("dev: the address listened on; prod: `" + prodDefaultAuthURL + "`").
			docs("public base URL (callbacks, avatar links). Dev mode without it uses the address it listens on, so `-mode dev -addr 127.0.0.1:9090` sends OAuth callbacks and avatar links to `http://127.0.0.1:9090` (an address of every interface, `:9090` or `0.0.0.0:9090`, becomes `localhost`; port 0 becomes the port picked; the log says `AUTH_URL not set: dev mode uses the address it listens on auth_url=...`). Set it whenever clients reach the server by another name (a proxy, a balancer: `make run-replicas` does)"),
		set("auth-issuer", "AUTH_ISSUER", &c.Auth.Issuer, "triad", "JWT issuer").docs("JWT `iss`"),
		set("auth-token-duration", "AUTH_TOKEN_DURATION", &c.Auth.TokenDuration, 5*time.Minute, "JWT lifetime", positive).
			docs("JWT lifetime in the reference wiring"),
		set("auth-cookie-duration", "AUTH_COOKIE_DURATION", &c.Auth.CookieDuration, 24*time.Hour, "cookie lifetime", positive).
			docs("cookie lifetime; after it a new login is needed"),
		set("auth-secure-cookies", "AUTH_SECURE_COOKIES", &c.Auth.SecureCookies, false, "mark cookies Secure").
			docs("mark cookies `Secure` (always on when `AUTH_URL` is `https://`)"),
		set("auth-cookie-domain", "AUTH_COOKIE_DOMAIN", &c.Auth.CookieDomain, "", "domain of the auth cookies, e.g. example.com so a page on app.example.com reads XSRF-TOKEN set by api.example.com; empty keeps them to AUTH_URL's host").
			docs("`Domain` of the `JWT` and `XSRF-TOKEN` cookies, e.g. `example.com` so a single-page app on `app.example.com` can read `XSRF-TOKEN` set by `api.example.com` (see [auth](auth.md)); empty keeps them to `AUTH_URL`'s host. It must be that host or a parent of it, else the start stops (browsers would drop the cookies)"),
		setList("auth-allowed-hosts", "AUTH_ALLOWED_HOSTS", &c.Auth.AllowedHosts, "hosts a login `from` may redirect to").
			docs("extra origins a login's `from` may redirect to, comma-separated: `https://host:port` (exactly), `host:port` (http or https), bare `host` (ports 80/443 only); `AUTH_URL`'s own origin is always allowed, exactly; dev mode also allows the local dev-server origins CORS admits there (`http://localhost` and `http://127.0.0.1` on ports 3000, 4200, 5173, 8081), prod mode nothing unlisted"),
		set("auth-avatar-store", "AUTH_AVATAR_STORE", &c.Auth.AvatarStore, "", "avatar store URI; empty uses the server database").
			defaultDoc("the server database (table `avatars`)").docs("avatar store URI: path, `file://`, `bolt://`, `mongodb://`, `postgres://`"),
		set("auth-avatar-resize", "AUTH_AVATAR_RESIZE", &c.Auth.AvatarResize, 0, "avatar resize limit in pixels, 0 keeps the size",
			within(0, maxAvatarResize, "want 0 (keep the size) to 4096 pixels")).
			docs("avatar resize limit in pixels, at most 4096; 0 keeps the size"),
		set("auth-dev-port", "AUTH_DEV_PORT", &c.Auth.DevPort, 8084, "port of the dev OAuth2 server in dev mode",
			within(0, 65535, "want 0 (any free port) to 65535")).
			docs("port of the dev OAuth2 server (dev mode only); 0 picks a free one"),
		set("auth-admin-passwd", "AUTH_ADMIN_PASSWD", &c.Auth.AdminPasswd, "", "basic-auth password of user admin").
			prodSecret(&c.Auth.AdminPasswd, minAdminPassword, false).docs("enables basic auth for user `admin`"),
		setList("auth-providers", "AUTH_PROVIDERS", &c.Auth.Builtins, "OAuth providers as name:cid:csecret,...").
			docs("built-in OAuth providers as `name:cid:csecret,...` (`dev` is refused in prod)"),
		setList("auth-audiences", "AUTH_AUDIENCES", &c.Auth.Audiences, "allowed token audiences, comma-separated; empty allows any (a confirmation e-mail's aud: only AUTH_ISSUER)").
			docs("allowed token audiences (`aud`/`site`), comma-separated; empty allows any, except in a confirmation e-mail's `aud`, which is then only the issuer (`AUTH_ISSUER`), since it is mailed to the recipient"),
		set("auth-smtp-host", "AUTH_SMTP_HOST", &c.Auth.SMTP.Host, "", "SMTP host; enables the email verified provider").
			family("`-auth-smtp-host`, `-auth-smtp-port`", "`AUTH_SMTP_HOST`, `AUTH_SMTP_PORT`", "empty, `587`", "SMTP server; a host enables the verified provider `email`"),
		set("auth-smtp-port", "AUTH_SMTP_PORT", &c.Auth.SMTP.Port, 587, "SMTP port", within(1, 65535, "want 1 to 65535")).member(),
		set("auth-smtp-user", "AUTH_SMTP_USER", &c.Auth.SMTP.User, "", "SMTP user name").
			family("`-auth-smtp-user`, `-auth-smtp-password`", "`AUTH_SMTP_USER`, `AUTH_SMTP_PASSWORD`", "empty", "SMTP PLAIN credentials"),
		set("auth-smtp-password", "AUTH_SMTP_PASSWORD", &c.Auth.SMTP.Password, "", "SMTP password").member(),
		set("auth-smtp-from", "AUTH_SMTP_FROM", &c.Auth.SMTP.From, "", "sender address of confirmation e-mails").
			docs("sender of confirmation e-mails (required with a host)"),
		set("auth-smtp-starttls", "AUTH_SMTP_STARTTLS", &c.Auth.SMTP.StartTLS, true, "require STARTTLS").
			docs("require STARTTLS before authenticating"),
		set("auth-confirm-per-recipient", "AUTH_CONFIRM_PER_RECIPIENT", &c.Auth.ConfirmPerRecipient, auth.ConfirmPerRecipient,
			"confirmation e-mails to one recipient per window, whichever clients ask", atLeast(1)).
			devLimit(&c.Auth.ConfirmPerRecipient, devConfirmPerRecipient).
			docs("confirmation e-mails one recipient gets per window, whichever clients ask (shared by replicas through PostgreSQL); past it 429 `too_many_confirmations`"),
		set("auth-confirm-per-client", "AUTH_CONFIRM_PER_CLIENT", &c.Auth.ConfirmPerClient, auth.ConfirmPerClient,
			"confirmation e-mails one client address may ask for per window", atLeast(1)).
			devLimit(&c.Auth.ConfirmPerClient, devConfirmPerClient).
			docs("confirmation e-mails one client address (IPv6: its /64) may ask for per window, over any recipients"),
		set("auth-confirm-window", "AUTH_CONFIRM_WINDOW", &c.Auth.ConfirmWindow, auth.ConfirmWindow,
			"window of the confirmation e-mail limits", atLeast(time.Second)).
			docs("the window of both confirmation limits (at least `1s`; neither limit can be turned off)"),
	}
	return append(rows, providerSettings(&c.Auth.Providers)...)
}

// providerSettings are the rows of the login providers enabled one by one.
func providerSettings(c *authhttp.Providers) []*setting {
	c.Clients = map[string]*authhttp.OAuthClient{}
	var rows []*setting
	for i, name := range authhttp.OAuthBuiltins {
		up := strings.ToUpper(name)
		cl := &authhttp.OAuthClient{}
		c.Clients[name] = cl
		id := set("auth-"+name+"-cid", "AUTH_"+up+"_CID", &cl.ID, "", name+" OAuth client id").member()
		if i == 0 {
			names := make([]string, len(authhttp.OAuthBuiltins))
			for j, n := range authhttp.OAuthBuiltins {
				names[j] = "`" + strings.ToUpper(n) + "`"
			}
			id.hidden = false
			id.family("`-auth-<name>-cid`, `-auth-<name>-csecret`", "`AUTH_<NAME>_CID`, `AUTH_<NAME>_CSECRET`", "empty",
				"client id and secret of a built-in OAuth provider: "+strings.Join(names, ", ")+" (consumer key and secret); both or neither")
		}
		rows = append(rows, id, set("auth-"+name+"-csecret", "AUTH_"+up+"_CSECRET", &cl.Secret, "", name+" OAuth client secret").member())
	}
	return append(rows,
		set("auth-microsoft-tenant", "AUTH_MICROSOFT_TENANT", &c.MicrosoftTenant, "common", "Microsoft tenant").
			docs("Microsoft tenant: `common`, `organizations`, `consumers` or a tenant id"),
		set("auth-apple-client-id", "AUTH_APPLE_CLIENT_ID", &c.AppleClientID, "", "Sign in with Apple services id").
			family("`-auth-apple-client-id`, `-auth-apple-team-id`, `-auth-apple-key-id`", "`AUTH_APPLE_CLIENT_ID`, `AUTH_APPLE_TEAM_ID`, `AUTH_APPLE_KEY_ID`", "empty",
				"Sign in with Apple: services id, team id, key id (all three enable it)"),
		set("auth-apple-team-id", "AUTH_APPLE_TEAM_ID", &c.AppleTeamID, "", "Apple developer team id").member(),
		set("auth-apple-key-id", "AUTH_APPLE_KEY_ID", &c.AppleKeyID, "", "Apple private key id").member(),
		set("auth-apple-key-file", "AUTH_APPLE_KEY_FILE", &c.AppleKeyFile, "", "path of the Apple .p8 private key").
			family("`-auth-apple-key-file` / `-auth-apple-key`", "`AUTH_APPLE_KEY_FILE` / `AUTH_APPLE_KEY`", "empty",
				"the `.p8` private key as a path, or its PEM text; a key that does not load stops the start"),
		set("auth-apple-key", "AUTH_APPLE_KEY", &c.AppleKey, "", "PEM text of the Apple private key, instead of a file").member(),
		set("auth-apple-response-mode", "AUTH_APPLE_RESPONSE_MODE", &c.AppleResponseMode, "form_post", "form_post or query").
			docs("`form_post` (needed for the name) or `query`"),
		set("auth-telegram-token", "AUTH_TELEGRAM_TOKEN", &c.TelegramToken, "", "Telegram bot token; enables the telegram provider").
			docs("Telegram bot token; enables the `telegram` provider (checked with `getMe` at start)"),
		set("auth-telegram-api-url", "AUTH_TELEGRAM_API_URL", &c.TelegramAPIURL, "", "Bot API base URL, default https://api.telegram.org").
			defaultDoc("`https://api.telegram.org`").docs("Bot API base URL (a local Bot API server)"),
		set("auth-custom-providers", "AUTH_CUSTOM_PROVIDERS", &c.Custom, "", "JSON array of custom OAuth2 providers").
			docs("JSON array of custom OAuth 2.0 providers, see [auth providers](auth.md#auth-providers)"),
		set("auth-providers-allow-private", "AUTH_PROVIDERS_ALLOW_PRIVATE", &c.AllowPrivate, false, "let provider calls reach private and loopback addresses").
			docs("let the providers' server-to-server calls (tokens, user info, keys, Bot API) reach private and loopback addresses, for an identity provider or a local Bot API server inside the network; off, they are refused like the avatar proxy's"),
	)
}
