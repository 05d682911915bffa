package main

import (
	"context"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net/http"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// diskFullSQL makes every insert into the tables a write route of each surface writes fail the way
// PostgreSQL fails on a full disk: a real error from the server with SQLSTATE 53100 (disk_full)
// and its message, raised by a trigger. (Filling a real disk needs a small filesystem to mount,
// which takes root; the server, the driver and the error path see the same thing either way.)
const diskFullSQL = `
CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'could not extend file "base/16384/16385": No space left on device'
		USING ERRCODE = '53100', HINT = 'Check free disk space.';
END $$;
CREATE TRIGGER disk_full BEFORE INSERT ON orders FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full();
CREATE TRIGGER disk_full BEFORE INSERT ON brand_users FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full();
CREATE TRIGGER disk_full BEFORE INSERT ON auth_used_ids FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full();
`

// A full disk (SQLSTATE class 53) on every surface: orders, brands and auth writes answer 503
// database_unavailable with Retry-After (never 500 internal_error), the log holds the outage's
// rate-limited line (not an ERROR line per request), and /readyz says not ready although the
// database still answers its ping.
func TestBinary_DiskFullAnswers503AndNotReady(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t, smtptest.Options{})
	dbURL := dbtest.NewURL(t)
	s := startBinary(t, "-mode", "dev", "-database-url", dbURL, "-auth-dev-port", "0", "-log-level", "info",
		"-auth-smtp-host", mail.Host, "-auth-smtp-port", strconv.Itoa(mail.Port), "-auth-smtp-starttls=false",
		"-auth-smtp-from", "triad <noreply@example.com>")
	waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })

	// Before the disk fills: an orders token, and a confirmation e-mail whose token is used later.
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	resp, err := http.PostForm(s.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID},
		"client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("orders login: %d", resp.StatusCode)
	}
	if code, _, body := get(t, s.base+"/auth/email/login?user=alice&address=alice@example.com"); code != http.StatusOK {
		t.Fatalf("confirmation e-mail: %d %s", code, body)
	}
	confirmation := confirmationToken(t, mail)

	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), diskFullSQL); err != nil {
		t.Fatal(err)
	}

	do := func(name, method, path, ctype, body, bearer string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Code string }
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusServiceUnavailable || e.Code != "database_unavailable" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s on a full disk: %d Retry-After=%q %s, want 503 database_unavailable with Retry-After",
				name, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	const requests = 60
	for i := range requests {
		do("orders: create", "POST", "/orders", "application/json", `{"description":"paint the fence","price":"10.00"}`, tok.AccessToken)
		if i < 3 { // each hashes a password first
			do("brands: register", "POST", "/api/user/register", "application/x-www-form-urlencoded",
				url.Values{"name": {"Kate"}, "email": {"kate" + strconv.Itoa(i) + "@example.com"}, "password": {"kate-password-1"}}.Encode(), "")
		}
	}
	do("auth: confirm", "GET", "/auth/email/login?token="+confirmation, "", "", "")

	code, _, body := get(t, s.base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"unavailable"`) {
		t.Fatalf("readyz on a full disk: %d %s, want 503 unavailable", code, body)
	}
	logs := s.log.String()
	if n := strings.Count(logs, "database unavailable: answering 503"); n == 0 || n > 3 {
		t.Fatalf("%d refusals logged %d outage lines, want 1-3 (one per 5 s):\n%s", requests+4, n, logs)
	}
	if !strings.Contains(logs, "53100") {
		t.Fatalf("the outage line does not name the SQLSTATE:\n%s", logs)
	}
	if strings.Contains(logs, "internal error") {
		t.Fatalf("the full disk was logged as internal errors:\n%s", logs)
	}

	// Space freed: writes succeed again at once.
	if _, err := conn.Exec(context.Background(), `DROP FUNCTION test_disk_full() CASCADE`); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.base+"/orders", strings.NewReader(`{"description":"paint the fence","price":"10.00"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create after the disk was freed: %d, want 201", resp.StatusCode)
	}
}

// confirmationToken reads the token out of the last confirmation e-mail the server sent.
func confirmationToken(t *testing.T, mail *smtptest.Server) string {
	t.Helper()
	msgs := mail.Messages()
	if len(msgs) == 0 {
		t.Fatal("no confirmation e-mail")
	}
	msg, err := netmail.ReadMessage(strings.NewReader(msgs[len(msgs)-1].Data))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<pre>([A-Za-z0-9_\-.]+)</pre>`).FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no token in the message:\n%s", body)
	}
	return m[1]
}
