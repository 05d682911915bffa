package password

import (
	"context"
	"slices"
)

// The clients' lines of a Hasher: each client's share of the places, its line of waiting calls and
// the hand-over of a place given back (WithClient, WithSubLine).

// SetClientLine sets how many calls of one client may wait for its share beyond those that hold
// it (DefaultClientLine; 0 refuses every call over the share at once). Call it before any use.
func (h *Hasher) SetClientLine(n int) { h.clientLine = max(0, n) }

// enter takes one of the perClient places of ctx's client (running, queued or admitted by
// Admit), waiting in the client's line while they are all taken; leave gives it back. A call that
// finds the client's line full is refused with ErrClientBusy, one that finds every client's lines
// full (linesMax) with ErrBusy, and one whose ctx ends while waiting with ctx's error.
//
// A place given back goes to the waiting call of the sub-line (WithSubLine) with the fewest calls
// holding or waiting for places, the earliest of those: calls without a sub-line are one line,
// served first come, first served. So among the device logins of one address, an account that
// sends one login at a time (a real user) takes the next place that frees, ahead of accounts that
// keep several waiting (a flood of farmed accounts): it waits for at most one of the places'
// calls to end, while the flood still shares the address's places whatever its accounts.
func (h *Hasher) enter(ctx context.Context) (leave func(), err error) {
	name, _ := ctx.Value(clientKey{}).(string)
	if name == "" {
		return func() {}, nil
	}
	sub, _ := ctx.Value(subLineKey{}).(string)
	h.mu.Lock()
	c := h.clients[name]
	if c == nil {
		c = &client{sublines: map[string]int{}, active: map[string]int{}}
		h.clients[name] = c
	}
	leave = func() {
		h.mu.Lock()
		h.handOn(name, c, sub)
		h.mu.Unlock()
	}
	if c.held < h.perClient && len(c.line) == 0 {
		c.held++
		c.active[sub]++
		c.refs++
		h.mu.Unlock()
		return leave, nil
	}
	// Every place of the client is taken (or promised to a waiter), so c has refs and stays.
	if sub == "" && c.waiting >= h.clientLine || sub != "" && c.sublines[sub] >= SubLine {
		h.mu.Unlock()
		return nil, ErrClientBusy
	}
	if h.lines >= h.linesMax {
		h.mu.Unlock()
		return nil, ErrBusy
	}
	w := &waiter{sub: sub, ready: make(chan struct{})}
	c.line = append(c.line, w)
	if sub == "" {
		c.waiting++
	}
	c.sublines[sub]++
	c.refs++
	h.lines++
	h.mu.Unlock()
	select {
	case <-w.ready:
		return leave, nil
	case <-ctx.Done():
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.given {
		// The place came as ctx ended: it is this call's, so pass it on.
		h.handOn(name, c, sub)
		return nil, ctx.Err()
	}
	c.line = slices.DeleteFunc(c.line, func(x *waiter) bool { return x == w })
	h.unwait(c, w)
	h.unref(name, c)
	return nil, ctx.Err()
}

// unwait counts w, leaving c's line, out of the line counts; h.mu is held.
func (h *Hasher) unwait(c *client, w *waiter) {
	if w.sub == "" {
		c.waiting--
	}
	if c.sublines[w.sub]--; c.sublines[w.sub] == 0 {
		delete(c.sublines, w.sub)
	}
	h.lines--
}

// handOn gives back the place of a call of sub: to the waiter whose sub-line has the fewest calls
// holding or waiting (the earliest of those), or to the client's free places when none waits;
// h.mu is held.
func (h *Hasher) handOn(name string, c *client, sub string) {
	if c.active[sub]--; c.active[sub] == 0 {
		delete(c.active, sub)
	}
	h.unref(name, c)
	if len(c.line) == 0 {
		c.held--
		return
	}
	best, load := 0, -1
	for i, w := range c.line {
		if l := c.active[w.sub] + c.sublines[w.sub]; load < 0 || l < load {
			best, load = i, l
		}
	}
	w := c.line[best]
	c.line = slices.Delete(c.line, best, best+1)
	h.unwait(c, w)
	c.active[w.sub]++
	w.given = true
	close(w.ready)
}

// unref drops one reference to c, deleting the client once nothing holds or waits; h.mu is held.
func (h *Hasher) unref(name string, c *client) {
	if c.refs--; c.refs == 0 {
		delete(h.clients, name)
	}
}
