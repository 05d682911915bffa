package oauth1_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/oauth1"
)

// TestSignature_KnownVector checks the HMAC-SHA1 signature against the worked example of the
// OAuth Core 1.0 specification (Appendix A.5), which RFC 5849 keeps unchanged.
func TestSignature_KnownVector(t *testing.T) {
	u, _ := url.Parse("http://photos.example.net/photos?file=vacation.jpg&size=original")
	p := url.Values{
		"oauth_consumer_key":     {"dpf43f3p2l4k3l03"},
		"oauth_token":            {"nnch734d00sl2jdk"},
		"oauth_signature_method": {"HMAC-SHA1"},
		"oauth_timestamp":        {"1191242096"},
		"oauth_nonce":            {"kllo9940pd9333jh"},
		"oauth_version":          {"1.0"},
	}
	got := oauth1.Signature("GET", u, p, nil, "kd94hf93k423kf44", "pfkkdhi9sl3r4s00")
	if want := "tR3+Ty81lMeYAr/Fid0kMTYa/WM="; got != want {
		t.Fatalf("signature %q, want %q\nbase %s", got, want, oauth1.BaseString("GET", u, p, nil))
	}
}

func TestEscape_RFC3986(t *testing.T) {
	for in, want := range map[string]string{
		"abcABC123-._~": "abcABC123-._~",
		"a b":           "a%20b",
		"a+b=c&d":       "a%2Bb%3Dc%26d",
		"ü":             "%C3%BC",
		"*'()!":         "%2A%27%28%29%21",
	} {
		if got := oauth1.Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseString_NormalizesURI(t *testing.T) {
	u, _ := url.Parse("HTTP://Example.COM:80/r%20v/X?b5=%3D%253D&a3=a&c%40=&a2=r%20b")
	p := url.Values{"oauth_consumer_key": {"9djdj82h48djs9d2"}}
	got := oauth1.BaseString("post", u, p, url.Values{"c2": {""}, "a3": {"2 q"}})
	want := "POST&http%3A%2F%2Fexample.com%2Fr%2520v%2FX&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2"
	if got != want {
		t.Fatalf("base string\n got %s\nwant %s", got, want)
	}
}

func TestParseAuthorization(t *testing.T) {
	v, err := oauth1.ParseAuthorization(`OAuth oauth_consumer_key="ck", oauth_signature="a%2Bb%3D", oauth_callback="http%3A%2F%2Fx%2Fcb"`)
	if err != nil {
		t.Fatal(err)
	}
	if v.Get("oauth_signature") != "a+b=" || v.Get("oauth_callback") != "http://x/cb" || v.Get("oauth_consumer_key") != "ck" {
		t.Fatalf("parsed %v", v)
	}
	if _, err := oauth1.ParseAuthorization("Bearer x"); err == nil {
		t.Fatal("accepted a bearer header")
	}
}

// TestRequestToken_RequiresCallbackConfirmed: an OAuth 1.0 (not 1.0a) server that does not
// confirm the callback is refused (RFC 5849 §2.1), and a refusal status is an error.
func TestRequestToken_RequiresCallbackConfirmed(t *testing.T) {
	t.Parallel()
	answers := map[string]struct {
		status int
		body   string
		want   error
	}{
		"/confirmed":   {200, "oauth_token=t&oauth_token_secret=s&oauth_callback_confirmed=true", nil},
		"/unconfirmed": {200, "oauth_token=t&oauth_token_secret=s", oauth1.ErrCallbackNotConfirmed},
		"/refused":     {401, `{"errors":[{"code":32,"message":"Could not authenticate you."}]}`, nil},
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := oauth1.ParseAuthorization(r.Header.Get("Authorization"))
		if err != nil || p.Get("oauth_callback") != "http://site.example/auth/twitter/callback" || p.Get("oauth_signature") == "" {
			http.Error(w, "bad authorization header", http.StatusBadRequest)
			return
		}
		a := answers[r.URL.Path]
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	defer ts.Close()
	for path, a := range answers {
		c := &oauth1.Config{ConsumerKey: "ck", ConsumerSecret: "cs", RequestTokenURL: ts.URL + path,
			HTTPClient:  outbound.New(outbound.Options{AllowPrivate: true}), // ts is on loopback
			CallbackURL: "http://site.example/auth/twitter/callback"}
		cr, err := c.RequestToken(context.Background())
		switch {
		case a.status != 200 && err == nil:
			t.Errorf("%s: accepted a %d", path, a.status)
		case a.want != nil && !errors.Is(err, a.want):
			t.Errorf("%s: %v, want %v", path, err, a.want)
		case a.status == 200 && a.want == nil && (err != nil || cr != oauth1.Credentials{Token: "t", Secret: "s"}):
			t.Errorf("%s: %+v %v", path, cr, err)
		}
	}
}
