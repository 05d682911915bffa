package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar/boltstore"
)

// TestAuthsite_AvatarStoreFromURI runs the site with `-avatars bolt://<file>` (the seed's embedded
// key-value store URI, opened by the library's avatarstore.Open): the demo user's avatar, stored
// at login, is served by the site and, once the site has closed, found in that very file.
func TestAuthsite_AvatarStoreFromURI(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "avatars.db")
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	s, err := newSite(context.Background(), base, 0, "bolt://"+file)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()

	resp, err := http.Post(base+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	var user struct{ Picture string }
	err = json.NewDecoder(resp.Body).Decode(&user)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || !strings.HasPrefix(user.Picture, base+"/avatar/") {
		t.Fatalf("login: %d %v, picture %q", resp.StatusCode, err, user.Picture)
	}
	pic, err := http.Get(user.Picture)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(pic.Body)
	pic.Body.Close()
	if pic.StatusCode != http.StatusOK || pic.Header.Get("Content-Type") != "image/png" || len(body) == 0 {
		t.Fatalf("GET %s: %d %q, %d bytes", user.Picture, pic.StatusCode, pic.Header.Get("Content-Type"), len(body))
	}
	ts.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	kv, err := boltstore.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	ids, err := kv.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if id := path.Base(user.Picture); !slices.Contains(ids, id) {
		t.Fatalf("the bolt file holds %q, not the demo user's avatar %s", ids, id)
	}
}
