package oauthserver

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
)

// loginPageTmpl is the built-in login form. It posts back to the authorization endpoint with the
// validated request's parameters in the action's query, so they travel with the login.
// html/template escapes every value, including the query placed in the action attribute. With
// AnyUser it asks for a user name only and says that this is a development server.
var loginPageTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{if .AnyUser}}dev login{{else}}Sign in{{end}}</title>
<style>body{font-family:sans-serif;max-width:22rem;margin:4rem auto}label,input,button{display:block;width:100%;margin:.4rem 0}</style>
</head>
<body>
{{if .AnyUser}}<h1>Development login</h1>
<p>Any user name logs in. This server exists for development only.</p>
{{else}}<h1>Sign in</h1>
{{end}}<p>Application <strong>{{.ClientID}}</strong> asks to know who you are.</p>
<form method="post" action="{{.Action}}">
<label for="username">User name</label>
<input id="username" name="username" autocomplete="username" required maxlength="64" value="{{.Suggest}}" autofocus>
{{if not .AnyUser}}<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password">
{{end}}<button id="login" type="submit">Sign in</button>
<button id="deny" type="submit" name="deny" value="1">Cancel</button>
</form>
</body>
</html>
`))

// loginPage answers the login page for ar with status: the custom handler when set, else the
// built-in one.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, ar authRequest, status int) {
	w.Header().Set("Cache-Control", "no-store")
	if s.opts.LoginPageHandler != nil {
		if status != http.StatusOK {
			// Writing the status here would freeze the headers before the handler sets its own
			// (Content-Type, cookies); the wrapper applies the status at the handler's first write.
			w = &statusWriter{ResponseWriter: w, status: status}
		}
		s.opts.LoginPageHandler.ServeHTTP(w, r)
		return
	}
	// The page needs its form and inline style, nothing else. form-action names the client's
	// origin too, because browsers apply it to the redirect that follows the POST. The page must
	// not be framed: a hidden frame could click "Sign in" for the user.
	formAction := "'self'"
	if cb, err := url.Parse(ar.redirectURI); err == nil && cb.Scheme != "" && cb.Host != "" {
		formAction += " " + cb.Scheme + "://" + cb.Host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction+"; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	data := struct {
		ClientID, Action, Suggest string
		AnyUser                   bool
	}{ClientID: ar.client.ID, Action: r.URL.Path + "?" + ar.params.Encode(), AnyUser: s.opts.AnyUser}
	if s.opts.AnyUser {
		data.Suggest = s.opts.DefaultUser
	}
	_ = loginPageTmpl.Execute(w, data)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// statusWriter sends status instead of whatever the wrapped handler answers (or its implicit 200).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

// WriteHeader sends the forced status, once.
func (w *statusWriter) WriteHeader(int) {
	if !w.wrote {
		w.wrote = true
		w.ResponseWriter.WriteHeader(w.status)
	}
}

// Write sends the forced status first, if nothing was written yet.
func (w *statusWriter) Write(b []byte) (int, error) {
	w.WriteHeader(w.status)
	return w.ResponseWriter.Write(b)
}
