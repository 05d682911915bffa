package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/patience"
)

// moneyProgram uses the orders client generated from the served spec with oapi-codegen's default
// options: it decodes and re-encodes amounts through the generated types, and places orders on
// the server through the generated client, reading them back. It prints one line per check.
const moneyProgram = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"example.com/moneyclient/ordersclient"
)

func main() {
	ctx := context.Background()
	base := os.Getenv("TRIAD_URL")
	for _, amount := range []string{"999999.99", "0.01"} {
		// Decode an order and a user as the server writes them, and encode them again.
		var o ordersclient.Order
		in := ` + "`" + `{"id":1,"description":"d","price":` + "`" + ` + amount + ` + "`" + `,"status":"WAITING","customerId":1,"createdAt":"2026-01-02T10:00:00Z"}` + "`" + `
		if err := json.Unmarshal([]byte(in), &o); err != nil {
			panic(err)
		}
		out, _ := json.Marshal(o)
		var u ordersclient.User
		if err := json.Unmarshal([]byte(` + "`" + `{"id":1,"username":"u","userType":"Customer","balance":` + "`" + ` + amount + ` + "`" + `}` + "`" + `), &u); err != nil {
			panic(err)
		}
		ub, _ := json.Marshal(u)
		// Encode a new order's price both ways the spec takes it.
		var asNumber, asString ordersclient.NewOrder_Price
		if err := asNumber.FromPriceNumber(ordersclient.PriceNumber(amount)); err != nil {
			panic(err)
		}
		if err := asString.FromDecimalString(amount); err != nil {
			panic(err)
		}
		nb, _ := json.Marshal(ordersclient.NewOrder{Description: "d", Price: asNumber})
		sb, _ := json.Marshal(ordersclient.NewOrder{Description: "d", Price: asString})
		fmt.Printf("decode %s order.price=%s user.balance=%s\n", amount, o.Price, u.Balance)
		fmt.Printf("encode %s order=%t user=%t new=%t new=%t\n", amount, exact(out, ` + "`" + `"price":` + "`" + `, amount),
			exact(ub, ` + "`" + `"balance":` + "`" + `, amount), exact(nb, ` + "`" + `"price":` + "`" + `, amount), exact(sb, ` + "`" + `"price":` + "`" + `, ` + "`" + `"` + "`" + `+amount+` + "`" + `"` + "`" + `))
	}

	// Through the server: a new customer places an order of each amount and reads it back.
	api, err := ordersclient.NewClientWithResponses(base)
	if err != nil {
		panic(err)
	}
	name := os.Getenv("TRIAD_USER")
	reg, err := api.RegisterOrdersUserWithResponse(ctx, nil, ordersclient.NewUser{Username: name, Password: "money-password", UserType: ordersclient.Customer})
	if err != nil || reg.JSON201 == nil {
		panic(fmt.Sprint(err, reg.StatusCode(), string(reg.Body)))
	}
	form := url.Values{"grant_type": {"password"}, "username": {name}, "password": {"money-password"},
		"client_id": {os.Getenv("TRIAD_CLIENT_ID")}, "client_secret": {os.Getenv("TRIAD_CLIENT_SECRET")}}
	resp, err := http.PostForm(base+"/oauth/token", form)
	if err != nil {
		panic(err)
	}
	var tok ordersclient.TokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		panic(fmt.Sprint("token: ", resp.Status, err))
	}
	auth := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		return nil
	}
	// A new customer's balance (500.00) funds orders of these two, commission included.
	for _, amount := range []string{"123.45", "0.01"} {
		var price ordersclient.NewOrder_Price
		if err := price.FromPriceNumber(ordersclient.PriceNumber(amount)); err != nil {
			panic(err)
		}
		created, err := api.CreateOrderWithResponse(ctx, nil, ordersclient.NewOrder{Description: "exact", Price: price}, auth)
		if err != nil || created.JSON201 == nil {
			panic(fmt.Sprint(err, created.StatusCode(), string(created.Body)))
		}
		got, err := api.GetOrderWithResponse(ctx, created.JSON201.Id, auth)
		if err != nil || got.JSON200 == nil {
			panic(fmt.Sprint(err, got.StatusCode(), string(got.Body)))
		}
		fmt.Printf("server %s created=%s read=%s\n", amount, created.JSON201.Price, got.JSON200.Price)
	}
}

