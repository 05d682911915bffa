package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_OrdersDevData starts the whole server twice in dev mode on one database: the demo
// users of docs/orders.md log in with the dev client, their lists hold orders in every state, and the
// second start adds nothing. Then a prod start on a fresh database has no users.
func TestServer_OrdersDevData(t *testing.T) {
	t.Parallel()
	data, err := api.FS.ReadFile("orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	c := apitest.Client(t, spec)
	call := func(method, u, token string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, u, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	login := func(base, user, pw string) (string, int) {
		q := url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret},
			"username": {user}, "password": {pw}}
		status, b := call("POST", base+"/oauth/token?"+q.Encode(), "")
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.Unmarshal(b, &tok)
		return tok.AccessToken, status
	}
	type page struct {
		Content []struct {
			Status string `json:"status"`
		} `json:"content"`
		Page struct {
			TotalElements int64 `json:"totalElements"`
		} `json:"page"`
	}
	statesOf := func(base string) (map[string]int, int64) {
		states := map[string]int{}
		var waiting int64
		for _, u := range []string{"alice", "carol", "bob", "dave"} {
			tok, status := login(base, u, u+"-password")
			if status != http.StatusOK {
				t.Fatalf("demo user %s cannot log in: %d", u, status)
			}
			status, b := call("GET", base+"/authenticated", tok)
			var me struct {
				ID       int64  `json:"id"`
				UserType string `json:"userType"`
			}
			if status != http.StatusOK || json.Unmarshal(b, &me) != nil {
				t.Fatalf("%s: /authenticated %d %s", u, status, b)
			}
			status, b = call("GET", fmt.Sprintf("%s/users/%d/orders?size=100", base, me.ID), tok)
			var p page
			if status != http.StatusOK || json.Unmarshal(b, &p) != nil {
				t.Fatalf("%s: own orders %d %s", u, status, b)
			}
			if me.UserType == "Customer" {
				for _, o := range p.Content {
					states[o.Status]++
				}
			} else {
				status, b = call("GET", base+"/orders", tok)
				if status != http.StatusOK || json.Unmarshal(b, &p) != nil {
					t.Fatalf("%s: new orders %d %s", u, status, b)
				}
				waiting = p.Page.TotalElements
			}
		}
		return states, waiting
	}

	dbURL := dbtest.NewURL(t)
	base, stop := routerServer(t, "-mode", "dev", "-database-url", dbURL)
	states, waiting := statesOf(base)
	for _, s := range []string{"WAITING", "IN PROGRESS", "READY", "COMPLETED"} {
		if states[s] == 0 {
			t.Errorf("dev data has no %s order: %v", s, states)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	base, _ = routerServer(t, "-mode", "dev", "-database-url", dbURL)
	again, waitingAgain := statesOf(base)
	if fmt.Sprint(again) != fmt.Sprint(states) || waitingAgain != waiting {
		t.Fatalf("restart changed the dev data: %v/%d then %v/%d", states, waiting, again, waitingAgain)
	}

	prod, _ := routerServer(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef")
	q := url.Values{"grant_type": {"password"}, "client_id": {"prod-client"}, "client_secret": {"prod-client-secret-0123456789"},
		"username": {"alice"}, "password": {"alice-password"}}
	if status, b := call("POST", prod+"/oauth/token?"+q.Encode(), ""); status != http.StatusBadRequest {
		t.Fatalf("prod mode has demo users: %d %s", status, b)
	}
}
