package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/platform/migrate"
	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/testkit/apitest"
)

// TestMount_CodesOfTheServer triggers the three ApiError codes of api/auth.yaml that the auth
// library does not answer itself but the server's mount around it does (impl/surfaces/auth's
// TestErrorCodes_EveryEnumCodeIsSent triggers the others and names these): validation_failed from
// the spec validator, not_confirmed from the messenger
// provider the server configures, database_unavailable when its PostgreSQL is gone.
func TestMount_CodesOfTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, filepath.Join(t.TempDir(), "pg"), pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	if err := cluster.EnsureDatabase(ctx, "triad"); err != nil {
		t.Fatal(err)
	}
	tg := providertest.NewTelegram(t, "4242:bot-secret-token", "triad_login_bot")
	// A cluster of its own, with triad's migrations: the test stops it.
	cc, err := pgx.ParseConfig(cluster.URL("triad"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Ensure(ctx, cc); err != nil {
		t.Fatal(err)
	}
	base := serve(t, cluster.URL("triad"), true, Settings{Providers: Providers{
		TelegramToken: "4242:bot-secret-token", TelegramAPIURL: tg.URL(), AllowPrivate: true}})
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	validating := apitest.Client(t, spec)
	call := func(c *http.Client, method, path, ctype, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Code, Message string }
		_ = json.Unmarshal(b, &e)
		// A code every surface shares carries its one message here too.
		if want, shared := web.OneMessage(e.Code); shared && e.Message != want {
			t.Errorf("%s %s: %s with message %q, want %q", method, path, e.Code, e.Message, want)
		}
		return resp.StatusCode, e.Code
	}
	want := func(code string, wantStatus int, status int, got string) {
		t.Helper()
		if status != wantStatus || got != code {
			t.Errorf("%s: got %d %q, want %d", code, status, got, wantStatus)
		}
	}

	st, code := call(validating, "POST", "/auth/local/login", "application/json", `{"user":"demo"}`)
	want("validation_failed", http.StatusBadRequest, st, code)

	// A method the spec does not have for the path: no operation to validate the answer against.
	// The auth routes answer a method they do not have with 404 not_found (its routers match
	// method and path together), never 405, so its enum does not list method_not_allowed: if
	// this changes, the enum must list it again.
	st, code = call(http.DefaultClient, "DELETE", "/auth/list", "", "")
	want("not_found", http.StatusNotFound, st, code)

	var start struct{ Token string }
	req, _ := http.NewRequest("GET", base+"/auth/telegram/login", nil)
	resp, err := validating.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&start)
	resp.Body.Close()
	if err != nil || start.Token == "" {
		t.Fatalf("messenger login start: %v %+v", err, start)
	}
	st, code = call(validating, "GET", "/auth/telegram/login?token="+start.Token, "", "")
	want("not_confirmed", http.StatusNotFound, st, code)

	// Avatars live in the server's database.
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	st, code = call(validating, "GET", "/avatar/0000000000000000000000000000000000000000.image", "", "")
	want("database_unavailable", http.StatusServiceUnavailable, st, code)
}
