package provider

import (
	"context"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/credentials/clientkey"
	"github.com/triadhq/triad/impl/credentials/fold"
	"github.com/triadhq/triad/impl/credentials/windowcount"
)

// SendLimiter bounds the confirmation messages verified providers send, so that the login form is
// no relay: an anonymous caller names the recipient, and without a bound could send it any number
// of messages (or send one each to any number of recipients). Implementations are safe for
// concurrent use; replicas behind a load balancer need a shared one (the reference server counts
// in PostgreSQL), or each replica grants the whole allowance again.
type SendLimiter interface {
	// Allow counts one message to recipient (normalized by RecipientKey) requested by client
	// (http.Request.RemoteAddr), or refuses it: wait > 0 is how long until the window that
	// refuses it ends, and then nothing is counted. An error means nothing was counted either.
	Allow(ctx context.Context, recipient, client string) (wait time.Duration, err error)
}

// Defaults of the in-memory SendLimiter (NewMemorySendLimiter with zero values), also the reference
// server's defaults: five messages to one recipient in 15 minutes however many clients ask, and
// 30 asked by one client address (its /64 for IPv6) in 15 minutes over any recipients.
const (
	DefaultSendsPerRecipient = 5
	DefaultSendsPerClient    = 30
	DefaultSendWindow        = 15 * time.Minute
)

// RecipientKey is the form of an address a SendLimiter counts under, so that every spelling of one
// mailbox is one recipient with one allowance: trimmed, NFKC-normalized and case-folded
// (fold.Name: upper case and fullwidth letters, and a fullwidth @ or +, are the same mailbox in
// practice), without a "+tag" in the local part (most mail systems deliver victim+1@ to victim@),
// the domain in its one form (fold.Domain: IDNA's UTS #46 mapping to Punycode, so bücher.example
// is xn--bcher-kva.example, the full-stop variants such as 。 as ".", no final dot), and for Gmail, which ignores dots in the local part and serves
// googlemail.com as gmail.com, j.a.n.e.doe@googlemail.com as janedoe@gmail.com.
func RecipientKey(address string) string {
	a := fold.Name(address)
	at := strings.LastIndexByte(a, '@')
	if at < 0 {
		return a
	}
	local, domain := a[:at], fold.Domain(a[at+1:])
	if plus := strings.IndexByte(local, '+'); plus > 0 {
		local = local[:plus]
	}
	if domain == "googlemail.com" {
		domain = "gmail.com"
	}
	if domain == "gmail.com" {
		local = strings.ReplaceAll(local, ".", "")
	}
	return local + "@" + domain
}

// ClientKey is the client a SendLimiter counts under: the address of remoteAddr
// (http.Request.RemoteAddr), an IPv6 one by its /64 (one host commonly holds a whole /64), or
// remoteAddr itself when it is not host:port.
func ClientKey(remoteAddr string) string { return clientkey.Net(remoteAddr) }

// NewMemorySendLimiter returns the in-process SendLimiter: at most perRecipient messages to one
// recipient and perClient requested by one client in each window (fixed, from the first message
// counted). Zero values take the defaults. now is the clock; nil means time.Now.
func NewMemorySendLimiter(perRecipient, perClient int, window time.Duration, now func() time.Time) SendLimiter {
	if perRecipient <= 0 {
		perRecipient = DefaultSendsPerRecipient
	}
	if perClient <= 0 {
		perClient = DefaultSendsPerClient
	}
	if window <= 0 {
		window = DefaultSendWindow
	}
	return &memorySendLimiter{perRecipient: perRecipient, perClient: perClient, counts: windowcount.New(window, now)}
}

type memorySendLimiter struct {
	perRecipient, perClient int
	counts                  *windowcount.Counter
}

func (m *memorySendLimiter) Allow(_ context.Context, recipient, client string) (time.Duration, error) {
	_, wait := m.counts.Reserve(windowcount.Limit{Key: "to|" + RecipientKey(recipient), Max: m.perRecipient},
		windowcount.Limit{Key: "from|" + ClientKey(client), Max: m.perClient})
	return wait, nil
}
