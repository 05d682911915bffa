package provider

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/triadhq/triad/impl/credentials/clientkey"
	"github.com/triadhq/triad/impl/credentials/fold"
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
	if now == nil {
		now = time.Now
	}
	return &memorySendLimiter{perRecipient: perRecipient, perClient: perClient, window: window, now: now,
		counts: map[string]*sendCount{}}
}

type sendCount struct {
	n   int
	end time.Time
}

type memorySendLimiter struct {
	perRecipient, perClient int
	window                  time.Duration
	now                     func() time.Time

	mu        sync.Mutex
	counts    map[string]*sendCount
	lastSweep time.Time
}

func (m *memorySendLimiter) Allow(_ context.Context, recipient, client string) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	// Ended windows are dropped at most once a second, so a flood of fresh keys costs one pass
	// over the map a second rather than one per message.
	if now.Sub(m.lastSweep) >= time.Second {
		m.lastSweep = now
		for k, c := range m.counts {
			if !now.Before(c.end) {
				delete(m.counts, k)
			}
		}
	}
	to, from := "to|"+RecipientKey(recipient), "from|"+ClientKey(client)
	wait := time.Duration(0)
	for key, limit := range map[string]int{to: m.perRecipient, from: m.perClient} {
		if c := m.counts[key]; c != nil && now.Before(c.end) && c.n >= limit {
			wait = max(wait, c.end.Sub(now))
		}
	}
	if wait > 0 {
		return wait, nil
	}
	for _, key := range []string{to, from} {
		c := m.counts[key]
		if c == nil || !now.Before(c.end) {
			c = &sendCount{end: now.Add(m.window)}
			m.counts[key] = c
		}
		c.n++
	}
	return 0, nil
}
