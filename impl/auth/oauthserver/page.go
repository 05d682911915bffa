package oauthserver

import (
	"encoding/json"
	"html/template"
	"net/http"
)

// loginPage is the built-in login form. It posts back to the authorization URL with the original
// query string, so the validated request parameters travel with the login. html/template escapes
// every value, including the query string placed in the action attribute.
var loginPageTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in</title>
<style>body{font-family:sans-serif;max-width:22rem;margin:4rem auto}label,input,button{display:block;width:100%;margin:.4rem 0}</style>
</head>
<body>
<h1>Sign in</h1>
<p>Application <strong>{{.ClientID}}</strong> asks to know who you are.</p>
<form method="post" action="{{.Action}}">
<label for="username">User name</label>
<input id="username" name="username" autocomplete="username" required maxlength="64" autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit">Sign in</button>
<button type="submit" name="deny" value="1">Cancel</button>
</form>
</body>
</html>
`))

// loginPage answers the login page with status: the custom handler when set, else the built-in one.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, status int) {
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
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page must not be framed: a hidden frame could click "Sign in" for the user.
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = loginPageTmpl.Execute(w, struct{ ClientID, Action string }{
		ClientID: r.URL.Query().Get("client_id"),
		Action:   s.opts.URL + AuthorizePath + "?" + r.URL.RawQuery,
	})
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
