package auth

import (
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"net/http"
)

// loginPage shows how a browser logs in: it lists the providers (GET list), links each OAuth
// provider's login with from= back to this page, offers a direct-login form, and shows the user
// (GET user with the XSRF header copied from the XSRF cookie, under their configured names).
var loginPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>triad login</title>
<style nonce="{{.Nonce}}">body{font-family:sans-serif;max-width:40em;margin:3em auto}li{margin:.3em 0}code{background:#eee;padding:0 .2em}</style></head>
<body>
<h1>triad auth</h1>
<p id="status">checking…</p>
<h2>Log in with</h2>
<ul id="providers"></ul>
{{if .Direct}}<h2>Direct login</h2>
<form id="direct"><input id="direct-provider" type="hidden" value="{{.Direct}}">
<label>user <input id="direct-user" autocomplete="username"></label>
<label>password <input id="direct-passwd" type="password" autocomplete="current-password"></label>
<button type="submit">Log in</button></form>{{end}}
<p><button id="logout">Log out</button></p>
<script nonce="{{.Nonce}}">
const base = {{.AuthPath}};
const xsrfCookie = {{.XSRFCookie}}, xsrfHeader = {{.XSRFHeader}};
function xsrf() {
  for (const c of document.cookie.split("; ")) {
    const i = c.indexOf("=");
    if (c.slice(0, i) === xsrfCookie) return decodeURIComponent(c.slice(i + 1));
  }
  return "";
}
async function refresh() {
  const r = await fetch(base + "/user", {headers: {[xsrfHeader]: xsrf()}});
  const s = document.getElementById("status");
  if (r.ok) {
    const u = await r.json();
    s.textContent = "logged in as " + u.name + " (" + u.id + ")";
    s.dataset.user = u.name;
  } else {
    s.textContent = "not logged in";
    s.dataset.user = "";
  }
}
async function providers() {
  const list = await (await fetch(base + "/list")).json();
  const ul = document.getElementById("providers");
  for (const p of list) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.id = "login-" + p;
    a.href = base + "/" + encodeURIComponent(p) + "/login?from=" + encodeURIComponent(location.href);
    a.textContent = p;
    li.appendChild(a);
    ul.appendChild(li);
  }
}
const form = document.getElementById("direct");
if (form) form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const p = document.getElementById("direct-provider").value;
  await fetch(base + "/" + encodeURIComponent(p) + "/login", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({user: document.getElementById("direct-user").value, passwd: document.getElementById("direct-passwd").value})});
  refresh();
});
document.getElementById("logout").addEventListener("click", async () => {
  // With the XSRF header the logout proves the session, which it then ends for good.
  await fetch(base + "/logout", {method: "POST", headers: {[xsrfHeader]: xsrf()}});
  refresh();
});
providers();
refresh();
</script>
</body></html>`))

// LoginPage returns a small HTML page showing how a browser logs in through this service: links
// to each provider's login, a form for the direct provider named direct (hidden when ""), the
// current user and a logout button. Mount it where a browser can reach it, e.g. at AuthPath + "/".
// Its CSP allows only its own nonce-tagged script and style and requests to this origin.
func (s *Service) LoginPage(direct string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		nonce := base64.StdEncoding.EncodeToString(b[:])
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+"'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		_ = loginPage.Execute(w, map[string]string{"Nonce": nonce, "AuthPath": s.opts.AuthPath, "Direct": direct,
			"XSRFCookie": s.jwt.XSRFCookieName, "XSRFHeader": s.jwt.XSRFHeaderKey})
	})
}
