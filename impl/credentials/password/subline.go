package password

import "context"

// SubLine is how many calls of one sub-line (WithSubLine) may wait for their client's places.
const SubLine = 2

type subLineKey struct{}

// WithSubLine gives ctx's calls a line of their own inside their client's (WithClient): they
// share the client's places, but wait in a line of SubLine per sub-line instead of the client's
// one line. The device logins of one address share its places (impl/credentials/loginguard) and
// each account's wait in its own line, so one account's flood of logins fills its own line and is
// refused (ErrClientBusy) while another account's login at that address waits its turn; and a
// place given back goes to the sub-line with the fewest calls holding or waiting, so an account
// with one login waiting takes the next place ahead of accounts that keep several waiting.
func WithSubLine(ctx context.Context, line string) context.Context {
	return context.WithValue(ctx, subLineKey{}, line)
}