// exact reports whether the JSON object b holds key with exactly the literal lit.
func exact(b []byte, key, lit string) bool {
	return strings.Contains(string(b), key+lit+",") || strings.Contains(string(b), key+lit+"}")
}
`

// TestGeneratedClients_MoneyIsExact generates clients from the specs the server serves, with each
// generator's default options (oapi-codegen for Go, openapi-typescript for TypeScript), and holds
// amounts to exactness through them: 999999.99 and 0.01 decode and encode to the same decimal, and
// orders placed through the generated Go client (of prices a new customer can fund) read back with
// their prices unchanged. No Go
// client generated from any of the three specs holds a float32 (oapi-codegen's default for a
// number without format).
func TestGeneratedClients_MoneyIsExact(t *testing.T) {
	t.Parallel()
	ensureNodeModules(t)
	id, secret := "triad-orders", "triad-orders-secret"
	srv := startServerArgs(t, []string{"-orders-client-id", id, "-orders-client-secret", secret})
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(6*time.Minute))
	defer cancel()
	dir := t.TempDir()
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s\n%s", name, args, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	// The Go module: this repository's go.mod and go.sum under another name, so its build needs
	// nothing the module cache lacks; the generator is the pinned one (go tool).
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(string(gomod), "module example.com/moneyclient")
	mod = regexp.MustCompile(`(?m)^tool .*$`).ReplaceAllString(mod, "")
	gosum, err := os.ReadFile(filepath.Join(repoRoot, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.mod"), mod)
	write(t, filepath.Join(dir, "go.sum"), string(gosum))
	write(t, filepath.Join(dir, "main.go"), moneyProgram)
	for _, surface := range []string{"orders", "brands", "auth"} {
		spec := fetch(t, srv.URL+"/openapi/"+surface+".yaml")
		pkg := surface + "client"
		out := filepath.Join(dir, pkg, pkg+".gen.go")
		write(t, filepath.Join(dir, pkg, "spec.yaml"), spec)
		// Default options: the client and its models, nothing else.
		write(t, filepath.Join(dir, pkg, "cfg.yaml"), "package: "+pkg+"\noutput: "+out+"\ngenerate: {client: true, models: true}\n")
		run(repoRoot, nil, "go", "tool", "oapi-codegen", "-config", filepath.Join(dir, pkg, "cfg.yaml"), filepath.Join(dir, pkg, "spec.yaml"))
		code, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// A float type anywhere in the code (comments may speak of one).
		if floats := regexp.MustCompile(`(?m)^[^/\n]*\bfloat(32|64)\b.*$`).FindAllString(string(code), -1); len(floats) > 0 {
			t.Errorf("the Go client generated from the served %s spec holds a binary float:\n%s", surface, strings.Join(floats, "\n"))
		}
	}
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "TRIAD_URL=" + srv.URL,
		"TRIAD_USER=" + uniqueName("money"), "TRIAD_CLIENT_ID=" + id, "TRIAD_CLIENT_SECRET=" + secret}
	got := run(dir, env, "go", "run", ".")
	want := `decode 999999.99 order.price=999999.99 user.balance=999999.99
encode 999999.99 order=true user=true new=true new=true
decode 0.01 order.price=0.01 user.balance=0.01
encode 0.01 order=true user=true new=true new=true
server 123.45 created=123.45 read=123.45
server 0.01 created=0.01 read=0.01
`
	if got != want {
		t.Errorf("the generated Go client printed\n%s\nwant\n%s", got, want)
	}

	// TypeScript: openapi-typescript's types from the served spec, a strict tsc, then node.
	ts := filepath.Join(dir, "ts")
	bin := filepath.Join(repoRoot, "node_modules", ".bin")
	run(repoRoot, nil, filepath.Join(bin, "openapi-typescript"), srv.URL+"/openapi/orders.yaml", "-o", filepath.Join(ts, "orders.d.ts"))
	write(t, filepath.Join(ts, "money.ts"), tsMoneyProgram)
	write(t, filepath.Join(ts, "tsconfig.json"), `{"compilerOptions": {"strict": true, "exactOptionalPropertyTypes": true,
  "noUncheckedIndexedAccess": true, "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
  "outDir": "out", "types": ["node"], "typeRoots": ["`+filepath.Join(repoRoot, "node_modules", "@types")+`"]}, "files": ["money.ts"]}`)
	write(t, filepath.Join(ts, "package.json"), `{"type": "module"}`)
	run(ts, nil, filepath.Join(bin, "tsc"), "-p", ".")
	got = run(ts, []string{"TRIAD_URL=" + srv.URL}, "node", filepath.Join("out", "money.js"))
	want = `999999.99 999999.99 {"description":"d","price":"999999.99"}
0.01 0.01 {"description":"d","price":"0.01"}
`
	if got != want {
		t.Errorf("the TypeScript program printed\n%s\nwant\n%s", got, want)
	}
}

// tsMoneyProgram decodes amounts as a TypeScript client of openapi-typescript's types does
// (JSON.parse into the Order and User types) and encodes them again, and builds a new order's
// price as the decimal string the spec advises.
const tsMoneyProgram = `import type { components } from "./orders.js";

type Order = components["schemas"]["Order"];
type User = components["schemas"]["User"];
type NewOrder = components["schemas"]["NewOrder"];

for (const amount of ["999999.99", "0.01"]) {
  const o: Order = JSON.parse('{"id":1,"description":"d","price":' + amount + ',"status":"WAITING","customerId":1,"createdAt":"2026-01-02T10:00:00Z"}');
  const u: User = JSON.parse('{"id":1,"username":"u","userType":"Customer","balance":' + amount + '}');
  const n: NewOrder = { description: "d", price: amount };
  console.log(JSON.stringify(o.price), JSON.stringify(u.balance), JSON.stringify(n));
}
`

// write creates path (and its folder) holding text.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fetch is the body of a GET that must answer 200.
func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}
